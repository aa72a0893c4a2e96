#include "base/rational.h"

#include <gtest/gtest.h>

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

TEST(RationalTest, FrameTimesAreExact) {
  Rational ntsc{30000, 1001};
  EXPECT_EQ(FrameTime(0, ntsc).count(), 0);
  EXPECT_EQ(FrameTime(1, ntsc).count(), 33367);  // 33366.67 rounds up.
  EXPECT_EQ(FrameTime(30000, ntsc).count(), 1'001'000'000);
  // A 10-hour film: no drift, because nothing is accumulated.
  EXPECT_EQ(FrameTime(30 * 3600 * 10, Rational{30, 1}).count(), 36'000'000'000LL);
}

TEST(RationalTest, FrameTimeMillisRoundsOnce) {
  EXPECT_EQ(FrameTimeMillis(1, Rational{30, 1}), 33);
  EXPECT_EQ(FrameTimeMillis(2, Rational{30, 1}), 67);
  EXPECT_EQ(FrameTimeMillis(3, Rational{30, 1}), 100);
  EXPECT_EQ(FrameTimeMillis(1, Rational{30000, 1001}), 33);
  EXPECT_EQ(FrameTimeMillis(2, Rational{30000, 1001}), 67);
  EXPECT_EQ(FrameTimeMillis(30000, Rational{30000, 1001}), 1'001'000);
}

TEST(RationalTest, FramesInDuration) {
  EXPECT_EQ(FramesInDuration(1.0, Rational{30, 1}), 30);
  EXPECT_EQ(FramesInDuration(0.1, Rational{30, 1}), 3);
  EXPECT_EQ(FramesInDuration(1.0, Rational{30000, 1001}), 30);
  EXPECT_EQ(FramesInDuration(2.5, Rational{24, 1}), 60);
}

}  // namespace
}  // namespace pagereel
