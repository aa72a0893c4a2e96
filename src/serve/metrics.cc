#include "serve/metrics.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace pagereel::serve {

namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void Line(std::string& out, const std::string& name, const std::string& labels, const std::string& value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + value + "\n";
}

void Help(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void Histogram::Observe(double seconds) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (seconds <= bounds_[i]) ++buckets_[i];
  }
  ++count_;
  sum_ += seconds;
  max_ = std::max(max_, seconds);
}

int64_t Histogram::CountAbove(double bound) const {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (bounds_[i] == bound) return count_ - buckets_[i];
  }
  return 0;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string& out) const {
  std::string sep = labels.empty() ? "" : labels + ",";
  for (size_t i = 0; i < bounds_.size(); ++i) {
    Line(out, name + "_bucket", sep + "le=\"" + Num(bounds_[i]) + "\"", std::to_string(buckets_[i]));
  }
  Line(out, name + "_bucket", sep + "le=\"+Inf\"", std::to_string(count_));
  Line(out, name + "_sum", labels, Num(sum_));
  Line(out, name + "_count", labels, std::to_string(count_));
}

void Metrics::CaptureDone(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  captures_[{route, status}].Observe(seconds);
}

void Metrics::Waited(double seconds) {
  std::lock_guard lock(mu_);
  waits_.Observe(seconds);
}

void Metrics::Refused(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++refused_[reason];
}

void Metrics::EgressRefused() {
  std::lock_guard lock(mu_);
  ++egress_refused_;
}

void Metrics::HttpLag(double seconds) {
  std::lock_guard lock(mu_);
  http_lag_.Observe(seconds);
}

std::string Metrics::Prometheus(const Gauges& g) const {
  std::lock_guard lock(mu_);
  std::string out;
  Help(out, "pagereel_capture_duration_seconds", "histogram",
       "Time from a capture request's arrival to its answer, by route and HTTP status (499: client left).");
  for (const auto& [key, histogram] : captures_) {
    histogram.Render("pagereel_capture_duration_seconds",
                     "route=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"", out);
  }
  Help(out, "pagereel_queue_wait_seconds", "histogram", "Time captures waited for a free browser.");
  waits_.Render("pagereel_queue_wait_seconds", "", out);
  Help(out, "pagereel_refused_total", "counter", "Captures refused with 503, by reason.");
  for (const char* reason : {"queue_full", "wait_timeout", "shutting_down"}) {
    auto it = refused_.find(reason);
    Line(out, "pagereel_refused_total", std::string("reason=\"") + reason + "\"",
         std::to_string(it == refused_.end() ? 0 : it->second));
  }
  Help(out, "pagereel_egress_refused_total", "counter", "Requests of pages refused by the egress policy.");
  Line(out, "pagereel_egress_refused_total", "", std::to_string(egress_refused_));
  Help(out, "pagereel_http_thread_lag_seconds", "histogram",
       "How late the HTTP thread's 20 ms heartbeat ran (what a request waits before it is read).");
  http_lag_.Render("pagereel_http_thread_lag_seconds", "", out);
  Help(out, "pagereel_capacity", "gauge", "Captures that can run at once (browsers x per browser).");
  Line(out, "pagereel_capacity", "", std::to_string(g.capacity));
  Help(out, "pagereel_captures_running", "gauge", "Captures running now.");
  Line(out, "pagereel_captures_running", "", std::to_string(g.running));
  Help(out, "pagereel_queue_depth", "gauge", "Captures waiting for a free browser.");
  Line(out, "pagereel_queue_depth", "", std::to_string(g.waiting));
  Help(out, "pagereel_browsers", "gauge", "Browser processes running (retiring ones included).");
  Line(out, "pagereel_browsers", "", std::to_string(g.browsers));
  Help(out, "pagereel_browser_contexts_open", "gauge", "Browser contexts open (one per running capture).");
  Line(out, "pagereel_browser_contexts_open", "", std::to_string(g.contexts_open));
  Help(out, "pagereel_browser_restarts_total", "counter", "Browsers started after the first, by reason.");
  Line(out, "pagereel_browser_restarts_total", "reason=\"crash\"", std::to_string(g.browsers_crashed));
  Line(out, "pagereel_browser_restarts_total", "reason=\"recycle\"", std::to_string(g.browsers_recycled));
  Help(out, "pagereel_resident_memory_bytes", "gauge", "Resident memory of pagereel and of its browsers.");
  Line(out, "pagereel_resident_memory_bytes", "process=\"pagereel\"", std::to_string(g.self_rss_bytes));
  Line(out, "pagereel_resident_memory_bytes", "process=\"browsers\"", std::to_string(g.browsers_rss_bytes));
  return out;
}

std::string Metrics::Json(const Gauges& g) const {
  std::lock_guard lock(mu_);
  nlohmann::json captures = nlohmann::json::object();
  int64_t total = 0;
  for (const auto& [key, histogram] : captures_) {
    captures[key.first][std::to_string(key.second)] = histogram.count();
    total += histogram.count();
  }
  nlohmann::json j = {
      {"ready", g.ready},
      {"capacity", g.capacity},
      {"running", g.running},
      {"waiting", g.waiting},
      {"browsers", g.browsers},
      {"contexts_open", g.contexts_open},
      {"browser_restarts", {{"crash", g.browsers_crashed}, {"recycle", g.browsers_recycled}}},
      {"resident_memory_bytes", {{"pagereel", g.self_rss_bytes}, {"browsers", g.browsers_rss_bytes}}},
      {"captures", captures},
      {"captures_total", total},
      {"refused", refused_},
      {"egress_refused", egress_refused_},
      {"queue_wait_seconds", {{"count", waits_.count()}, {"sum", waits_.sum()}}},
      {"http_thread_lag", {{"beats", http_lag_.count()},
                           {"over_1ms", http_lag_.CountAbove(0.001)},
                           {"max_ms", http_lag_.max() * 1000}}},
  };
  return j.dump(2) + "\n";
}

}  // namespace pagereel::serve
