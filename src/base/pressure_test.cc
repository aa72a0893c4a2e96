#include "base/pressure.h"

#include <gtest/gtest.h>

namespace pagereel {
namespace {

TEST(PressureTest, ParsesSomeAndFull) {
  auto psi = ParsePressure(
      "some avg10=1.25 avg60=0.80 avg300=0.40 total=123456789\n"
      "full avg10=0.50 avg60=0.20 avg300=0.10 total=2345678\n");
  ASSERT_TRUE(psi.ok()) << psi.status().ToString();
  EXPECT_DOUBLE_EQ(psi->some.avg10, 1.25);
  EXPECT_DOUBLE_EQ(psi->some.avg60, 0.80);
  EXPECT_EQ(psi->some.total_us, 123456789);
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_EQ(psi->full->total_us, 2345678);
}

TEST(PressureTest, OlderKernelWithoutFullLine) {
  auto psi = ParsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n");
  ASSERT_TRUE(psi.ok());
  EXPECT_EQ(psi->some.total_us, 42);
  EXPECT_FALSE(psi->full.has_value());
}

TEST(PressureTest, MalformedAndMissingFieldsNameTheFile) {
  Result<Pressure> bad = ParsePressure("some avg10=abc avg60=0.80 avg300=0.40 total=1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/proc/pressure/cpu"), std::string_view::npos);
  EXPECT_FALSE(ParsePressure("some avg10=1 avg60=1 total=5\n").ok());  // No avg300.
  EXPECT_FALSE(ParsePressure("full avg10=1 avg60=1 avg300=1 total=5\n").ok());  // No some.
  EXPECT_FALSE(ParsePressure("").ok());
}

}  // namespace
}  // namespace pagereel
