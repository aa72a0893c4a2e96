#include "base/status.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace pagereel {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  PR_ASSIGN_OR_RETURN(int h, Half(x));
  PR_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFoundError("no such file");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not found: no such file");
  EXPECT_EQ(s.WithContext("reading x").message(), "reading x: no such file");
}

TEST(StatusTest, ErrnoMapsDiskFull) {
  Status s = ErrnoError("writing out.mp4", ENOSPC);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("out.mp4"), std::string_view::npos);
}

TEST(StatusTest, MacrosPropagate) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

}  // namespace
}  // namespace pagereel
