// ParseUrl: the one URL parser of pagereel's servers, strict on purpose. The capture
// service reads a client's url= with it, and the egress policy and proxy read every
// request a page makes with it (serve/egress/), so the host a URL is judged by is the host
// the request goes to. Anything unusual in the authority (backslashes, percent signs,
// non-ASCII, an empty host) is an error, so a URL that another parser might read
// differently is refused rather than guessed at. serve/egress/ssrf_test.cc holds the
// spellings it has been tried against.
//
// Pure; safe from any thread.
#ifndef PAGEREEL_HTTP_URL_H_
#define PAGEREEL_HTTP_URL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace pagereel::http {

// Parts of an http, https, ws or wss URL.
struct UrlParts {
  std::string scheme;  // Lowercase.
  std::string host;    // Lowercase, no trailing dot; IP literals in canonical form, no [].
  uint16_t port = 0;   // The scheme's default when absent.
  std::string path;    // From the first '/' (or '?'), "/" when empty; no fragment.
};

// kInvalidArgument says what is wrong, as the end of a sentence about the URL ("its port
// "0" is not 1 to 65535", "scheme ftp is not allowed (only http, https, ws and wss)").
Result<UrlParts> ParseUrl(std::string_view url);

// A host as ParseUrl keeps it: lowercase, one trailing dot dropped, IP literals canonical
// (IPv4 in any form browsers accept: "127.1", "0x7f.0.0.1", "2130706433"; IPv6 in []).
// kInvalidArgument names what is wrong with it.
Result<std::string> NormaliseHost(std::string_view host);

// A port from 1 to 65535, in decimal; nullopt otherwise.
std::optional<uint16_t> ParsePort(std::string_view text);

}  // namespace pagereel::http

#endif  // PAGEREEL_HTTP_URL_H_
