#include "http/url.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/address_v6.hpp>
#include <charconv>

namespace pagereel::http {

namespace ip = boost::asio::ip;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::optional<uint16_t> DefaultPort(std::string_view scheme) {
  if (scheme == "http" || scheme == "ws") return 80;
  if (scheme == "https" || scheme == "wss") return 443;
  return std::nullopt;
}

bool IsHostNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

// An IPv4 literal in any form the WHATWG URL parser and inet_aton accept ("127.1",
// "0x7f.0.0.1", "2130706433"), so that both read the same address.
std::optional<ip::address_v4> ParseIpv4Literal(const std::string& host) {
  if (host.empty() || host.find_first_not_of("0123456789abcdefxABCDEFX.") != std::string::npos) {
    return std::nullopt;
  }
  in_addr a{};
  if (::inet_aton(host.c_str(), &a) == 0) return std::nullopt;
  return ip::address_v4(ntohl(a.s_addr));
}

}  // namespace

std::optional<uint16_t> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(value);
}

Result<std::string> NormaliseHost(std::string_view raw) {
  if (raw.empty()) return InvalidArgumentError("the host is empty");
  if (raw.front() == '[') {
    if (raw.back() != ']') return InvalidArgumentError("an IPv6 address must be closed with ']'");
    std::string inner(raw.substr(1, raw.size() - 2));
    boost::system::error_code ec;
    ip::address_v6 v6 = ip::make_address_v6(inner, ec);
    if (ec || inner.find('%') != std::string::npos) {
      return InvalidArgumentError("bad IPv6 address " + Quoted(inner));
    }
    return v6.to_string();
  }
  for (char c : raw) {
    if (!IsHostNameChar(c)) {
      return InvalidArgumentError("the host " + Quoted(raw) +
                                  " has a character other than letters, digits, '-', '.' "
                                  "and '_' (write international names in punycode)");
    }
  }
  std::string host = Lower(raw);
  if (host.size() > 1 && host.back() == '.') host.pop_back();
  if (host.empty() || host == ".") return InvalidArgumentError("the host is empty");
  if (std::optional<ip::address_v4> v4 = ParseIpv4Literal(host)) host = v4->to_string();
  return host;
}

Result<UrlParts> ParseUrl(std::string_view url) {
  size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgumentError("it has no scheme (write http:// or https://)");
  }
  UrlParts parts;
  parts.scheme = Lower(url.substr(0, colon));
  if (parts.scheme.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789+.-") !=
      std::string::npos) {
    return InvalidArgumentError("its scheme is not valid");
  }
  std::optional<uint16_t> default_port = DefaultPort(parts.scheme);
  if (!default_port) {
    return InvalidArgumentError("scheme " + parts.scheme +
                                " is not allowed (only http, https, ws and wss)");
  }
  std::string_view rest = url.substr(colon + 1);
  if (!rest.starts_with("//")) return InvalidArgumentError("it has no //host after the scheme");
  rest.remove_prefix(2);
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? "" : rest.substr(end);
  if (size_t hash = tail.find('#'); hash != std::string_view::npos) tail = tail.substr(0, hash);
  parts.path =
      tail.empty() ? "/" : (tail.front() == '?' ? "/" + std::string(tail) : std::string(tail));
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f ||
        c == '\\') {
      return InvalidArgumentError(
          "it has a space, control character, backslash or non-ASCII character");
    }
  }
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with("[")) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgumentError("its IPv6 host has no ']'");
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return InvalidArgumentError("it has text after the IPv6 host");
      port = after.substr(1);
    }
  } else if (size_t c = authority.rfind(':'); c != std::string_view::npos) {
    host = authority.substr(0, c);
    port = authority.substr(c + 1);
  }
  PR_ASSIGN_OR_RETURN(parts.host, NormaliseHost(host));
  parts.port = *default_port;
  if (!port.empty()) {
    std::optional<uint16_t> p = ParsePort(port);
    if (!p) return InvalidArgumentError("its port " + Quoted(port) + " is not 1 to 65535");
    parts.port = *p;
  }
  return parts;
}

}  // namespace pagereel::http
