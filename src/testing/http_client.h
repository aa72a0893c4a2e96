// Test helper: one HTTP/1.1 request to a service on 127.0.0.1, on a fresh connection, with
// Boost.Beast; and percent-encoding for query values.
#ifndef PAGEREEL_TESTING_HTTP_CLIENT_H_
#define PAGEREEL_TESTING_HTTP_CLIENT_H_

#include <boost/beast/http/verb.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagereel::testing {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string retry_after;
  std::string wait;  // pagereel serve's Pagereel-Wait: what ended the wait for the page.
  std::string body;
  std::string error;  // A transport failure (refused, reset); status is 0 then.
  // Every header of the answer, in order, a name as often as it came.
  std::vector<std::pair<std::string, std::string>> headers;

  // The values of every header called `name` (case-insensitive), in order.
  std::vector<std::string> Headers(std::string_view name) const;
};

// `headers` are set last (they may replace Host, for instance).
HttpReply Fetch(uint16_t port, boost::beast::http::verb method, const std::string& target,
                std::string body = "", const std::string& content_type = "",
                const std::string& authorization = "",
                const std::vector<std::pair<std::string, std::string>>& headers = {});
HttpReply Get(uint16_t port, const std::string& target);

// Every byte but letters, digits and -_. as %XX: fit for a query value.
std::string Encode(const std::string& text);

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_HTTP_CLIENT_H_
