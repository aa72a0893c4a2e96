// Metrics: what the service counts, rendered as Prometheus text (GET /metrics) and as
// JSON (GET /v1/status). Thread-safe.
#ifndef PAGEREEL_SERVE_METRICS_H_
#define PAGEREEL_SERVE_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "base/mutex.h"
#include "http/prometheus.h"

namespace pagereel::serve {

// Durations in seconds, counted into fixed buckets.
class Histogram {
 public:
  // For captures and queue waits.
  static constexpr std::array<double, 12> kBounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                     1,    2.5,   5,    10,  30,   120};
  // For the HTTP thread's lag: 100 us to 100 ms.
  static constexpr std::array<double, 12> kFineBounds = {0.0001, 0.00025, 0.0005, 0.001,
                                                         0.002,  0.005,   0.01,   0.02,
                                                         0.05,   0.1,     0.25,   1};
  explicit Histogram(const std::array<double, 12>& bounds = kBounds) : bounds_(bounds) {}
  void Observe(double seconds);
  // Writes the histogram's samples, for a metric `name` with `labels`.
  void Render(const std::string& name, const http::PrometheusText::Labels& labels,
              http::PrometheusText& out) const;
  int64_t count() const { return count_; }
  double sum() const { return sum_; }
  double max() const { return max_; }
  // Observations above `bound`, which must be one of the bounds.
  int64_t CountAbove(double bound) const;

 private:
  std::array<double, 12> bounds_;
  std::array<int64_t, 12> buckets_{};
  double max_ = 0;
  int64_t count_ = 0;
  double sum_ = 0;
};

// Gauges read when the metrics are rendered.
struct Gauges {
  int capacity = 0;
  int running = 0;
  int waiting = 0;
  int browsers = 0;
  int64_t contexts_open = 0;
  int64_t browsers_launched = 0;
  int64_t browsers_crashed = 0;
  int64_t browsers_recycled = 0;
  int64_t self_rss_bytes = 0;
  int64_t browsers_rss_bytes = 0;
  int connections = 0;  // Client connections open.
  bool ready = false;
};

class Metrics {
 public:
  // One finished request of a capture route; `outcome` is its HTTP status (499: the client
  // left).
  void CaptureDone(const std::string& route, int status, double seconds);
  void Waited(double seconds);
  void Refused(const std::string& reason);  // "queue_full", "wait_timeout", "shutting_down".
  void EgressRefused();
  // A screenshot Chromium never answered, taken again in a fresh context.
  void ScreenshotRetried();
  // The sound of one MP4 or WebM clip that looked for it: the sounds mixed into its audio
  // track (0: none, or the clip failed) and the sounds left out.
  void ClipSound(int64_t mixed, int64_t left_out);
  // A client connection answered 503 and closed at once: the service had its most open.
  void ConnectionRefused();
  // accept() failed for want of descriptors or memory; the service waits before it tries again.
  void AcceptFailed();
  // How late the HTTP thread's 20 ms heartbeat ran: the time any request waits for it.
  void HttpLag(double seconds);

  std::string Prometheus(const Gauges& gauges) const;
  std::string Json(const Gauges& gauges) const;

 private:
  mutable Mutex mu_;
  std::map<std::pair<std::string, int>, Histogram> captures_ GUARDED_BY(mu_);
  Histogram waits_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> refused_ GUARDED_BY(mu_);
  int64_t egress_refused_ GUARDED_BY(mu_) = 0;
  int64_t screenshot_retries_ GUARDED_BY(mu_) = 0;
  int64_t clips_with_sound_ GUARDED_BY(mu_) = 0;
  int64_t clip_sounds_mixed_ GUARDED_BY(mu_) = 0;
  int64_t clip_sounds_left_out_ GUARDED_BY(mu_) = 0;
  int64_t connections_refused_ GUARDED_BY(mu_) = 0;
  int64_t accept_failures_ GUARDED_BY(mu_) = 0;
  Histogram http_lag_ GUARDED_BY(mu_){Histogram::kFineBounds};
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_METRICS_H_
