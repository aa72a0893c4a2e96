// Policy: which network destinations a capture may reach.
//
// By default a capture may reach public addresses only (see address_class.h), over http and
// https (and the WebSockets tunnelled through them). An operator opens more with allow
// entries, each one of:
//   - an origin, "http://127.0.0.1:8081" or "https://intranet.example" (default port from
//     the scheme; "https://*.example.com" matches every subdomain, not the apex). It allows
//     that host name and port whatever the name resolves to. The scheme only picks the
//     default port: the proxy sees https and wss as tunnels to host:port and cannot tell them
//     apart, so an origin opens its host:port to both;
//   - a CIDR block or one address, "10.0.0.0/8", "::1/128", "192.168.1.20". It allows every
//     host name that resolves into it, on every port. An IPv4 block also matches IPv6 forms
//     that embed one of its addresses (::ffff:10.1.2.3).
// Decisions are made on resolved addresses: a name is resolved (resolve overrides, then IP
// literals, then the system resolver) and refused if any of its addresses is refused, so a
// public-looking name that points at 127.0.0.1 is refused as loopback.
//
// Resolve overrides are curl's --resolve entries, "host:port:address[,address...]" (port
// may be "*"; IPv6 addresses with or without brackets), for tests and for operators who pin
// names.
//
// A Policy is immutable after Parse and safe to use from any thread.
#ifndef PAGEREEL_SERVE_EGRESS_POLICY_H_
#define PAGEREEL_SERVE_EGRESS_POLICY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace boost::asio::ip {
class address;
}  // namespace boost::asio::ip

namespace pagereel::serve::egress {

struct PolicyRules;  // Defined in policy.cc.

// One request that the policy stopped, as reported to the service.
struct Refusal {
  std::string host;     // As the page named it ("evil.test", "127.0.0.1", "::1").
  uint16_t port = 0;
  std::string address;  // The resolved address that was refused; empty when none was.
  std::string reason;   // "loopback address 127.0.0.1", "scheme ftp is not allowed", ...
  std::string request;  // "CONNECT evil.test:443" or "GET http://evil.test/x".
};

class Policy {
 public:
  // The default: public addresses over http(s), no resolve overrides.
  Policy();

  // An error names the bad entry and says what a good one looks like.
  static Result<Policy> Parse(const std::vector<std::string>& allow,
                              const std::vector<std::string>& resolve = {});

  ~Policy();
  Policy(const Policy&);
  Policy& operator=(const Policy&);
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  // Pure: why `address` (which `host` resolved to) may not be reached on `port`, or nullopt
  // when it may. `host` is lowercase without a trailing dot, or an IP literal.
  std::optional<std::string> RefusalReason(std::string_view host, uint16_t port,
                                           const boost::asio::ip::address& address) const;

  // Blocking: the addresses `host` resolves to (overrides first, then IP literals, then
  // getaddrinfo), without duplicates. NotFound when the name does not resolve.
  Result<std::vector<boost::asio::ip::address>> Resolve(std::string_view host,
                                                        uint16_t port) const;

  // Blocking: resolves host and checks every address. Returns nullopt when all may be
  // reached, else the refusal (without `request`); an error when the name does not resolve.
  Result<std::optional<Refusal>> Check(std::string_view host, uint16_t port) const;

 private:
  std::shared_ptr<const PolicyRules> rules_;  // Shared: copies of a Policy are cheap.
};

// The service's own check of a URL it is asked to capture, before navigating: only http and
// https; the host must resolve and pass the policy. Blocking (may resolve). The error is
// InvalidArgument with a message for the client, naming the URL and the reason
// ("http://10.0.0.1/ is refused: private address 10.0.0.1"), or NotFound when the host does
// not resolve. The proxy still checks every request the page then makes. URLs are read by
// http::ParseUrl (http/url.h), as the proxy reads them.
Status CheckUrl(const Policy& policy, std::string_view url);

}  // namespace pagereel::serve::egress

#endif  // PAGEREEL_SERVE_EGRESS_POLICY_H_
