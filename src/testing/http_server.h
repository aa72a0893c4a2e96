// HttpServer: a small HTTP/1.1 server on 127.0.0.1 for tests and benchmarks. It answers
// from fixed responses by path (query strings ignored), or from a handler, and records
// every request and connection, so a test can also assert that a "victim" saw nothing.
// Keep-alive is honoured, so a proxy that reused one upstream connection for two requests
// is seen. One I/O thread, owned and joined by the server; a handler runs on it; the rest
// may be called from any thread.
#ifndef PAGEREEL_TESTING_HTTP_SERVER_H_
#define PAGEREEL_TESTING_HTTP_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace pagereel::testing {

class HttpServer {
 public:
  struct Request {
    std::string method;
    std::string target;
    std::string host;
    std::string connection;      // The Connection header.
    bool proxy_headers = false;  // Any Proxy-* header arrived.
    std::string body;
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/html; charset=utf-8";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  using Handler = std::function<Response(const Request&)>;

  // Both listen on an ephemeral port of 127.0.0.1 at once. The first answers what Serve()
  // was given (unknown paths: 404); the second answers every request with `handler`.
  HttpServer();
  explicit HttpServer(Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // What `path` answers; unknown paths answer 404.
  void Serve(const std::string& path, Response response);
  void Serve(const std::string& path, std::string html) {
    Response response;
    response.body = std::move(html);
    Serve(path, std::move(response));
  }

  uint16_t port() const { return port_; }
  std::string Origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string Url(const std::string& path) const { return Origin() + path; }
  // Every request seen so far, as "METHOD target".
  std::vector<std::string> Requests() const;
  // The same, whole.
  std::vector<Request> ReceivedRequests() const;
  // Connections accepted so far.
  int connections() const { return connections_.load(); }

 private:
  struct Impl;
  friend struct Impl;
  void Start();
  Response Answer(const Request& request);

  std::unique_ptr<Impl> impl_;
  const Handler handler_;  // Empty: the routes.
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  mutable Mutex mu_;
  std::map<std::string, Response> routes_ GUARDED_BY(mu_);
  std::vector<Request> requests_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_HTTP_SERVER_H_
