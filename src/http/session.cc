#include "http/session.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <chrono>

namespace pagereel::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// How long an idle keep-alive connection, or a slow client's request, may take.
constexpr std::chrono::seconds kIdleTimeout{60};
constexpr size_t kMaxHeaderBytes = 16 * 1024;
// How long, and how much, a lingering close reads and drops (CloseMode::kLinger).
constexpr std::chrono::seconds kLingerTimeout{5};
constexpr size_t kMaxLingerBytes = 64 << 20;

}  // namespace

Session::Session(tcp::socket socket, const SessionOptions& options)
    : options_(options), stream_(std::move(socket)) {}

Session::~Session() = default;

void Session::Read() {
  parser_.emplace();
  parser_->body_limit(options_.max_body_bytes);
  parser_->header_limit(kMaxHeaderBytes);
  stream_.expires_after(kIdleTimeout);
  bhttp::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
}

void Session::OnRead(beast::error_code ec) {
  if (ec == bhttp::error::body_limit) {
    keep_alive_ = false;
    return Write(ReadError(413, options_.body_too_large));
  }
  if (ec == bhttp::error::header_limit) {
    keep_alive_ = false;
    return Write(ReadError(431, "the request's headers are larger than 16 KiB"));
  }
  if (ec) {
    if (ec != bhttp::error::end_of_stream && ec != beast::error::timeout &&
        ec != asio::error::connection_reset && ec != asio::error::operation_aborted &&
        stream_.socket().is_open()) {
      // A request that is not HTTP: answer once, then hang up.
      keep_alive_ = false;
      return Write(ReadError(400, "the request is not valid HTTP/1.1: " + ec.message()));
    }
    return Close();
  }
  request_ = parser_->release();
  keep_alive_ = request_.keep_alive();
  HandleRequest();
}

void Session::Write(Response response) {
  if (!stream_.socket().is_open()) return;
  beast::error_code ignored;
  stream_.socket().cancel(ignored);  // A wait on the socket (serve's client-left watch).
  const bool stopping = options_.stopping != nullptr && options_.stopping->load();
  response.keep_alive(keep_alive_ && !stopping);
  response.set(bhttp::field::server, "pagereel");
  if (options_.no_store) response.set(bhttp::field::cache_control, "no-store");
  response.prepare_payload();
  auto shared = std::make_shared<Response>(std::move(response));
  stream_.expires_after(kIdleTimeout);
  bhttp::async_write(stream_, *shared,
                     [self = shared_from_this(), shared](beast::error_code ec, size_t) {
                       if (ec || !shared->keep_alive()) return self->Close();
                       self->Read();
                     });
}

void Session::Close() {
  beast::error_code ignored;
  if (options_.close == CloseMode::kAtOnce) {
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    return;
  }
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(kLingerTimeout);
  Drain(std::make_shared<Scratch>(), 0);
}

void Session::Drain(std::shared_ptr<Scratch> scratch, size_t drained) {
  stream_.async_read_some(asio::buffer(*scratch), [self = shared_from_this(), scratch, drained](
                                                      beast::error_code ec, size_t n) {
    if (ec || drained + n > kMaxLingerBytes) return self->stream_.close();
    self->Drain(scratch, drained + n);
  });
}

std::optional<tcp::endpoint> ParseListenAddress(std::string_view text, HostNames names) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (names == HostNames::kLocalhost && beast::iequals(host, "localhost")) host = "127.0.0.1";
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec || port_text.empty() || port_text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  unsigned port = 0;
  auto [end, parse_error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (parse_error != std::errc() || port > 65535) return std::nullopt;
  return tcp::endpoint(address, static_cast<uint16_t>(port));
}

Status Listen(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, std::string_view shown) {
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return UnavailableError("cannot listen on " + std::string(shown) + ": " + ec.message());
  return Status::Ok();
}

}  // namespace pagereel::http
