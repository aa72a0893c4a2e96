#include "base/query.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pagereel {
namespace {

TEST(QueryTest, PairsComeInOrderStillEncodedWithoutEmptyOnes) {
  std::vector<QueryPair> pairs = SplitQuery("a=1&&b&c=x%20y&=v&d=e=f&");
  ASSERT_EQ(pairs.size(), 5u);
  EXPECT_EQ(pairs[0].name, "a");
  EXPECT_EQ(pairs[0].value, "1");
  EXPECT_EQ(pairs[1].name, "b");
  EXPECT_EQ(pairs[1].value, "");
  EXPECT_EQ(pairs[2].name, "c");
  EXPECT_EQ(pairs[2].value, "x%20y");
  EXPECT_EQ(pairs[3].name, "");
  EXPECT_EQ(pairs[3].value, "v");
  EXPECT_EQ(pairs[4].name, "d");
  EXPECT_EQ(pairs[4].value, "e=f");
  EXPECT_TRUE(SplitQuery("").empty());
  EXPECT_TRUE(SplitQuery("&&").empty());
}

}  // namespace
}  // namespace pagereel
