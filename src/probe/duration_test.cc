#include "probe/duration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pagereel::probe {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(DurationTest, Units) {
  EXPECT_EQ(*ParseDuration("500us", "--threshold", BareNumber::kRejected), 500us);
  EXPECT_EQ(*ParseDuration("16.667ms", "--period", BareNumber::kRejected), 16667us);
  EXPECT_EQ(*ParseDuration("2s", "--duration", BareNumber::kSeconds), 2s);
  EXPECT_EQ(*ParseDuration("1500ns", "--period", BareNumber::kRejected), 1500ns);
  EXPECT_EQ(*ParseDuration("2.5", "--duration", BareNumber::kSeconds), 2500ms);
}

TEST(DurationTest, RejectsBadInputWithFlagName) {
  for (const char* bad : {"0ms", "-5ms", "abc", "5 parsecs", "5", "nanms"}) {
    auto d = ParseDuration(bad, "--period", BareNumber::kRejected);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_THAT(std::string(d.status().message()), HasSubstr("--period")) << bad;
  }
  EXPECT_FALSE(ParseDuration("0", "--duration", BareNumber::kSeconds).ok());
  EXPECT_FALSE(ParseDuration("-1", "--duration", BareNumber::kSeconds).ok());
}

}  // namespace
}  // namespace pagereel::probe
