#include "http/prometheus.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace pagereel::http {
namespace {

TEST(PrometheusTextTest, FamiliesAndSamplesAreWrittenInTheTextFormat) {
  PrometheusText p;
  p.Family("pagereel_things_total", "counter", "Things counted.");
  p.Sample("pagereel_things_total", {}, int64_t{3});
  p.Sample("pagereel_things_total", {{"kind", "a"}, {"side", "left"}}, 7);
  p.Family("pagereel_level", "gauge", "A level.");
  p.Sample("pagereel_level", {}, 0.25);
  EXPECT_EQ(p.Take(),
            "# HELP pagereel_things_total Things counted.\n"
            "# TYPE pagereel_things_total counter\n"
            "pagereel_things_total 3\n"
            "pagereel_things_total{kind=\"a\",side=\"left\"} 7\n"
            "# HELP pagereel_level A level.\n"
            "# TYPE pagereel_level gauge\n"
            "pagereel_level 0.25\n");
  EXPECT_EQ(p.Take(), "");
}

TEST(PrometheusTextTest, LabelValuesAreEscaped) {
  PrometheusText p;
  p.Sample("m", {{"source", "a\"b\\c\nd"}}, 1);
  EXPECT_EQ(p.Take(), "m{source=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(PrometheusTextTest, FractionsHaveTheWritersSignificantDigits) {
  PrometheusText nine;
  nine.Sample("m", {}, 1.23456789012);
  EXPECT_EQ(nine.Take(), "m 1.23456789\n");
  PrometheusText six(6);
  six.Sample("m", {}, 1.23456789012);
  six.Sample("m", {}, 0.00025);
  six.Sample("m", {}, 120.0);
  EXPECT_EQ(six.Take(), "m 1.23457\nm 0.00025\nm 120\n");
}

TEST(PrometheusTextTest, HistogramsHaveCumulativeBucketsThenInfSumAndCount) {
  PrometheusText p(6);
  const std::array<double, 3> bounds = {0.01, 0.5, 2.5};
  const std::array<int64_t, 3> cumulative = {1, 3, 3};
  p.Histogram("wait_seconds", {{"route", "pdf"}}, bounds, cumulative, 4, 12.3456789);
  EXPECT_EQ(p.Take(),
            "wait_seconds_bucket{route=\"pdf\",le=\"0.01\"} 1\n"
            "wait_seconds_bucket{route=\"pdf\",le=\"0.5\"} 3\n"
            "wait_seconds_bucket{route=\"pdf\",le=\"2.5\"} 3\n"
            "wait_seconds_bucket{route=\"pdf\",le=\"+Inf\"} 4\n"
            "wait_seconds_sum{route=\"pdf\"} 12.3457\n"
            "wait_seconds_count{route=\"pdf\"} 4\n");
  p.Histogram("lag_seconds", {}, bounds, cumulative, 3, 0);
  EXPECT_EQ(p.Take().substr(0, 34), "lag_seconds_bucket{le=\"0.01\"} 1\nla");
}

}  // namespace
}  // namespace pagereel::http
