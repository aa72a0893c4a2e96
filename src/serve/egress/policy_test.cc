#include "serve/egress/policy.h"

#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>
#include <gtest/gtest.h>

namespace pagereel::serve::egress {
namespace {

namespace ip = boost::asio::ip;

Policy MustParse(const std::vector<std::string>& allow,
                 const std::vector<std::string>& resolve = {}) {
  Result<Policy> p = Policy::Parse(allow, resolve);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Policy();
}

std::optional<std::string> Why(const Policy& p, std::string_view host, uint16_t port,
                               const char* address) {
  return p.RefusalReason(host, port, ip::make_address(address));
}

TEST(PolicyTest, DefaultAllowsOnlyPublicAddresses) {
  Policy p;
  EXPECT_EQ(Why(p, "example.com", 443, "93.184.215.14"), std::nullopt);
  EXPECT_EQ(Why(p, "example.com", 443, "2606:2800:21f:cb07:6820:80da:af6b:8b2c"), std::nullopt);
  EXPECT_EQ(Why(p, "localhost", 80, "127.0.0.1"), "loopback address 127.0.0.1");
  EXPECT_EQ(Why(p, "x", 80, "10.1.2.3"), "private address 10.1.2.3");
  EXPECT_EQ(Why(p, "x", 80, "169.254.169.254"), "cloud metadata address 169.254.169.254");
  EXPECT_EQ(Why(p, "x", 80, "fd00:ec2::254"), "cloud metadata address fd00:ec2::254");
  EXPECT_EQ(Why(p, "x", 80, "::ffff:127.0.0.1"),
            "loopback address ::ffff:127.0.0.1 (IPv4 127.0.0.1)");
  EXPECT_EQ(Why(p, "x", 80, "100.64.0.1"), "CGNAT address 100.64.0.1");
  EXPECT_EQ(Why(p, "x", 80, "fe80::1"), "link-local address fe80::1");
  EXPECT_EQ(Why(p, "x", 80, "0.0.0.0"), "unspecified address 0.0.0.0");
}

TEST(PolicyTest, OriginsOpenTheirHostAndPortOnly) {
  Policy p = MustParse({"http://127.0.0.1:8081", "https://Intranet.Example.", "https://*.corp.test"});
  EXPECT_EQ(Why(p, "127.0.0.1", 8081, "127.0.0.1"), std::nullopt);
  EXPECT_NE(Why(p, "127.0.0.1", 8082, "127.0.0.1"), std::nullopt);
  EXPECT_NE(Why(p, "localhost", 8081, "127.0.0.1"), std::nullopt);
  EXPECT_EQ(Why(p, "intranet.example", 443, "10.0.0.5"), std::nullopt);
  EXPECT_NE(Why(p, "intranet.example", 80, "10.0.0.5"), std::nullopt);
  EXPECT_NE(Why(p, "evil-intranet.example", 443, "10.0.0.5"), std::nullopt);
  EXPECT_EQ(Why(p, "a.b.corp.test", 443, "10.0.0.6"), std::nullopt);
  EXPECT_NE(Why(p, "corp.test", 443, "10.0.0.6"), std::nullopt);
  EXPECT_NE(Why(p, "xcorp.test", 443, "10.0.0.6"), std::nullopt);
}

TEST(PolicyTest, BlocksOpenEveryNameAndPortThatResolvesIntoThem) {
  Policy p = MustParse({"10.0.0.0/8", "::1/128", "192.168.1.20", "fd12::/16"});
  EXPECT_EQ(Why(p, "db", 5432, "10.200.0.1"), std::nullopt);
  EXPECT_EQ(Why(p, "db", 5432, "::ffff:10.200.0.1"), std::nullopt);
  EXPECT_NE(Why(p, "db", 5432, "11.0.0.0"), "x");  // Public anyway.
  EXPECT_EQ(Why(p, "x", 1, "::1"), std::nullopt);
  EXPECT_NE(Why(p, "x", 1, "127.0.0.1"), std::nullopt);
  EXPECT_EQ(Why(p, "x", 1, "192.168.1.20"), std::nullopt);
  EXPECT_NE(Why(p, "x", 1, "192.168.1.21"), std::nullopt);
  EXPECT_EQ(Why(p, "x", 1, "fd12:3456::1"), std::nullopt);
  EXPECT_NE(Why(p, "x", 1, "fd13::1"), std::nullopt);
  EXPECT_NE(Why(p, "x", 1, "169.254.169.254"), std::nullopt);
}

TEST(PolicyTest, BadAllowEntriesAreNamed) {
  struct Bad {
    std::string entry;
    std::string says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"", "empty"},
           {"10.0.0.0/33", "from 0 to 32"},
           {"10.0.0.0/-1", "from 0 to 32"},
           {"10.0.0.0/", "from 0 to 32"},
           {"::/129", "from 0 to 128"},
           {"10.0.0.1/8", "did you mean 10.0.0.0/8?"},
           {"fd00::1/8", "did you mean fd00::/8?"},
           {"intranet.example", "neither an origin"},
           {"ftp://files.example", "scheme ftp is not allowed"},
           {"https://intranet.example/path", "no path"},
           {"https://user@intranet.example", "no path, query or user name"},
           {"http://127.0.0.1:0", "not 1 to 65535"},
           {"http://127.0.0.1:99999", "not 1 to 65535"},
           {"http://bad host", "space"},
           {"http://[::1", "no ']'"},
           {"http://", "empty"},
           {"http://ex\\ample.com", "backslash"},
       }) {
    Result<Policy> p = Policy::Parse({"https://ok.example", b.entry});
    ASSERT_FALSE(p.ok()) << b.entry;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    std::string message(p.status().message());
    EXPECT_NE(message.find("allow entry"), std::string::npos) << message;
    EXPECT_NE(message.find(b.says), std::string::npos) << b.entry << " -> " << message;
    if (!b.entry.empty()) {
      EXPECT_NE(message.find("\"" + b.entry + "\""), std::string::npos) << message;
    }
  }
}

TEST(PolicyTest, ResolveOverridesComeFirst) {
  Policy p = MustParse({}, {"evil.test:80:127.0.0.1", "both.test:*:[::1],10.0.0.1",
                            "Public.Test:443:93.184.215.14"});
  auto addresses = [&](const char* host, uint16_t port) {
    Result<std::vector<ip::address>> r = p.Resolve(host, port);
    std::vector<std::string> out;
    if (r.ok()) {
      for (const auto& a : *r) out.push_back(a.to_string());
    }
    return out;
  };
  EXPECT_EQ(addresses("evil.test", 80), std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(addresses("both.test", 1234), (std::vector<std::string>{"::1", "10.0.0.1"}));
  EXPECT_EQ(addresses("public.test", 443), std::vector<std::string>{"93.184.215.14"});
  EXPECT_EQ(addresses("10.9.8.7", 80), std::vector<std::string>{"10.9.8.7"});

  Result<std::optional<Refusal>> evil = p.Check("evil.test", 80);
  ASSERT_TRUE(evil.ok());
  ASSERT_TRUE(evil->has_value());
  EXPECT_EQ((*evil)->host, "evil.test");
  EXPECT_EQ((*evil)->address, "127.0.0.1");
  EXPECT_EQ((*evil)->reason, "loopback address 127.0.0.1");
  // One forbidden address among several refuses the name.
  Result<std::optional<Refusal>> both = p.Check("both.test", 80);
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->has_value());
  Result<std::optional<Refusal>> pub = p.Check("public.test", 443);
  ASSERT_TRUE(pub.ok());
  EXPECT_FALSE(pub->has_value());
}

TEST(PolicyTest, BadResolveEntriesAreNamed) {
  for (const std::string entry :
       {"evil.test", "evil.test:80", "evil.test:x:127.0.0.1", "evil.test:80:localhost",
        "evil.test:80:127.0.0.1,", ":80:127.0.0.1", "evil.test:0:127.0.0.1"}) {
    Result<Policy> p = Policy::Parse({}, {entry});
    ASSERT_FALSE(p.ok()) << entry;
    std::string message(p.status().message());
    EXPECT_NE(message.find("resolve entry \"" + entry + "\""), std::string::npos) << message;
  }
}

TEST(PolicyTest, CheckUrlRefusesSchemesAndForbiddenHosts) {
  Policy p = MustParse({"http://127.0.0.1:8081"}, {"evil.test:*:127.0.0.1"});
  EXPECT_TRUE(CheckUrl(p, "http://127.0.0.1:8081/page").ok());
  EXPECT_TRUE(CheckUrl(p, "https://93.184.215.14/").ok());
  struct Bad {
    const char* url;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"file:///etc/passwd", "scheme file is not allowed"},
           {"data:text/html,hi", "scheme data is not allowed"},
           {"ws://93.184.215.14/", "scheme ws is not allowed"},
           {"http://127.0.0.1:8082/", "loopback address 127.0.0.1"},
           {"http://127.1:8082/", "loopback address 127.0.0.1"},
           {"http://[::ffff:7f00:1]:8081/", "loopback address ::ffff:127.0.0.1"},
           {"http://evil.test:8081/", "loopback address 127.0.0.1"},
           {"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
           {"http://[fd00:ec2::254]/", "cloud metadata"},
           {"http://10.0.0.1/", "private address 10.0.0.1"},
       }) {
    Status s = CheckUrl(p, b.url);
    ASSERT_FALSE(s.ok()) << b.url;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(b.says), std::string_view::npos) << b.url << " -> " << s.message();
    EXPECT_NE(s.message().find(b.url), std::string_view::npos) << s.message();
  }
}

TEST(PolicyTest, LocalhostResolvesAndIsRefused) {
  // Through the system resolver (/etc/hosts), which tests may use: it sends no packet.
  Result<std::optional<Refusal>> r = Policy().Check("localhost", 80);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_value());
  EXPECT_NE((*r)->reason.find("loopback"), std::string::npos);
}

}  // namespace
}  // namespace pagereel::serve::egress
