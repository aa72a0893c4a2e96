#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace pagereel {
namespace {

TEST(Utf8Test, WellFormedTextIsUtf8) {
  for (const char* good : {"", "plain", "caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                           "\xED\x9F\xBF", "\xF4\x8F\xBF\xBF", "\xEF\xBF\xBD"}) {
    EXPECT_TRUE(IsUtf8(good)) << good;
  }
}

TEST(Utf8Test, BytesThatAreNoCharacterAreNot) {
  for (const char* bad : {"\xFF", "a\x80", "\xC3", "\xC0\xAF", "\xE0\x80\xAF",
                          "\xED\xA0\x80",         // A surrogate.
                          "\xF4\x90\x80\x80",     // Above U+10FFFF.
                          "\xF0\x9F\x98", "\xE2\x82", "\xF8\x88\x80\x80\x80"}) {
    EXPECT_FALSE(IsUtf8(bad)) << bad;
  }
}

TEST(Utf8Test, APrefixEndsBetweenCharacters) {
  const std::string e_acute = "\xC3\xA9";
  std::string text;
  for (int i = 0; i < 40; ++i) text += e_acute;  // 80 bytes.
  EXPECT_EQ(Utf8Prefix(text, 60).size(), 60u);
  EXPECT_EQ(Utf8Prefix(text, 61).size(), 60u);
  EXPECT_TRUE(IsUtf8(Utf8Prefix(text, 61)));
  EXPECT_EQ(Utf8Prefix("ab\xF0\x9F\x98\x80", 5), "ab");
  EXPECT_EQ(Utf8Prefix("ab\xF0\x9F\x98\x80", 6), "ab\xF0\x9F\x98\x80");
  EXPECT_EQ(Utf8Prefix("short", 60), "short");
  EXPECT_EQ(Utf8Prefix("abc", 0), "");
}

TEST(Utf8Test, APrefixCountsABadByteAsOneCharacter) {
  EXPECT_EQ(Utf8Prefix("a\xFF\xFF" "b", 3), "a\xFF\xFF");
  // A cut-short sequence is as many characters as bytes: its lead byte stays on its own.
  EXPECT_EQ(Utf8Prefix("a\xE2\x82", 2), "a\xE2");
}

}  // namespace
}  // namespace pagereel
