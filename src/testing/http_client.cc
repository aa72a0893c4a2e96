#include "testing/http_client.h"

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <cctype>
#include <cstdio>
#include <exception>

namespace pagereel::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpReply Fetch(uint16_t port, http::verb method, const std::string& target, std::string body,
                const std::string& content_type, const std::string& authorization,
                const std::vector<std::pair<std::string, std::string>>& headers) {
  HttpReply reply;
  try {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (!content_type.empty()) request.set(http::field::content_type, content_type);
    if (!authorization.empty()) request.set(http::field::authorization, authorization);
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = std::move(body);
    request.prepare_payload();
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(stream, buffer, parser);
    auto& response = parser.get();
    reply.status = response.result_int();
    reply.content_type = std::string(response[http::field::content_type]);
    reply.retry_after = std::string(response[http::field::retry_after]);
    reply.wait = std::string(response["Pagereel-Wait"]);
    reply.body = response.body();
    for (const auto& field : response) {
      reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
  } catch (const std::exception& e) {
    reply.error = e.what();
  }
  return reply;
}

std::vector<std::string> HttpReply::Headers(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [key, value] : headers) {
    if (beast::iequals(key, name)) out.push_back(value);
  }
  return out;
}

HttpReply Get(uint16_t port, const std::string& target) {
  return Fetch(port, http::verb::get, target);
}

std::string Encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace pagereel::testing
