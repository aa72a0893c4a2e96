#include "serve/egress/policy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>

#include "http/url.h"
#include "serve/egress/address_class.h"

namespace pagereel::serve::egress {

namespace ip = boost::asio::ip;

struct PolicyRules {
  struct Origin {
    std::string host;  // Normalised; for "*.example.com" the suffix ".example.com".
    bool subdomains = false;
    uint16_t port = 0;
  };
  struct Override {
    std::string host;
    std::optional<uint16_t> port;  // nullopt: every port.
    std::vector<ip::address> addresses;
  };
  std::vector<Origin> origins;
  std::vector<ip::network_v4> v4_blocks;
  std::vector<ip::network_v6> v6_blocks;
  std::vector<Override> overrides;
};

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
  return out;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::optional<ip::address> LiteralAddress(std::string_view host) {
  boost::system::error_code ec;
  ip::address a = ip::make_address(std::string(host), ec);
  if (ec) return std::nullopt;
  return a;
}

Result<PolicyRules::Origin> ParseOrigin(const std::string& entry) {
  auto bad = [&](std::string why) {
    return InvalidArgumentError("allow entry " + Quoted(entry) + ": " + why +
                                " (an origin looks like https://intranet.example or "
                                "http://127.0.0.1:8081)");
  };
  size_t sep = entry.find("://");
  std::string scheme = Lower(std::string_view(entry).substr(0, sep));
  std::string_view rest = std::string_view(entry).substr(sep + 3);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos) {
    return bad("an origin has no path, query or user name");
  }
  bool subdomains = rest.starts_with("*.");
  if (subdomains) rest.remove_prefix(2);
  Result<http::UrlParts> parts = http::ParseUrl(scheme + "://" + std::string(rest) + "/");
  if (!parts.ok()) return bad(std::string(parts.status().message()));
  PolicyRules::Origin origin;
  origin.host = subdomains ? "." + parts->host : parts->host;
  origin.subdomains = subdomains;
  origin.port = parts->port;
  return origin;
}

Status ParseBlock(const std::string& entry, PolicyRules& rules) {
  auto bad = [&](std::string why) {
    return InvalidArgumentError("allow entry " + Quoted(entry) + ": " + why +
                                " (a CIDR block looks like 10.0.0.0/8 or fd00::/8)");
  };
  size_t slash = entry.find('/');
  std::string addr_text = entry.substr(0, slash);
  if (addr_text.size() > 2 && addr_text.front() == '[' && addr_text.back() == ']') {
    addr_text = addr_text.substr(1, addr_text.size() - 2);
  }
  std::optional<ip::address> addr = LiteralAddress(addr_text);
  if (!addr || addr_text.find('%') != std::string::npos) {
    return bad("it is neither an origin (scheme://host) nor an IP address or CIDR block");
  }
  int max_prefix = addr->is_v4() ? 32 : 128;
  int prefix = max_prefix;
  if (slash != std::string::npos) {
    std::string_view p = std::string_view(entry).substr(slash + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || prefix < 0 ||
        prefix > max_prefix) {
      return bad("the prefix length must be a number from 0 to " + std::to_string(max_prefix));
    }
  }
  if (addr->is_v4()) {
    ip::network_v4 net(addr->to_v4(), static_cast<unsigned short>(prefix));
    if (net.canonical() != net) {
      return bad("it has bits set after the prefix; did you mean " +
                 net.canonical().to_string() + "?");
    }
    rules.v4_blocks.push_back(net);
  } else {
    ip::network_v6 net(addr->to_v6(), static_cast<unsigned short>(prefix));
    if (net.canonical() != net) {
      return bad("it has bits set after the prefix; did you mean " +
                 net.canonical().to_string() + "?");
    }
    rules.v6_blocks.push_back(net);
  }
  return Status::Ok();
}

Result<PolicyRules::Override> ParseOverride(const std::string& entry) {
  auto bad = [&](std::string why) {
    return InvalidArgumentError("resolve entry " + Quoted(entry) + ": " + why +
                                " (write host:port:address[,address...], e.g. "
                                "evil.test:80:127.0.0.1 or example.com:*:[::1])");
  };
  size_t first = entry.find(':');
  size_t second = first == std::string::npos ? first : entry.find(':', first + 1);
  if (second == std::string::npos) return bad("it needs three parts separated by ':'");
  PolicyRules::Override o;
  Result<std::string> host = http::NormaliseHost(entry.substr(0, first));
  if (!host.ok()) return bad(std::string(host.status().message()));
  o.host = std::move(host).value();
  std::string port = entry.substr(first + 1, second - first - 1);
  if (port != "*") {
    o.port = http::ParsePort(port);
    if (!o.port) return bad("the port must be 1 to 65535 or *");
  }
  std::string_view list = std::string_view(entry).substr(second + 1);
  while (true) {
    size_t comma = list.find(',');
    std::string one(list.substr(0, comma));
    if (one.size() > 2 && one.front() == '[' && one.back() == ']') one = one.substr(1, one.size() - 2);
    std::optional<ip::address> a = LiteralAddress(one);
    if (!a) return bad(Quoted(one) + " is not an IP address");
    o.addresses.push_back(*a);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return o;
}

std::string DescribeAddress(const ip::address& a) {
  std::string text = a.to_string();
  if (a.is_v6()) {
    if (std::optional<uint32_t> v4 = EmbeddedIpv4(a.to_v6())) {
      text += " (IPv4 " + ip::address_v4(*v4).to_string() + ")";
    }
  }
  return text;
}

bool InBlock(const ip::address_v4& a, const ip::network_v4& block) {
  return ip::network_v4(a, block.prefix_length()).canonical() == block;
}

bool InBlock(const ip::address_v6& a, const ip::network_v6& block) {
  return ip::network_v6(ip::address_v6(a.to_bytes()), block.prefix_length()).canonical() == block;
}

}  // namespace

Policy::Policy() : rules_(std::make_shared<PolicyRules>()) {}
Policy::~Policy() = default;
Policy::Policy(const Policy&) = default;
Policy& Policy::operator=(const Policy&) = default;
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;

Result<Policy> Policy::Parse(const std::vector<std::string>& allow,
                             const std::vector<std::string>& resolve) {
  auto rules = std::make_shared<PolicyRules>();
  for (const std::string& entry : allow) {
    if (entry.empty()) {
      return InvalidArgumentError("an allow entry is empty (write an origin such as "
                                  "https://intranet.example or a CIDR block such as 10.0.0.0/8)");
    }
    if (entry.find("://") != std::string::npos) {
      PR_ASSIGN_OR_RETURN(PolicyRules::Origin origin, ParseOrigin(entry));
      rules->origins.push_back(std::move(origin));
    } else {
      PR_RETURN_IF_ERROR(ParseBlock(entry, *rules));
    }
  }
  for (const std::string& entry : resolve) {
    PR_ASSIGN_OR_RETURN(PolicyRules::Override o, ParseOverride(entry));
    rules->overrides.push_back(std::move(o));
  }
  Policy policy;
  policy.rules_ = std::move(rules);
  return policy;
}

std::optional<std::string> Policy::RefusalReason(std::string_view host, uint16_t port,
                                                 const ip::address& address) const {
  for (const PolicyRules::Origin& o : rules_->origins) {
    if (o.port != port) continue;
    if (o.subdomains ? (host.size() > o.host.size() && host.ends_with(o.host)) : host == o.host) {
      return std::nullopt;
    }
  }
  AddressClass cls = Classify(address);
  if (cls == AddressClass::kPublic) return std::nullopt;
  std::optional<ip::address_v4> v4;
  if (address.is_v4()) {
    v4 = address.to_v4();
  } else if (std::optional<uint32_t> embedded = EmbeddedIpv4(address.to_v6())) {
    v4 = ip::address_v4(*embedded);
  }
  if (v4) {
    for (const ip::network_v4& block : rules_->v4_blocks) {
      if (InBlock(*v4, block)) return std::nullopt;
    }
  }
  if (address.is_v6()) {
    for (const ip::network_v6& block : rules_->v6_blocks) {
      if (InBlock(address.to_v6(), block)) return std::nullopt;
    }
  }
  return std::string(AddressClassName(cls)) + " address " + DescribeAddress(address);
}

Result<std::vector<ip::address>> Policy::Resolve(std::string_view host, uint16_t port) const {
  for (const PolicyRules::Override& o : rules_->overrides) {
    if (o.host == host && (!o.port || *o.port == port)) return o.addresses;
  }
  std::string name(host);
  if (std::optional<ip::address> literal = LiteralAddress(name)) {
    return std::vector<ip::address>{*literal};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rc != 0) {
    return NotFoundError("could not resolve " + name + ": " + ::gai_strerror(rc));
  }
  std::vector<ip::address> out;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    ip::address a;
    if (ai->ai_family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      a = ip::address_v4(ntohl(sin->sin_addr.s_addr));
    } else if (ai->ai_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      ip::address_v6::bytes_type bytes;
      std::copy(std::begin(sin6->sin6_addr.s6_addr), std::end(sin6->sin6_addr.s6_addr),
                bytes.begin());
      a = ip::address_v6(bytes, sin6->sin6_scope_id);
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  ::freeaddrinfo(found);
  if (out.empty()) return NotFoundError("could not resolve " + name + ": no IP address");
  return out;
}

Result<std::optional<Refusal>> Policy::Check(std::string_view host, uint16_t port) const {
  PR_ASSIGN_OR_RETURN(std::vector<ip::address> addresses, Resolve(host, port));
  for (const ip::address& a : addresses) {
    if (std::optional<std::string> why = RefusalReason(host, port, a)) {
      return std::optional<Refusal>(Refusal{std::string(host), port, a.to_string(), *why, ""});
    }
  }
  return std::optional<Refusal>();
}

Status CheckUrl(const Policy& policy, std::string_view url) {
  std::string scheme = Lower(url.substr(0, url.find(':')));
  if (scheme != "http" && scheme != "https" && url.find(':') != std::string_view::npos) {
    return InvalidArgumentError("the URL " + Quoted(url) + " is refused: scheme " + scheme +
                                " is not allowed (only http and https)");
  }
  Result<http::UrlParts> parts = http::ParseUrl(url);
  if (!parts.ok()) {
    return InvalidArgumentError("the URL " + Quoted(url) + " is refused: " +
                                std::string(parts.status().message()));
  }
  Result<std::optional<Refusal>> refusal = policy.Check(parts->host, parts->port);
  if (!refusal.ok()) return refusal.status().WithContext("the URL " + Quoted(url));
  if (*refusal) {
    return InvalidArgumentError("the URL " + Quoted(url) + " is refused: " + (*refusal)->reason +
                                " (only public addresses may be captured unless the service "
                                "allows more)");
  }
  return Status::Ok();
}

}  // namespace pagereel::serve::egress
