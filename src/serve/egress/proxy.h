// Proxy: the browser's only way out to the network, checking every request on the
// resolved address.
//
// An HTTP proxy on 127.0.0.1 (an ephemeral port) that the browser is started with
// (BrowserArgs()). It serves the two forms Chromium sends to an HTTP proxy:
//   - CONNECT host:port, for https and for WebSockets (ws and wss), and
//   - absolute-form requests "GET http://host/path HTTP/1.1", for plain http.
// For each it resolves the host itself (resolve overrides, literals, getaddrinfo on a small
// pool of lookup threads, never on the I/O thread), checks every address against the
// Policy, and connects only to the addresses it checked, so a name that re-resolves
// elsewhere (DNS rebinding) cannot switch the destination. A refused request is answered
// "403 Forbidden" with a one-line text body, counted, and reported to the refusal handler
// with its details; the body names no address, and a name that does not resolve or answer
// gets the same 502 text as any other, so pages cannot map the inside through the proxy.
// Plain http responses are relayed with "Connection: close", so each proxied request
// opens its own connection and the browser never sends a second request (perhaps for
// another host) down a connection that was checked for the first.
//
// Bounds: at most `max_connections` client connections at once (more are answered 503);
// a request head must arrive within `header_timeout` and fit `max_header_bytes`; an
// upstream connection must open within `connect_timeout`; a connection with no bytes either
// way for `idle_timeout` is closed. Malformed requests are answered 400 and closed.
//
// Threads: one I/O thread ("egress-io") and `lookup_threads` lookup threads
// ("egress-dns"), all owned and joined by the Proxy. Its methods may be called from any
// thread. The refusal handler runs on the I/O thread: it must be quick and thread-safe, and
// must not destroy the Proxy.
#ifndef PAGEREEL_SERVE_EGRESS_PROXY_H_
#define PAGEREEL_SERVE_EGRESS_PROXY_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "serve/egress/policy.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace pagereel::serve::egress {

struct ProxyOptions {
  size_t max_connections = 512;  // Chromium itself opens at most 32 to one proxy server.
  size_t max_header_bytes = 64 * 1024;
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds idle_timeout{60'000};
  int lookup_threads = 4;
};

// Counters since Start; read with Proxy::stats() from any thread.
struct ProxyStats {
  uint64_t connections = 0;  // Client connections accepted.
  uint64_t allowed = 0;      // Requests that passed the policy and were connected upstream.
  uint64_t refused = 0;      // Requests the policy refused (403).
  uint64_t failed = 0;       // Malformed, unresolvable, unreachable, over a limit, timed out.
  uint64_t active = 0;       // Client connections open now.
};

struct ProxyImpl;      // Defined in proxy.cc.
struct ProxyListener;  // Defined in proxy.cc.

using RefusalHandler = std::function<void(const Refusal&)>;

// Another port of the same proxy, for one browser context (one capture), so that refusals
// can be told apart by capture: requests that come through it are reported to its own
// handler as well as the proxy's. Give it to Target.createBrowserContext as
// {"proxyServer": Url(), "proxyBypassList": "<-loopback>"}. Destroying it stops it
// listening; connections already open finish as usual. Any thread; the handler runs on the
// proxy's I/O thread.
class ProxyChannel {
 public:
  ~ProxyChannel();
  ProxyChannel(const ProxyChannel&) = delete;
  ProxyChannel& operator=(const ProxyChannel&) = delete;

  uint16_t port() const;
  std::string Url() const;  // "http://127.0.0.1:<port>".
  uint64_t refused() const;  // Requests refused through this channel so far.

 private:
  friend class Proxy;
  ProxyChannel(boost::asio::io_context& io, std::shared_ptr<ProxyListener> listener);
  boost::asio::io_context& io_;
  std::shared_ptr<ProxyListener> listener_;
};

class Proxy {
 public:
  // Listens on 127.0.0.1 on a port the kernel picks. `on_refusal` may be empty.
  static Result<std::unique_ptr<Proxy>> Start(Policy policy, RefusalHandler on_refusal,
                                              ProxyOptions options = {});

  // Stops listening, closes every connection and joins the threads (a lookup in progress
  // is waited for: getaddrinfo cannot be interrupted).
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  uint16_t port() const;

  // "http://127.0.0.1:<port>", the value for --proxy-server and for the proxyServer of
  // Target.createBrowserContext.
  std::string Url() const;

  // The browser switches that send all of its traffic through this proxy:
  //   --proxy-server=<Url()>
  //   --proxy-bypass-list=<-loopback>   (otherwise Chromium sends loopback and link-local,
  //                                      169.254.169.254 included, direct: netns_test.cc)
  //   --force-webrtc-ip-handling-policy=disable_non_proxied_udp   (no WebRTC UDP, which
  //                                      no HTTP proxy can carry)
  // A browser context created with its own proxyServer would not use these: create
  // contexts without one, or with Url() and proxyBypassList "<-loopback>".
  std::vector<std::string> BrowserArgs() const;

  ProxyStats stats() const;

  // A port of its own for one browser context (see ProxyChannel).
  // REQUIRES: every channel is destroyed before the Proxy.
  Result<std::unique_ptr<ProxyChannel>> OpenChannel(RefusalHandler on_refusal);

 private:
  explicit Proxy(std::unique_ptr<ProxyImpl> impl);
  std::unique_ptr<ProxyImpl> impl_;
};

}  // namespace pagereel::serve::egress

#endif  // PAGEREEL_SERVE_EGRESS_PROXY_H_
