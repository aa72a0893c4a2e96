#include "serve/metrics.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace pagereel::serve {

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

void Histogram::Render(const std::string& name, const http::PrometheusText::Labels& labels,
                       http::PrometheusText& out) const {
  out.Histogram(name, labels, bounds_, buckets_, count_, sum_);
}

void Metrics::CaptureDone(const std::string& route, int status, double seconds) {
  MutexLock lock(&mu_);
  captures_[{route, status}].Observe(seconds);
}

void Metrics::Waited(double seconds) {
  MutexLock lock(&mu_);
  waits_.Observe(seconds);
}

void Metrics::Refused(const std::string& reason) {
  MutexLock lock(&mu_);
  ++refused_[reason];
}

void Metrics::EgressRefused() {
  MutexLock lock(&mu_);
  ++egress_refused_;
}

void Metrics::ScreenshotRetried() {
  MutexLock lock(&mu_);
  ++screenshot_retries_;
}

void Metrics::ClipSound(int64_t mixed, int64_t left_out) {
  MutexLock lock(&mu_);
  if (mixed > 0) ++clips_with_sound_;
  clip_sounds_mixed_ += mixed;
  clip_sounds_left_out_ += left_out;
}

void Metrics::ConnectionRefused() {
  MutexLock lock(&mu_);
  ++connections_refused_;
}

void Metrics::AcceptFailed() {
  MutexLock lock(&mu_);
  ++accept_failures_;
}

void Metrics::HttpLag(double seconds) {
  MutexLock lock(&mu_);
  http_lag_.Observe(seconds);
}

std::string Metrics::Prometheus(const Gauges& g) const {
  MutexLock lock(&mu_);
  // Six significant digits, as this service has always written its sums and bounds.
  http::PrometheusText p(6);
  p.Family("pagereel_capture_duration_seconds", "histogram",
           "Time from a capture request's arrival to its answer, by route and HTTP status (499: "
           "client left).");
  for (const auto& [key, histogram] : captures_) {
    histogram.Render("pagereel_capture_duration_seconds",
                     {{"route", key.first}, {"status", std::to_string(key.second)}}, p);
  }
  p.Family("pagereel_queue_wait_seconds", "histogram", "Time captures waited for a free browser.");
  waits_.Render("pagereel_queue_wait_seconds", {}, p);
  p.Family("pagereel_refused_total", "counter", "Captures refused with 503, by reason.");
  for (const char* reason : {"queue_full", "wait_timeout", "shutting_down"}) {
    auto it = refused_.find(reason);
    p.Sample("pagereel_refused_total", {{"reason", reason}},
             it == refused_.end() ? int64_t{0} : it->second);
  }
  p.Family("pagereel_egress_refused_total", "counter",
           "Requests of pages refused by the egress policy.");
  p.Sample("pagereel_egress_refused_total", {}, egress_refused_);
  p.Family("pagereel_screenshot_retries_total", "counter",
           "Screenshots Chromium never answered, taken again in a fresh context.");
  p.Sample("pagereel_screenshot_retries_total", {}, screenshot_retries_);
  p.Family("pagereel_clips_with_sound_total", "counter",
           "MP4 and WebM clips answered with an audio track.");
  p.Sample("pagereel_clips_with_sound_total", {}, clips_with_sound_);
  p.Family("pagereel_clip_sounds_total", "counter",
           "Sounds of clips' pages: mixed into the clip, or left out (refused, missing, over "
           "the media cap, undecodable, a MediaStream...).");
  p.Sample("pagereel_clip_sounds_total", {{"outcome", "mixed"}}, clip_sounds_mixed_);
  p.Sample("pagereel_clip_sounds_total", {{"outcome", "left_out"}}, clip_sounds_left_out_);
  p.Family("pagereel_connections", "gauge", "Client connections open.");
  p.Sample("pagereel_connections", {}, g.connections);
  p.Family("pagereel_connections_refused_total", "counter",
           "Client connections answered 503 and closed at once: the most were open.");
  p.Sample("pagereel_connections_refused_total", {}, connections_refused_);
  p.Family("pagereel_accept_failures_total", "counter",
           "Connections that could not be accepted for want of descriptors or memory (each "
           "followed by a pause before the next try).");
  p.Sample("pagereel_accept_failures_total", {}, accept_failures_);
  p.Family("pagereel_http_thread_lag_seconds", "histogram",
           "How late the HTTP thread's 20 ms heartbeat ran (what a request waits before it is "
           "read).");
  http_lag_.Render("pagereel_http_thread_lag_seconds", {}, p);
  p.Family("pagereel_capacity", "gauge", "Captures that can run at once (browsers x per browser).");
  p.Sample("pagereel_capacity", {}, g.capacity);
  p.Family("pagereel_captures_running", "gauge", "Captures running now.");
  p.Sample("pagereel_captures_running", {}, g.running);
  p.Family("pagereel_queue_depth", "gauge", "Captures waiting for a free browser.");
  p.Sample("pagereel_queue_depth", {}, g.waiting);
  p.Family("pagereel_browsers", "gauge", "Browser processes running (retiring ones included).");
  p.Sample("pagereel_browsers", {}, g.browsers);
  p.Family("pagereel_browser_contexts_open", "gauge",
           "Browser contexts open (one per running capture).");
  p.Sample("pagereel_browser_contexts_open", {}, g.contexts_open);
  p.Family("pagereel_browser_restarts_total", "counter",
           "Browsers started after the first, by reason.");
  p.Sample("pagereel_browser_restarts_total", {{"reason", "crash"}}, g.browsers_crashed);
  p.Sample("pagereel_browser_restarts_total", {{"reason", "recycle"}}, g.browsers_recycled);
  p.Family("pagereel_resident_memory_bytes", "gauge",
           "Resident memory of pagereel and of its browsers.");
  p.Sample("pagereel_resident_memory_bytes", {{"process", "pagereel"}}, g.self_rss_bytes);
  p.Sample("pagereel_resident_memory_bytes", {{"process", "browsers"}}, g.browsers_rss_bytes);
  return p.Take();
}

std::string Metrics::Json(const Gauges& g) const {
  MutexLock lock(&mu_);
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
      {"resident_memory_bytes",
       {{"pagereel", g.self_rss_bytes}, {"browsers", g.browsers_rss_bytes}}},
      {"captures", captures},
      {"captures_total", total},
      {"refused", refused_},
      {"egress_refused", egress_refused_},
      {"screenshot_retries", screenshot_retries_},
      {"clip_sounds",
       {{"clips_with_sound", clips_with_sound_},
        {"mixed", clip_sounds_mixed_},
        {"left_out", clip_sounds_left_out_}}},
      {"connections",
       {{"open", g.connections},
        {"refused", connections_refused_},
        {"accept_failures", accept_failures_}}},
      {"queue_wait_seconds", {{"count", waits_.count()}, {"sum", waits_.sum()}}},
      {"http_thread_lag",
       {{"beats", http_lag_.count()},
        {"over_1ms", http_lag_.CountAbove(0.001)},
        {"max_ms", http_lag_.max() * 1000}}},
  };
  return j.dump(2) + "\n";
}

}  // namespace pagereel::serve
