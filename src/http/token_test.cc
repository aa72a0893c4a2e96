#include "http/token.h"

#include <gtest/gtest.h>

namespace pagereel::http {
namespace {

TEST(TokenTest, WithoutATokenEveryRequestPasses) {
  EXPECT_TRUE(IsAuthorized("", ""));
  EXPECT_TRUE(IsAuthorized("Bearer anything", ""));
}

TEST(TokenTest, OnlyTheBearerSchemeWithTheExactTokenPasses) {
  // The scheme's name is case-insensitive and may be followed by more than one space
  // (RFC 9110, section 11.1); the token is compared exactly.
  for (const char* right : {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "Bearer  s3cret"}) {
    EXPECT_TRUE(IsAuthorized(right, "s3cret")) << "'" << right << "'";
  }
  for (const char* wrong :
       {"", "s3cret", "Bearer", "Bearer ", "Bearer s3cre", "Bearer s3creT", "Bearer s3cretX",
        "Bearers3cret", "Basic s3cret", "Bearer s3cret ", "Bearer\ts3cret", "Bearer S3CRET"}) {
    EXPECT_FALSE(IsAuthorized(wrong, "s3cret")) << "'" << wrong << "'";
  }
}

}  // namespace
}  // namespace pagereel::http
