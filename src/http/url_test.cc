#include "http/url.h"

#include <gtest/gtest.h>

namespace pagereel::http {
namespace {

TEST(UrlTest, ParseUrlIsStrictAndNormalises) {
  Result<UrlParts> u = ParseUrl("HTTP://User:Pw@Example.COM.:8080/a/b?c=d#frag");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "example.com");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->path, "/a/b?c=d");
  EXPECT_EQ(ParseUrl("https://[::FFFF:127.0.0.1]/")->host, "::ffff:127.0.0.1");
  EXPECT_EQ(ParseUrl("https://x.test")->port, 443);
  EXPECT_EQ(ParseUrl("wss://x.test")->port, 443);
  EXPECT_EQ(ParseUrl("ws://x.test")->port, 80);
  EXPECT_EQ(ParseUrl("https://x.test?q")->path, "/?q");
  // IPv4 written the ways browsers accept it is read as the address it means.
  EXPECT_EQ(ParseUrl("http://127.1/")->host, "127.0.0.1");
  EXPECT_EQ(ParseUrl("http://0x7f.0.0.1/")->host, "127.0.0.1");
  EXPECT_EQ(ParseUrl("http://2130706433/")->host, "127.0.0.1");
  EXPECT_EQ(ParseUrl("http://017700000001/")->host, "127.0.0.1");
  for (const char* bad : {"file:///etc/passwd", "data:text/html,hi", "javascript:alert(1)",
                          "ftp://x/", "http:/x", "http://", "http://a b/", "http://x\\@127.0.0.1/",
                          "http://127.0.0.1%2f/", "http://[::1%25lo]/", "http://x:0/",
                          "http://x:65536/", "http://ex\xc3\xa4mple.com/", "://x", "gopher://x/"}) {
    EXPECT_FALSE(ParseUrl(bad).ok()) << bad;
  }
}

TEST(UrlTest, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(ParseUrl("example.com").status().message(),
            "it has no scheme (write http:// or https://)");
  EXPECT_EQ(ParseUrl("ftp://x/").status().message(),
            "scheme ftp is not allowed (only http, https, ws and wss)");
  EXPECT_EQ(ParseUrl("http:x").status().message(), "it has no //host after the scheme");
  EXPECT_EQ(ParseUrl("http://").status().message(), "the host is empty");
  EXPECT_EQ(ParseUrl("http://x:0/").status().message(), "its port \"0\" is not 1 to 65535");
  EXPECT_EQ(ParseUrl("http://[::1/").status().message(), "its IPv6 host has no ']'");
  EXPECT_EQ(ParseUrl("http://a!b/").status().message(),
            "the host \"a!b\" has a character other than letters, digits, '-', '.' and '_' "
            "(write international names in punycode)");
}

TEST(UrlTest, HostsAndPortsAreNormalised) {
  EXPECT_EQ(NormaliseHost("Example.COM.").value(), "example.com");
  EXPECT_EQ(NormaliseHost("[0:0::1]").value(), "::1");
  EXPECT_EQ(NormaliseHost("0x7f.1").value(), "127.0.0.1");
  EXPECT_FALSE(NormaliseHost("").ok());
  EXPECT_FALSE(NormaliseHost(".").ok());
  EXPECT_FALSE(NormaliseHost("[::1").ok());
  EXPECT_FALSE(NormaliseHost("a%2fb").ok());
  EXPECT_EQ(ParsePort("1"), 1);
  EXPECT_EQ(ParsePort("65535"), 65535);
  for (const char* bad : {"", "0", "65536", "123456", "8a", "-1", "+80"}) {
    EXPECT_EQ(ParsePort(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace pagereel::http
