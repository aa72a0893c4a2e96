#include "testing/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast.hpp>

namespace pagereel::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer* server,
          std::function<HttpServer::Response(const std::string&, const std::string&)> answer)
      : stream_(std::move(socket)), server_(server), answer_(std::move(answer)) {}

  void Read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return;
                       self->Write();
                     });
  }

 private:
  void Write() {
    HttpServer::Response r =
        answer_(std::string(request_.method_string()), std::string(request_.target()));
    auto response = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), request_.version());
    response->set(http::field::content_type, r.content_type);
    for (const auto& [name, value] : r.headers) response->set(name, value);
    response->body() = std::move(r.body);
    response->keep_alive(request_.keep_alive());
    response->prepare_payload();
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code ec, size_t) {
                        if (ec || !response->keep_alive()) return;
                        self->Read();
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  [[maybe_unused]] HttpServer* server_;
  std::function<HttpServer::Response(const std::string&, const std::string&)> answer_;
};

void Accept(tcp::acceptor& acceptor, HttpServer* server,
            const std::function<HttpServer::Response(const std::string&, const std::string&)>& answer) {
  acceptor.async_accept([&acceptor, server, answer](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // Closed: the server is stopping.
    std::make_shared<Session>(std::move(socket), server, answer)->Read();
    Accept(acceptor, server, answer);
  });
}

}  // namespace

HttpServer::HttpServer() : impl_(std::make_unique<Impl>()) {
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  Accept(impl_->acceptor, this, [this](const std::string& method, const std::string& target) {
    return Answer(method, target);
  });
  thread_ = std::thread([this] { impl_->io.run(); });
}

HttpServer::~HttpServer() {
  impl_->io.stop();
  thread_.join();
}

void HttpServer::Serve(const std::string& path, Response response) {
  std::lock_guard lock(mu_);
  routes_[path] = std::move(response);
}

std::vector<std::string> HttpServer::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

HttpServer::Response HttpServer::Answer(const std::string& method, const std::string& target) {
  std::lock_guard lock(mu_);
  requests_.push_back(method + " " + target);
  std::string path = target.substr(0, target.find('?'));
  auto it = routes_.find(path);
  if (it == routes_.end()) {
    Response missing;
    missing.status = 404;
    missing.body = "not found";
    return missing;
  }
  return it->second;
}

}  // namespace pagereel::testing
