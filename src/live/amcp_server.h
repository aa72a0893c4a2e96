// AmcpServer: CasparCG's control protocol (AMCP, lines over TCP) on a show, so that
// playout and graphics controllers made for CasparCG (its client, SPX, casparcg-connection)
// drive pagereel's sources without change. docs/live.md lists the commands and how a
// channel-layer names a source.
//
// Threads. The server owns two threads, started by Serve() and joined by Stop():
//  - "live-amcp", the Asio I/O thread: it accepts, reads lines and writes replies. Each
//    connection has one command in progress at a time (the next line is read once it is
//    answered), so what a client may make pagereel hold is bounded by the line limit and
//    the connection limit.
//  - "live-amcp-calls": the commands run here, one at a time in the order they came (they
//    talk to browsers and may take seconds): a controller's CG ADD then CG PLAY reach the
//    page in that order.
//
// Listen() binds before the show starts (a taken port is found before any browser is
// launched); Serve() starts answering. Listen, Serve and Stop belong to one thread; port(),
// host() and loopback() may be called from any thread.
#ifndef PAGEREEL_LIVE_AMCP_SERVER_H_
#define PAGEREEL_LIVE_AMCP_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "live/engine.h"

namespace pagereel::live {

struct AmcpOptions {
  // HOST:PORT with a numeric address or "localhost"; port 0 picks a free one.
  std::string listen = "127.0.0.1:5250";
  // When set, commands that change the show need "LOCK CHANNEL ACQUIRE TOKEN" on the
  // connection first (answered 503 otherwise); queries (INFO, VERSION, TLS, PING) do not.
  std::string token;
  int channel = 1;                     // The video channel the show is.
  std::map<int, std::string> layers;   // AMCP layer -> source id.
  std::map<std::string, std::string> urls;  // Source id -> the page it starts with.
  std::string templates;               // Folder CG ADD names are found in; empty: URLs only.
  int width = 1280, height = 720;      // For INFO.
  double fps = 25;
  int max_connections = 32;            // Beyond: closed at once.
  // Each refused command, in words (for the show's log); any thread.
  std::function<void(std::string_view)> log;
};

class AmcpServer {
 public:
  // Binds and listens; nothing is answered until Serve(). kInvalidArgument for an address
  // that is not HOST:PORT, kUnavailable (naming the address) when it cannot be bound.
  static Result<std::unique_ptr<AmcpServer>> Listen(const AmcpOptions& options);
  ~AmcpServer();  // Stop().
  AmcpServer(const AmcpServer&) = delete;
  AmcpServer& operator=(const AmcpServer&) = delete;

  // Starts the threads and answers for `engine`. REQUIRES: at most once; `engine` outlives
  // Stop().
  void Serve(Engine& engine);

  // Stops accepting, closes every connection, lets a command in progress return, and joins
  // the threads. Idempotent.
  void Stop();

  uint16_t port() const;
  const std::string& host() const;
  bool loopback() const;

  struct Impl;  // In amcp_server.cc, shared with its connections.

 private:
  explicit AmcpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_AMCP_SERVER_H_
