// Small order statistics used by the probe's reports. Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_STATS_H_
#define PAGEREEL_PROBE_STATS_H_

#include <cstdint>
#include <span>
#include <vector>

namespace pagereel::probe {

// The q-quantile (0 <= q <= 1) of `sorted` by the nearest-rank rule; 0 when empty.
// REQUIRES: `sorted` is in ascending order.
double Quantile(std::span<const double> sorted, double q);

// Log-scale histogram of non-negative nanosecond values with power-of-two microsecond
// bucket edges: [0,1us), [1,2us), [2,4us), ... [2^k us, inf).
struct LogHistogram {
  struct Bucket {
    int64_t lower_ns;  // Inclusive.
    int64_t upper_ns;  // Exclusive; -1 for the open last bucket.
    int64_t count;
  };
  std::vector<Bucket> buckets;  // Trailing empty buckets are dropped.
};
LogHistogram MakeLogHistogram(std::span<const int64_t> values_ns);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_STATS_H_
