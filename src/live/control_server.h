// ControlServer: the control and status server of a live show: HTTP/1.1 and WebSocket on
// the show's control address, driving one Engine. docs/live.md lists the routes.
//
// Threads. The server owns two threads, started by Serve() and joined by Stop():
//  - "live-control", the Asio I/O thread: it reads, routes and answers every request. The
//    calls it makes into the Engine are the quick ones (CurrentStatus, Program,
//    SourcePicture, SetVisible); it also encodes the preview JPEGs (a few milliseconds,
//    each picture once).
//  - "live-ctl-calls": the calls that talk to a browser (Engine::CallSource and
//    Engine::Navigate, which may take seconds) run here, one at a time in the order they
//    came, so a client's update() then play() reach the page in that order. A slow call
//    delays later calls and navigations, but never the status, the previews, show/hide or
//    the engine's own threads.
//
// Listen() binds the address before the show starts (so a taken port is found before any
// browser is launched); Serve() starts answering. Listen, Serve and Stop belong to one
// thread; port(), host() and loopback() may be called from any thread.
#ifndef PAGEREEL_LIVE_CONTROL_SERVER_H_
#define PAGEREEL_LIVE_CONTROL_SERVER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "live/engine.h"
#include "live/template_call.h"  // TemplateCall, CheckSourceUrl.

namespace pagereel::live {

struct ControlOptions {
  // HOST:PORT with a numeric address or "localhost"; port 0 picks a free one.
  std::string listen = "127.0.0.1:8090";
  // When set, every route but GET /, GET /status and GET /metrics needs
  // "Authorization: Bearer TOKEN"; the WebSocket upgrade takes it as that header or ?token=.
  std::string token;
  // Where the CPU pressure (PSI) is read for /status and /metrics; empty or absent: none.
  std::string pressure_file = "/proc/pressure/cpu";
  // How often every WebSocket client is sent the status.
  std::chrono::milliseconds status_push_every{1000};
};

class ControlServer {
 public:
  // Binds and listens; nothing is answered until Serve(). kInvalidArgument for an address
  // that is not HOST:PORT, kUnavailable (naming the address) when it cannot be bound.
  static Result<std::unique_ptr<ControlServer>> Listen(const ControlOptions& options);
  // Listen() then Serve().
  static Result<std::unique_ptr<ControlServer>> Start(Engine& engine,
                                                      const ControlOptions& options);
  ~ControlServer();  // Stop().
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Starts the threads and answers requests for `engine`.
  // REQUIRES: called at most once; `engine` outlives Stop().
  void Serve(Engine& engine);

  // Stops accepting, closes every connection (WebSocket clients get a close frame), waits
  // for a browser call in progress to return, and joins the threads. Idempotent.
  void Stop();

  uint16_t port() const;
  const std::string& host() const;  // The bound address: "127.0.0.1", "::1", "0.0.0.0".
  bool loopback() const;            // Only this machine can reach it.
  std::string Url() const;          // "http://127.0.0.1:8090/".

  struct Impl;  // In control_server.cc, shared with its connections.

 private:
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The pieces, pure and safe from any thread (for the server and its tests); and, in
// template_call.h, the template calls and the URLs a source may be sent to.

// GET /status and GET /metrics for `status`; `pressure_text` is the content of
// /proc/pressure/cpu, or empty when there is none.
std::string StatusJson(const ShowStatus& status, std::string_view pressure_text);
std::string MetricsText(const ShowStatus& status, std::string_view pressure_text);

// A preview of a premultiplied picture as a JPEG (quality 80): shrunk by a whole factor to
// at most `max_width` pixels wide and composited over black (kBlack) or a grey checkerboard
// (kCheckerboard, so transparent parts show as such).
enum class Backdrop { kBlack, kCheckerboard };
Result<std::string> PreviewJpeg(const Picture& picture, int max_width, Backdrop backdrop);

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_CONTROL_SERVER_H_
