// LoopbackServer: a small HTTP/1.1 server on 127.0.0.1 for the egress tests, test-only.
//
// It answers every request with what the handler returns and records each connection and
// request, so a test can assert that a "victim" saw nothing. Keep-alive is honoured, so a
// proxy that reused one upstream connection for two requests would be seen.
// One I/O thread, owned and joined by the server; requests() and connections() may be
// read from any thread; the handler runs on the server's thread.
#ifndef PAGEREEL_SERVE_EGRESS_TEST_SERVER_H_
#define PAGEREEL_SERVE_EGRESS_TEST_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace pagereel::serve::egress::testing {

struct TestRequest {
  std::string method;
  std::string target;
  std::string host;
  std::string connection;  // The Connection header.
  bool proxy_headers = false;  // Any Proxy-* header arrived.
  std::string body;
};

struct TestResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

class LoopbackServer {
 public:
  using Handler = std::function<TestResponse(const TestRequest&)>;

  explicit LoopbackServer(Handler handler) : handler_(std::move(handler)) {
    namespace ip = boost::asio::ip;
    ip::tcp::endpoint where(ip::address_v4::loopback(), 0);
    acceptor_.open(where.protocol());
    acceptor_.set_option(boost::asio::socket_base::reuse_address(true));
    acceptor_.bind(where);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::jthread([this] { io_.run(); });
  }

  ~LoopbackServer() {
    io_.stop();
    thread_.join();
  }

  uint16_t port() const { return port_; }
  std::string Origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }
  std::vector<TestRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  struct Connection : std::enable_shared_from_this<Connection> {
    Connection(boost::asio::ip::tcp::socket s, LoopbackServer& server)
        : socket(std::move(s)), owner(server) {}
    void Read() {
      namespace http = boost::beast::http;
      parser.emplace();
      parser->body_limit(1 << 20);
      http::async_read(socket, buffer, *parser,
                       [self = shared_from_this()](boost::beast::error_code ec, size_t) {
                         if (ec) return;
                         self->OnRequest();
                       });
    }
    void OnRequest() {
      namespace http = boost::beast::http;
      auto& req = parser->get();
      TestRequest r;
      r.method = std::string(req.method_string());
      r.target = std::string(req.target());
      r.host = std::string(req[http::field::host]);
      r.connection = std::string(req[http::field::connection]);
      for (const auto& f : req) {
        std::string name(f.name_string());
        if (name.size() >= 6 && (name.substr(0, 6) == "Proxy-" || name.substr(0, 6) == "proxy-")) {
          r.proxy_headers = true;
        }
      }
      r.body = req.body();
      {
        std::lock_guard lock(owner.mu_);
        owner.requests_.push_back(r);
      }
      TestResponse out = owner.handler_(r);
      auto res = std::make_shared<http::response<http::string_body>>(
          static_cast<http::status>(out.status), req.version());
      res->set(http::field::content_type, out.content_type);
      for (const auto& [k, v] : out.headers) res->set(k, v);
      res->body() = std::move(out.body);
      res->keep_alive(req.keep_alive());
      res->prepare_payload();
      http::async_write(socket, *res,
                        [self = shared_from_this(), res](boost::beast::error_code ec, size_t) {
                          if (ec || !res->keep_alive()) {
                            self->socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
                            return;
                          }
                          self->Read();
                        });
    }
    boost::asio::ip::tcp::socket socket;
    LoopbackServer& owner;
    boost::beast::flat_buffer buffer;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser;
  };

  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec) return;
      ++connections_;
      std::make_shared<Connection>(std::move(s), *this)->Read();
      Accept();
    });
  }

  Handler handler_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  std::vector<TestRequest> requests_;  // Guarded by mu_.
  std::jthread thread_;
};

}  // namespace pagereel::serve::egress::testing

#endif  // PAGEREEL_SERVE_EGRESS_TEST_SERVER_H_
