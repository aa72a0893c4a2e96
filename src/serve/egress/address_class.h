// Classify: which kind of network an IP address belongs to, for the egress policy.
//
// The classes follow the IANA special-purpose registries (RFC 6890 and its updates) plus
// the addresses clouds use for instance metadata. IPv6 forms that carry an IPv4 address
// (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96 and 6to4
// 2002::/16) are classified by the IPv4 address they embed, so ::ffff:127.0.0.1 is
// loopback. IPv6 outside 2000::/3 that no rule names is reserved, never public.
//
// Pure functions; safe from any thread.
#ifndef PAGEREEL_SERVE_EGRESS_ADDRESS_CLASS_H_
#define PAGEREEL_SERVE_EGRESS_ADDRESS_CLASS_H_

#include <cstdint>
#include <optional>
#include <string_view>

// Asio's address type, declared rather than included so users of this header do not pull
// in Asio (boost/asio/ip/address.hpp defines it).
namespace boost::asio::ip {
class address;
class address_v4;
class address_v6;
}  // namespace boost::asio::ip

namespace pagereel::serve::egress {

enum class AddressClass {
  kPublic,         // Globally routable unicast: the only class the default policy allows.
  kLoopback,       // 127.0.0.0/8, ::1.
  kPrivate,        // 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10, 64:ff9b:1::/48.
  kLinkLocal,      // 169.254/16, fe80::/10.
  kSharedCgnat,    // 100.64.0.0/10 (carrier-grade NAT).
  kMetadata,       // Cloud instance metadata and host services (see address_class.cc).
  kUnspecified,    // 0.0.0.0/8, :: (Linux connects 0.0.0.0 to the local host).
  kMulticast,      // 224/4, ff00::/8.
  kBroadcast,      // 255.255.255.255.
  kDocumentation,  // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
  kBenchmarking,   // 198.18.0.0/15, 2001:2::/48.
  kReserved,       // Everything else special: 240/4, 192.0.0/24, 100::/64, 2001::/23, ...
};

// "public", "loopback", "private", "link-local", "CGNAT", "cloud metadata", ...
std::string_view AddressClassName(AddressClass c);

AddressClass Classify(const boost::asio::ip::address& address);
AddressClass Classify(const boost::asio::ip::address_v4& address);
AddressClass Classify(const boost::asio::ip::address_v6& address);

// The IPv4 address an IPv6 address carries and is classified by (mapped, translated,
// compatible, NAT64 well-known prefix, 6to4), as a host-order number; nullopt otherwise.
std::optional<uint32_t> EmbeddedIpv4(const boost::asio::ip::address_v6& address);

}  // namespace pagereel::serve::egress

#endif  // PAGEREEL_SERVE_EGRESS_ADDRESS_CLASS_H_
