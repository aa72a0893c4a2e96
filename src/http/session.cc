#include "http/session.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <chrono>
#include <exception>

namespace pagereel::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// How long an idle keep-alive connection, or a slow client's request, may take.
constexpr std::chrono::seconds kIdleTimeout{60};
// How long, and how much, a lingering close reads and drops (CloseMode::kLinger).
constexpr std::chrono::seconds kLingerTimeout{5};
constexpr size_t kMaxLingerBytes = 64 << 20;

// Whether a request asks for "100 Continue" before it sends its body (RFC 9110, 10.1.1).
bool WantsContinue(const Request& header) {
  return header.version() >= 11 && beast::iequals(header[bhttp::field::expect], "100-continue");
}

}  // namespace

Session::Session(tcp::socket socket, const SessionOptions& options)
    : options_(options),
      stream_(std::move(socket)),
      reader_(options.max_body_bytes, options.body_too_large) {}

Session::~Session() = default;

std::optional<Response> Session::CheckHeader(const Request&) { return std::nullopt; }

void Session::Read() {
  reader_.Start();
  stream_.expires_after(kIdleTimeout);  // For the whole request, however slowly it comes.
  Parse();
}

void Session::Parse() {
  for (;;) {
    switch (reader_.Next()) {
      case RequestReader::Step::kNeedMore:
        return ReadSome();
      case RequestReader::Step::kHeader: {
        std::optional<Response> refusal;
        try {
          refusal = CheckHeader(reader_.header());
        } catch (const std::exception& e) {
          return Refuse(500, std::string("the server failed on this request's header: ") +
                                 e.what());
        }
        if (!refusal) {
          // A client that asked to be told before it sends its body (curl does for bodies
          // over 1 MiB) is told now: the header passed.
          if (!reader_.done() && WantsContinue(reader_.header())) return WriteContinue();
          continue;
        }
        // A body still to come is not read: the connection cannot go on to the next request.
        keep_alive_ = reader_.done() && reader_.header().keep_alive();
        return Write(std::move(*refusal));
      }
      case RequestReader::Step::kRequest: {
        request_ = reader_.TakeRequest();
        keep_alive_ = request_.keep_alive();
        const int writes = writes_;
        try {
          HandleRequest();
        } catch (const std::exception& e) {
          // Answered already: the answer goes out, and the connection closes after it.
          failed_ = true;
          if (writes_ != writes) return;
          return Refuse(500, std::string("the server failed on this request: ") + e.what());
        }
        return;
      }
      case RequestReader::Step::kRefused: {
        const ReadRefusal& refusal = reader_.refusal();
        if (refusal.status == 0 || !stream_.socket().is_open()) return Close();
        return Refuse(refusal.status, refusal.detail);
      }
    }
  }
}

void Session::WriteContinue() {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  asio::async_write(stream_, asio::buffer(kContinue),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      if (ec) return self->Close();
                      self->Parse();  // On to the body.
                    });
}

void Session::ReadSome() {
  stream_.async_read_some(reader_.Room(), [self = shared_from_this()](beast::error_code ec,
                                                                      size_t n) {
    if (ec == asio::error::eof) {
      self->reader_.Ended();
    } else if (ec) {
      // Timed out, reset, or cancelled: nobody to answer.
      return self->Close();
    } else {
      self->reader_.Received(n);
    }
    self->Parse();
  });
}

void Session::Refuse(int status, const std::string& detail) {
  keep_alive_ = false;
  Response response;
  try {
    response = ReadError(status, detail);
  } catch (const std::exception&) {
    response = Response{bhttp::status::internal_server_error, 11};
  }
  Write(std::move(response));
}

void Session::Write(Response response) {
  ++writes_;
  request_ = {};  // The handler is done with it: a body is not kept while the connection idles.
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
                       if (ec || !shared->keep_alive() || self->failed_) return self->Close();
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
  // Opened close-on-exec (Asio's open() is not), so the browsers pagereel starts do not
  // inherit the listener: one that did kept the port taking connections nobody would
  // accept after pagereel closed it, and they were reset when the browsers went.
  const int fd = ::socket(endpoint.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    ec.assign(errno, boost::system::system_category());
  } else {
    acceptor.assign(endpoint.protocol(), fd, ec);
    if (ec) ::close(fd);
  }
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return UnavailableError("cannot listen on " + std::string(shown) + ": " + ec.message());
  return Status::Ok();
}

void RunIo(asio::io_context& io, const std::function<void(std::string_view)>& report) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      report(e.what());
    } catch (...) {
      report("an exception that is not a std::exception");
    }
  }
}

}  // namespace pagereel::http
