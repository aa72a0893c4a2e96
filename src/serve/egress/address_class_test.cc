#include "serve/egress/address_class.h"

#include <string>

#include <boost/asio/ip/address.hpp>
#include <gtest/gtest.h>

namespace pagereel::serve::egress {
namespace {

struct Case {
  const char* address;
  AddressClass expected;
};

void ExpectAll(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    boost::system::error_code ec;
    boost::asio::ip::address a = boost::asio::ip::make_address(c.address, ec);
    ASSERT_FALSE(ec) << c.address;
    EXPECT_EQ(AddressClassName(Classify(a)), AddressClassName(c.expected)) << c.address;
  }
}

TEST(AddressClassTest, Ipv4RangesAndTheirEdges) {
  ExpectAll({
      {"0.0.0.0", AddressClass::kUnspecified},
      {"0.255.255.255", AddressClass::kUnspecified},
      {"1.0.0.0", AddressClass::kPublic},
      {"8.8.8.8", AddressClass::kPublic},
      {"9.255.255.255", AddressClass::kPublic},
      {"10.0.0.0", AddressClass::kPrivate},
      {"10.255.255.255", AddressClass::kPrivate},
      {"11.0.0.0", AddressClass::kPublic},
      {"100.63.255.255", AddressClass::kPublic},
      {"100.64.0.0", AddressClass::kSharedCgnat},
      {"100.127.255.255", AddressClass::kSharedCgnat},
      {"100.128.0.0", AddressClass::kPublic},
      {"126.255.255.255", AddressClass::kPublic},
      {"127.0.0.0", AddressClass::kLoopback},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.255.255", AddressClass::kLoopback},
      {"128.0.0.0", AddressClass::kPublic},
      {"169.253.255.255", AddressClass::kPublic},
      {"169.254.0.0", AddressClass::kLinkLocal},
      {"169.254.169.253", AddressClass::kLinkLocal},
      {"169.254.255.255", AddressClass::kLinkLocal},
      {"169.255.0.0", AddressClass::kPublic},
      {"172.15.255.255", AddressClass::kPublic},
      {"172.16.0.0", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"172.32.0.0", AddressClass::kPublic},
      {"192.0.0.0", AddressClass::kReserved},
      {"192.0.0.255", AddressClass::kReserved},
      {"192.0.1.0", AddressClass::kPublic},
      {"192.0.2.0", AddressClass::kDocumentation},
      {"192.0.2.255", AddressClass::kDocumentation},
      {"192.0.3.0", AddressClass::kPublic},
      {"192.88.99.1", AddressClass::kReserved},
      {"192.167.255.255", AddressClass::kPublic},
      {"192.168.0.0", AddressClass::kPrivate},
      {"192.168.255.255", AddressClass::kPrivate},
      {"192.169.0.0", AddressClass::kPublic},
      {"198.17.255.255", AddressClass::kPublic},
      {"198.18.0.0", AddressClass::kBenchmarking},
      {"198.19.255.255", AddressClass::kBenchmarking},
      {"198.20.0.0", AddressClass::kPublic},
      {"198.51.100.7", AddressClass::kDocumentation},
      {"203.0.113.255", AddressClass::kDocumentation},
      {"203.0.114.0", AddressClass::kPublic},
      {"223.255.255.255", AddressClass::kPublic},
      {"224.0.0.0", AddressClass::kMulticast},
      {"239.255.255.255", AddressClass::kMulticast},
      {"240.0.0.0", AddressClass::kReserved},
      {"255.255.255.254", AddressClass::kReserved},
      {"255.255.255.255", AddressClass::kBroadcast},
  });
}

TEST(AddressClassTest, CloudMetadataAddresses) {
  ExpectAll({
      {"169.254.169.254", AddressClass::kMetadata},
      {"169.254.170.2", AddressClass::kMetadata},
      {"169.254.170.23", AddressClass::kMetadata},
      {"100.100.100.200", AddressClass::kMetadata},
      {"168.63.129.16", AddressClass::kMetadata},
      {"168.63.129.17", AddressClass::kPublic},
      {"fd00:ec2::254", AddressClass::kMetadata},
      {"fd00:ec2::23", AddressClass::kMetadata},
      {"fd00:ec2::255", AddressClass::kPrivate},
  });
}

TEST(AddressClassTest, Ipv6RangesAndTheirEdges) {
  ExpectAll({
      {"::", AddressClass::kUnspecified},
      {"::1", AddressClass::kLoopback},
      {"::2", AddressClass::kUnspecified},  // IPv4-compatible 0.0.0.2.
      {"2000::", AddressClass::kPublic},
      {"2606:4700:4700::1111", AddressClass::kPublic},
      {"3ffe:ffff::1", AddressClass::kPublic},
      {"3fff::", AddressClass::kDocumentation},
      {"3fff:0fff:ffff::", AddressClass::kDocumentation},
      {"3fff:1000::", AddressClass::kPublic},
      {"1fff:ffff::1", AddressClass::kReserved},
      {"4000::1", AddressClass::kReserved},
      {"100::1", AddressClass::kReserved},
      {"100:0:0:1::1", AddressClass::kReserved},  // Outside 2000::/3 as well.
      {"2001::1", AddressClass::kReserved},         // Teredo.
      {"2001:1ff:ffff::", AddressClass::kReserved},
      {"2001:200::", AddressClass::kPublic},
      {"2001:2::1", AddressClass::kBenchmarking},
      {"2001:db8::1", AddressClass::kDocumentation},
      {"2001:db9::1", AddressClass::kPublic},
      {"5f00::1", AddressClass::kReserved},
      {"fbff:ffff::1", AddressClass::kReserved},
      {"fc00::", AddressClass::kPrivate},
      {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kPrivate},
      {"fe7f:ffff::1", AddressClass::kReserved},
      {"fe80::", AddressClass::kLinkLocal},
      {"febf:ffff::1", AddressClass::kLinkLocal},
      {"fec0::1", AddressClass::kPrivate},
      {"ff02::1", AddressClass::kMulticast},
      {"64:ff9b:1::1", AddressClass::kPrivate},
  });
}

TEST(AddressClassTest, Ipv6FormsAreJudgedByTheIpv4TheyEmbed) {
  ExpectAll({
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:7f00:1", AddressClass::kLoopback},
      {"::ffff:10.1.2.3", AddressClass::kPrivate},
      {"::ffff:169.254.169.254", AddressClass::kMetadata},
      {"::ffff:0.0.0.0", AddressClass::kUnspecified},
      {"::ffff:8.8.8.8", AddressClass::kPublic},
      {"::ffff:0:127.0.0.1", AddressClass::kLoopback},  // SIIT translated.
      {"::127.0.0.1", AddressClass::kLoopback},         // IPv4-compatible.
      {"::192.168.1.1", AddressClass::kPrivate},
      {"::8.8.8.8", AddressClass::kPublic},
      {"64:ff9b::127.0.0.1", AddressClass::kLoopback},  // NAT64.
      {"64:ff9b::a9fe:a9fe", AddressClass::kMetadata},
      {"64:ff9b::8.8.8.8", AddressClass::kPublic},
      {"2002:7f00:1::", AddressClass::kLoopback},       // 6to4 of 127.0.0.1.
      {"2002:c0a8:101::1", AddressClass::kPrivate},
      {"2002:a9fe:a9fe::1", AddressClass::kMetadata},
      {"2002:808:808::1", AddressClass::kPublic},
  });
}

TEST(AddressClassTest, EmbeddedIpv4IsOnlyFoundInTheFormsThatCarryOne) {
  auto v6 = [](const char* text) { return boost::asio::ip::make_address_v6(text); };
  EXPECT_EQ(EmbeddedIpv4(v6("::ffff:1.2.3.4")), 0x01020304u);
  EXPECT_EQ(EmbeddedIpv4(v6("2002:102:304::")), 0x01020304u);
  EXPECT_FALSE(EmbeddedIpv4(v6("::1")).has_value());
  EXPECT_FALSE(EmbeddedIpv4(v6("::")).has_value());
  EXPECT_FALSE(EmbeddedIpv4(v6("2001:db8::1.2.3.4")).has_value());
}

TEST(AddressClassTest, EveryClassHasAName) {
  for (int i = 0; i <= static_cast<int>(AddressClass::kReserved); ++i) {
    EXPECT_NE(AddressClassName(static_cast<AddressClass>(i)), "unknown");
  }
}

}  // namespace
}  // namespace pagereel::serve::egress
