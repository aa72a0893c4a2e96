#include "probe/stats.h"

#include <algorithm>
#include <cmath>

namespace pagereel::probe {

double Quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

LogHistogram MakeLogHistogram(std::span<const int64_t> values_ns) {
  // Bucket 0 is [0, 1us); bucket k >= 1 is [2^(k-1) us, 2^k us); the last (k = 31) is open.
  constexpr int kBuckets = 32;
  std::vector<int64_t> counts(kBuckets, 0);
  for (int64_t v : values_ns) {
    const int64_t us = std::max<int64_t>(v, 0) / 1000;
    int k = 0;
    while (k < kBuckets - 1 && us >= (int64_t{1} << k)) ++k;
    ++counts[static_cast<size_t>(k)];
  }
  int last = kBuckets - 1;
  while (last > 0 && counts[static_cast<size_t>(last)] == 0) --last;
  LogHistogram h;
  for (int k = 0; k <= last; ++k) {
    const int64_t lower = k == 0 ? 0 : (int64_t{1} << (k - 1)) * 1000;
    const int64_t upper = k == kBuckets - 1 ? -1 : (int64_t{1} << k) * 1000;
    h.buckets.push_back({lower, upper, counts[static_cast<size_t>(k)]});
  }
  return h;
}

}  // namespace pagereel::probe
