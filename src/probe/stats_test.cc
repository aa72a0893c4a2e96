#include "probe/stats.h"

#include <gtest/gtest.h>

namespace pagereel::probe {
namespace {

TEST(QuantileTest, NearestRank) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Quantile(v, 0.5), 5);
  EXPECT_EQ(Quantile(v, 0.95), 10);
  EXPECT_EQ(Quantile(v, 0.0), 1);
  EXPECT_EQ(Quantile(v, 1.0), 10);
  EXPECT_EQ(Quantile({}, 0.5), 0);
}

TEST(LogHistogramTest, PowerOfTwoMicrosecondBuckets) {
  const std::vector<int64_t> ns = {0, 999, 1000, 1999, 2000, 3999, 700000};
  LogHistogram h = MakeLogHistogram(ns);
  ASSERT_GE(h.buckets.size(), 3u);
  EXPECT_EQ(h.buckets[0].count, 2);  // [0, 1us)
  EXPECT_EQ(h.buckets[1].lower_ns, 1000);
  EXPECT_EQ(h.buckets[1].count, 2);  // [1, 2us)
  EXPECT_EQ(h.buckets[2].count, 2);  // [2, 4us)
  // 700 us falls in [512, 1024) us, the last non-empty bucket.
  EXPECT_EQ(h.buckets.back().lower_ns, 512000);
  EXPECT_EQ(h.buckets.back().count, 1);
}

}  // namespace
}  // namespace pagereel::probe
