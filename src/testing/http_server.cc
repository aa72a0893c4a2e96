#include "testing/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include <optional>

namespace pagereel::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};

  // One connection: requests one after another (keep-alive), each answered by the server.
  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(tcp::socket socket, HttpServer& server) : stream_(std::move(socket)), server_(server) {}

    void Read() {
      parser_.emplace();
      parser_->body_limit(1 << 20);
      http::async_read(stream_, buffer_, *parser_,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) return;
                         self->Write();
                       });
    }

   private:
    void Write() {
      const auto& in = parser_->get();
      Request request;
      request.method = std::string(in.method_string());
      request.target = std::string(in.target());
      request.host = std::string(in[http::field::host]);
      request.connection = std::string(in[http::field::connection]);
      for (const auto& field : in) {
        std::string_view name = field.name_string();
        if (name.size() >= 6 && beast::iequals(name.substr(0, 6), "Proxy-")) {
          request.proxy_headers = true;
        }
      }
      request.body = in.body();
      Response r = server_.Answer(request);
      auto response = std::make_shared<http::response<http::string_body>>(
          static_cast<http::status>(r.status), in.version());
      response->set(http::field::content_type, r.content_type);
      for (const auto& [name, value] : r.headers) response->set(name, value);
      response->body() = std::move(r.body);
      response->keep_alive(in.keep_alive());
      response->prepare_payload();
      http::async_write(stream_, *response,
                        [self = shared_from_this(), response](beast::error_code ec, size_t) {
                          if (ec || !response->keep_alive()) return;
                          self->Read();
                        });
    }

    beast::tcp_stream stream_;
    HttpServer& server_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
  };

  void Accept(HttpServer& server) {
    acceptor.async_accept([this, &server](beast::error_code ec, tcp::socket socket) {
      if (ec) return;  // Closed: the server is stopping.
      ++server.connections_;
      std::make_shared<Session>(std::move(socket), server)->Read();
      Accept(server);
    });
  }
};

HttpServer::HttpServer() : impl_(std::make_unique<Impl>()) { Start(); }

HttpServer::HttpServer(Handler handler)
    : impl_(std::make_unique<Impl>()), handler_(std::move(handler)) {
  Start();
}

void HttpServer::Start() {
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->Accept(*this);
  thread_ = std::thread([this] { impl_->io.run(); });
}

HttpServer::~HttpServer() {
  impl_->io.stop();
  thread_.join();
}

void HttpServer::Serve(const std::string& path, Response response) {
  MutexLock lock(&mu_);
  routes_[path] = std::move(response);
}

std::vector<std::string> HttpServer::Requests() const {
  MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const Request& r : requests_) out.push_back(r.method + " " + r.target);
  return out;
}

std::vector<HttpServer::Request> HttpServer::ReceivedRequests() const {
  MutexLock lock(&mu_);
  return requests_;
}

HttpServer::Response HttpServer::Answer(const Request& request) {
  {
    MutexLock lock(&mu_);
    requests_.push_back(request);
  }
  if (handler_) return handler_(request);
  MutexLock lock(&mu_);
  auto it = routes_.find(request.target.substr(0, request.target.find('?')));
  if (it == routes_.end()) return Response{.status = 404, .body = "not found"};
  return it->second;
}

}  // namespace pagereel::testing
