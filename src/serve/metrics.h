// Metrics: what the service counts, rendered as Prometheus text (GET /metrics) and as
// JSON (GET /v1/status). Thread-safe.
#ifndef PAGEREEL_SERVE_METRICS_H_
#define PAGEREEL_SERVE_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace pagereel::serve {

// Durations in seconds, counted into fixed buckets.
class Histogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                     1,    2.5,   5,    10,  30,   120};
  void Observe(double seconds);
  // Appends the histogram's lines, for a metric `name` with `labels` ("" or `a="b",...`).
  void Render(const std::string& name, const std::string& labels, std::string& out) const;
  int64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::array<int64_t, kBounds.size()> buckets_{};
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

  std::string Prometheus(const Gauges& gauges) const;
  std::string Json(const Gauges& gauges) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, Histogram> captures_;  // Guarded by mu_.
  Histogram waits_;                                            // Guarded by mu_.
  std::map<std::string, int64_t> refused_;                     // Guarded by mu_.
  int64_t egress_refused_ = 0;                                 // Guarded by mu_.
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_METRICS_H_
