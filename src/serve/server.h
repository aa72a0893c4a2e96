// Server: `pagereel serve`, the HTTP capture service. HTTP/1.1 with keep-alive on
// Boost.Beast; the I/O thread only reads, routes, checks parameters and writes: captures
// run on the admission's worker threads (see admission.h) against the browser pool (see
// browser_pool.h), each in a fresh browser context. docs/serve.md describes the routes.
//
// Thread-safe.
#ifndef PAGEREEL_SERVE_SERVER_H_
#define PAGEREEL_SERVE_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "serve/admission.h"
#include "serve/browser_pool.h"
#include "serve/request.h"

namespace pagereel::serve {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one.
  // For both kinds of browser; their launch.frame_control is the server's own.
  PoolOptions pool;
  AdmissionOptions admission;  // capacity is set from the pool: browsers × per_browser.
  Limits limits;
  std::string token;  // When set, every route but /healthz and /readyz needs "Bearer TOKEN".
  // What pages may reach beyond public http(s) addresses (origins and CIDR blocks), and
  // names resolved by hand (curl's HOST:PORT:ADDR); see egress/policy.h. Every request
  // of every page goes through the service's egress proxy, which checks it.
  std::vector<std::string> allow;
  std::vector<std::string> resolve;
  // The most client connections open at once; past it a new connection is answered 503
  // and closed at once, so descriptors are left for captures (the egress proxy, the
  // browsers' pipes). 0: half the process's descriptor limit (RLIMIT_NOFILE), at least 64
  // and at most 16384.
  int max_connections = 0;
  // How long in-flight captures may take to finish after SIGTERM before browsers are killed.
  std::chrono::milliseconds grace{10'000};
  // Where GIFs and clips are written while they are made; default: a new folder in the
  // system's temporary folder, removed at shutdown.
  std::string work_dir;
  // Where the one-line JSON logs go (default: stderr).
  std::function<void(const std::string&)> log;
};

class Server {
 public:
  // Binds the address, launches the first browser and starts serving.
  static Result<std::unique_ptr<Server>> Start(ServeOptions options);
  ~Server();  // Shutdown().

  uint16_t port() const;

  // Stops accepting, rejects waiting captures, lets running ones finish within the grace
  // period, kills the browsers and stops. Idempotent; returns once done.
  void Shutdown();

  struct Impl;  // In server.cc, shared with its connections.

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_SERVER_H_
