#include "base/percent_encoding.h"

#include <gtest/gtest.h>

#include <string>

namespace pagereel {
namespace {

TEST(PercentEncodingTest, PlusIsASpaceInAQueryAndItselfInAPathSegment) {
  EXPECT_EQ(PercentDecode("a+b%2Bc", PlusSign::kSpace), "a b+c");
  EXPECT_EQ(PercentDecode("a+b%2Bc", PlusSign::kItself), "a+b+c");
}

TEST(PercentEncodingTest, EscapesDecodeToTheBytesTheyName) {
  EXPECT_EQ(PercentDecode("%41%62%2f%2F%7e", PlusSign::kItself), "Ab//~");
  EXPECT_EQ(PercentDecode("%00%ff", PlusSign::kItself), std::string("\0\xff", 2));
  EXPECT_EQ(PercentDecode("", PlusSign::kSpace), "");
  EXPECT_EQ(PercentDecode("plain", PlusSign::kSpace), "plain");
}

TEST(PercentEncodingTest, APercentWithoutTwoHexDigitsIsRefused) {
  for (const char* bad : {"%", "%4", "a%2", "%zz", "%g0", "%0g", "50%", "%%41"}) {
    EXPECT_EQ(PercentDecode(bad, PlusSign::kSpace), std::nullopt) << bad;
    EXPECT_EQ(PercentDecode(bad, PlusSign::kItself), std::nullopt) << bad;
  }
}

TEST(PercentEncodingTest, AFileUrlNamesItsPathAndBack) {
  const std::string path = "/tmp/a page/50% #1+ä.html";
  const std::string url = FileUrlForPath(path);
  EXPECT_EQ(url, "file:///tmp/a%20page/50%25%20%231%2B%C3%A4.html");
  EXPECT_EQ(PathOfFileUrl(url), path);
  EXPECT_EQ(PathOfFileUrl("file:///srv/app/index.html?x=1#top"), "/srv/app/index.html");
  EXPECT_EQ(PathOfFileUrl("http://example.com/"), std::nullopt);
  EXPECT_EQ(PathOfFileUrl("file:///bad%zz"), std::nullopt);
}

}  // namespace
}  // namespace pagereel
