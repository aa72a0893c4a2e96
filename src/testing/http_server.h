// HttpServer: a small HTTP/1.1 server on 127.0.0.1 for tests, serving fixed responses by
// path (query strings ignored) and recording every request it sees. Keep-alive; one
// thread. Thread-safe.
#ifndef PAGEREEL_TESTING_HTTP_SERVER_H_
#define PAGEREEL_TESTING_HTTP_SERVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pagereel::testing {

class HttpServer {
 public:
  struct Response {
    int status = 200;
    std::string content_type = "text/html; charset=utf-8";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
  };

  HttpServer();  // Listens on an ephemeral port of 127.0.0.1 at once.
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
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  // Every request seen so far, as "METHOD target".
  std::vector<std::string> Requests() const;

 private:
  struct Impl;
  friend struct Impl;
  Response Answer(const std::string& method, const std::string& target);

  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, Response> routes_;  // Guarded by mu_.
  std::vector<std::string> requests_;       // Guarded by mu_.
  std::thread thread_;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_HTTP_SERVER_H_
