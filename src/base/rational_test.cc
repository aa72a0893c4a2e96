#include "base/rational.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace pagereel {
namespace {

TEST(RationalTest, ParsesIntegersDecimalsAndFractions) {
  EXPECT_EQ(*ParseFrameRate("30"), (Rational{30, 1}));
  EXPECT_EQ(*ParseFrameRate("29.97"), (Rational{30000, 1001}));
  EXPECT_EQ(*ParseFrameRate("59.94"), (Rational{60000, 1001}));
  EXPECT_EQ(*ParseFrameRate("23.976"), (Rational{24000, 1001}));
  EXPECT_EQ(*ParseFrameRate("12.5"), (Rational{25, 2}));
  EXPECT_EQ(*ParseFrameRate("30000/1001"), (Rational{30000, 1001}));
  EXPECT_EQ(*ParseFrameRate("60/2"), (Rational{30, 1}));
}

TEST(RationalTest, RejectsBadRates) {
  for (const char* bad : {"0", "-30", "abc", "30/0", "30/-1", "0/5", "1.", "5000", "", "1e3",
                          "30fps", "1.-5", "4000000001/4000000000"}) {
    Result<Rational> r = ParseFrameRate(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string_view::npos);
    }
  }
}

TEST(RationalTest, FrameTimeMillisIsTheFirstWholeMillisecondAfterTheFrame) {
  EXPECT_EQ(FrameTimeMillis(0, Rational{30, 1}), 0);
  EXPECT_EQ(FrameTimeMillis(1, Rational{30, 1}), 34);
  EXPECT_EQ(FrameTimeMillis(2, Rational{30, 1}), 67);
  EXPECT_EQ(FrameTimeMillis(3, Rational{30, 1}), 101);
  EXPECT_EQ(FrameTimeMillis(1, Rational{25, 1}), 41);
  EXPECT_EQ(FrameTimeMillis(1, Rational{1, 1}), 1001);
  // 29.97: after n * 1000 / 29.97 ms, which is after n * 1001 / 30 too.
  EXPECT_EQ(FrameTimeMillis(1, Rational{30000, 1001}), 34);
  EXPECT_EQ(FrameTimeMillis(1009, Rational{30000, 1001}), 33668);
  EXPECT_EQ(FrameTimeMillis(3, Rational{1000, 1}), 3);
}

// What pages do with the time (lottie-web, hand-written frame counters), in the same
// double arithmetic JavaScript uses: every form must land on the frame's own number.
TEST(RationalTest, PagesCountingFramesFromTheTimeGetTheFrameNumber) {
  struct Case {
    Rational rate;
    std::vector<double> page_rates;  // How pages write the rate.
  };
  const std::vector<Case> cases = {
      {{24, 1}, {24}},           {{25, 1}, {25}},           {{30, 1}, {30}},
      {{50, 1}, {50}},           {{60, 1}, {60}},           {{1, 1}, {1}},
      {{12, 1}, {12}},           {{120, 1}, {120}},         {{25, 2}, {12.5}},
      {{30000, 1001}, {30000.0 / 1001, 29.97}},             {{60000, 1001}, {60000.0 / 1001, 59.94}},
      {{24000, 1001}, {24000.0 / 1001, 23.976}},
  };
  for (const Case& c : cases) {
    for (double r : c.page_rates) {
      double accumulated = 0;
      int64_t previous = 0;
      for (int64_t n = 0; n < 200'000; ++n) {
        const int64_t t = FrameTimeMillis(n, c.rate);
        accumulated += static_cast<double>(t - previous) * (r / 1000);
        previous = t;
        const double direct = static_cast<double>(t) * r / 1000;
        const double scaled = static_cast<double>(t) / 1000 * r;
        ASSERT_EQ(static_cast<int64_t>(std::floor(direct)), n) << c.rate.ToString() << " as " << r;
        ASSERT_EQ(static_cast<int64_t>(std::floor(scaled)), n) << c.rate.ToString() << " as " << r;
        ASSERT_EQ(static_cast<int64_t>(std::floor(accumulated)), n)
            << c.rate.ToString() << " as " << r << ", summed";
      }
    }
  }
}

TEST(RationalTest, FramesInDuration) {
  EXPECT_EQ(FramesInDuration(1.0, Rational{30, 1}), 30);
  EXPECT_EQ(FramesInDuration(0.1, Rational{30, 1}), 3);
  EXPECT_EQ(FramesInDuration(1.0, Rational{30000, 1001}), 30);
  EXPECT_EQ(FramesInDuration(2.5, Rational{24, 1}), 60);
}

}  // namespace
}  // namespace pagereel
