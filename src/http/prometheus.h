// PrometheusText: a writer of the Prometheus text exposition format (version 0.0.4), as
// GET /metrics of `pagereel serve` and of `pagereel live` answer it: families with their
// HELP and TYPE lines, samples with labels (label values escaped), histograms.
//
// One writer belongs to one thread.
#ifndef PAGEREEL_HTTP_PROMETHEUS_H_
#define PAGEREEL_HTTP_PROMETHEUS_H_

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagereel::http {

class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // Fractional values are written with `significant_digits` ("%.9g" by default). The
  // capture service has always written 6 and its scrapers' figures are kept that way.
  explicit PrometheusText(int significant_digits = 9) : digits_(significant_digits) {}

  // Starts a family: its "# HELP" and "# TYPE" lines (type: counter, gauge, histogram).
  void Family(std::string_view name, std::string_view type, std::string_view help);

  // One sample line: `name{labels} value`.
  void Sample(std::string_view name, const Labels& labels, double value);
  template <std::integral T>
  void Sample(std::string_view name, const Labels& labels, T value) {
    Write(name, labels, std::to_string(static_cast<int64_t>(value)));
  }

  // A histogram's samples: name_bucket for each upper bound in `bounds` (with `cumulative`,
  // the observations at or below it, as le="bound") and for +Inf, then name_sum and
  // name_count. REQUIRES: bounds.size() == cumulative.size().
  void Histogram(std::string_view name, const Labels& labels, std::span<const double> bounds,
                 std::span<const int64_t> cumulative, int64_t count, double sum);

  // The text written so far; the writer is empty afterwards.
  std::string Take() { return std::move(out_); }

 private:
  std::string Number(double value) const;
  void Write(std::string_view name, const Labels& labels, const std::string& value);

  const int digits_;
  std::string out_;
};

}  // namespace pagereel::http

#endif  // PAGEREEL_HTTP_PROMETHEUS_H_
