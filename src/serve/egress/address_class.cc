#include "serve/egress/address_class.h"

#include <array>
#include <cstring>

#include <boost/asio/ip/address.hpp>

namespace pagereel::serve::egress {

namespace {

struct V4Range {
  uint32_t network;
  int prefix;
  AddressClass cls;
};

constexpr uint32_t V4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// Most specific first: the first range that holds the address decides.
constexpr std::array kV4Ranges = {
    // Instance metadata and host services, reachable from inside a cloud VM or container.
    V4Range{V4(169, 254, 169, 254), 32, AddressClass::kMetadata},  // AWS, GCP, Azure, OCI, DO.
    V4Range{V4(169, 254, 170, 2), 32, AddressClass::kMetadata},    // AWS ECS task credentials.
    V4Range{V4(169, 254, 170, 23), 32, AddressClass::kMetadata},   // AWS EKS pod identity.
    V4Range{V4(100, 100, 100, 200), 32, AddressClass::kMetadata},  // Alibaba Cloud.
    // Azure's WireServer sits in public address space, so without this line it would pass.
    V4Range{V4(168, 63, 129, 16), 32, AddressClass::kMetadata},
    V4Range{V4(0, 0, 0, 0), 8, AddressClass::kUnspecified},
    V4Range{V4(10, 0, 0, 0), 8, AddressClass::kPrivate},
    V4Range{V4(100, 64, 0, 0), 10, AddressClass::kSharedCgnat},
    V4Range{V4(127, 0, 0, 0), 8, AddressClass::kLoopback},
    V4Range{V4(169, 254, 0, 0), 16, AddressClass::kLinkLocal},
    V4Range{V4(172, 16, 0, 0), 12, AddressClass::kPrivate},
    V4Range{V4(192, 0, 0, 0), 24, AddressClass::kReserved},  // IETF protocol assignments.
    V4Range{V4(192, 0, 2, 0), 24, AddressClass::kDocumentation},
    V4Range{V4(192, 88, 99, 0), 24, AddressClass::kReserved},  // Former 6to4 relay anycast.
    V4Range{V4(192, 168, 0, 0), 16, AddressClass::kPrivate},
    V4Range{V4(198, 18, 0, 0), 15, AddressClass::kBenchmarking},
    V4Range{V4(198, 51, 100, 0), 24, AddressClass::kDocumentation},
    V4Range{V4(203, 0, 113, 0), 24, AddressClass::kDocumentation},
    V4Range{V4(224, 0, 0, 0), 4, AddressClass::kMulticast},
    V4Range{V4(255, 255, 255, 255), 32, AddressClass::kBroadcast},
    V4Range{V4(240, 0, 0, 0), 4, AddressClass::kReserved},
};

using V6Bytes = std::array<unsigned char, 16>;

struct V6Range {
  V6Bytes network;
  int prefix;
  AddressClass cls;
};

constexpr V6Bytes V6(std::initializer_list<uint16_t> groups) {
  V6Bytes bytes{};
  size_t i = 0;
  for (uint16_t g : groups) {
    bytes[i++] = static_cast<unsigned char>(g >> 8);
    bytes[i++] = static_cast<unsigned char>(g & 0xff);
  }
  return bytes;
}

// Forms that embed IPv4 are handled before this table; the first range that holds the
// address decides, and 2000::/3 (global unicast) is the only public one.
const std::array kV6Ranges = {
    V6Range{V6({0, 0, 0, 0, 0, 0, 0, 0}), 128, AddressClass::kUnspecified},
    V6Range{V6({0, 0, 0, 0, 0, 0, 0, 1}), 128, AddressClass::kLoopback},
    V6Range{V6({0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254}), 128, AddressClass::kMetadata},  // AWS.
    V6Range{V6({0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0023}), 128, AddressClass::kMetadata},  // EKS.
    V6Range{V6({0x0064, 0xff9b, 0x0001}), 48, AddressClass::kPrivate},  // Local-use NAT64.
    V6Range{V6({0x0100}), 64, AddressClass::kReserved},                // Discard-only.
    V6Range{V6({0x2001, 0x0db8}), 32, AddressClass::kDocumentation},
    V6Range{V6({0x2001, 0x0002, 0}), 48, AddressClass::kBenchmarking},
    V6Range{V6({0x2001}), 23, AddressClass::kReserved},  // IETF assignments, Teredo, ORCHID.
    V6Range{V6({0x3fff}), 20, AddressClass::kDocumentation},
    V6Range{V6({0x5f00}), 16, AddressClass::kReserved},  // SRv6 segment identifiers.
    V6Range{V6({0xfc00}), 7, AddressClass::kPrivate},   // Unique local addresses.
    V6Range{V6({0xfe80}), 10, AddressClass::kLinkLocal},
    V6Range{V6({0xfec0}), 10, AddressClass::kPrivate},  // Deprecated site-local.
    V6Range{V6({0xff00}), 8, AddressClass::kMulticast},
    V6Range{V6({0x2000}), 3, AddressClass::kPublic},
};

bool InV4Range(uint32_t address, const V4Range& r) {
  uint32_t mask = r.prefix == 0 ? 0 : ~uint32_t{0} << (32 - r.prefix);
  return (address & mask) == r.network;
}

bool InV6Range(const V6Bytes& address, const V6Bytes& network, int prefix) {
  int full = prefix / 8;
  if (std::memcmp(address.data(), network.data(), static_cast<size_t>(full)) != 0) return false;
  int rest = prefix % 8;
  if (rest == 0) return true;
  auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (address[static_cast<size_t>(full)] & mask) == (network[static_cast<size_t>(full)] & mask);
}

uint32_t ReadV4(const V6Bytes& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
         uint32_t{b[at + 3]};
}

AddressClass ClassifyV4(uint32_t address) {
  for (const V4Range& r : kV4Ranges) {
    if (InV4Range(address, r)) return r.cls;
  }
  return AddressClass::kPublic;
}

}  // namespace

std::string_view AddressClassName(AddressClass c) {
  switch (c) {
    case AddressClass::kPublic: return "public";
    case AddressClass::kLoopback: return "loopback";
    case AddressClass::kPrivate: return "private";
    case AddressClass::kLinkLocal: return "link-local";
    case AddressClass::kSharedCgnat: return "CGNAT";
    case AddressClass::kMetadata: return "cloud metadata";
    case AddressClass::kUnspecified: return "unspecified";
    case AddressClass::kMulticast: return "multicast";
    case AddressClass::kBroadcast: return "broadcast";
    case AddressClass::kDocumentation: return "documentation";
    case AddressClass::kBenchmarking: return "benchmarking";
    case AddressClass::kReserved: return "reserved";
  }
  return "unknown";
}

std::optional<uint32_t> EmbeddedIpv4(const boost::asio::ip::address_v6& address) {
  const V6Bytes b = address.to_bytes();
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT translated), 64:ff9b::a.b.c.d (NAT64).
  if (InV6Range(b, V6({0, 0, 0, 0, 0, 0xffff}), 96) ||
      InV6Range(b, V6({0, 0, 0, 0, 0xffff, 0}), 96) ||
      InV6Range(b, V6({0x0064, 0xff9b, 0, 0, 0, 0}), 96)) {
    return ReadV4(b, 12);
  }
  // ::a.b.c.d (IPv4-compatible, deprecated), except :: and ::1 themselves.
  if (InV6Range(b, V6({0, 0, 0, 0, 0, 0}), 96) && ReadV4(b, 12) > 1) return ReadV4(b, 12);
  if (InV6Range(b, V6({0x2002}), 16)) return ReadV4(b, 2);  // 6to4: 2002:AABB:CCDD::/48.
  return std::nullopt;
}

AddressClass Classify(const boost::asio::ip::address_v4& address) {
  return ClassifyV4(address.to_uint());
}

AddressClass Classify(const boost::asio::ip::address_v6& address) {
  if (std::optional<uint32_t> v4 = EmbeddedIpv4(address)) return ClassifyV4(*v4);
  const V6Bytes b = address.to_bytes();
  for (const V6Range& r : kV6Ranges) {
    if (InV6Range(b, r.network, r.prefix)) return r.cls;
  }
  return AddressClass::kReserved;  // Outside 2000::/3: nothing there is routed today.
}

AddressClass Classify(const boost::asio::ip::address& address) {
  return address.is_v4() ? Classify(address.to_v4()) : Classify(address.to_v6());
}

}  // namespace pagereel::serve::egress
