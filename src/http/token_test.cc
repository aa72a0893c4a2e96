#include "http/token.h"

#include <gtest/gtest.h>

namespace pagereel::http {
namespace {

TEST(TokenTest, WithoutATokenEveryRequestPasses) {
  EXPECT_TRUE(IsAuthorized("", ""));
  EXPECT_TRUE(IsAuthorized("Bearer anything", ""));
}

TEST(TokenTest, OnlyTheExactBearerHeaderPasses) {
  EXPECT_TRUE(IsAuthorized("Bearer s3cret", "s3cret"));
  for (const char* wrong :
       {"", "s3cret", "Bearer", "Bearer ", "Bearer s3cre", "Bearer s3creT", "Bearer s3cretX",
        "bearer s3cret", "Bearer  s3cret", "Basic s3cret", "Bearer s3cret "}) {
    EXPECT_FALSE(IsAuthorized(wrong, "s3cret")) << "'" << wrong << "'";
  }
}

}  // namespace
}  // namespace pagereel::http
