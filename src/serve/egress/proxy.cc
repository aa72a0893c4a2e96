#include "serve/egress/proxy.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <atomic>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include "base/thread.h"
#include "http/session.h"
#include "http/url.h"

namespace pagereel::serve::egress {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ip = asio::ip;
using tcp = ip::tcp;
using Clock = std::chrono::steady_clock;

// One listening socket: the proxy's own, or a channel's. Shared by its sessions, so a
// channel's handler outlives the connections that report to it.
struct ProxyListener {
  explicit ProxyListener(asio::io_context& io) : acceptor(io), retry(io) {}
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  RefusalHandler on_refusal;  // The channel's; empty for the proxy's own listener.
  uint16_t port = 0;
  std::atomic<uint64_t> refused{0};
};

struct ProxyImpl {
  ProxyImpl(Policy p, RefusalHandler h, ProxyOptions o)
      : policy(std::move(p)), on_refusal(std::move(h)), options(o) {}

  // Constant after construction.
  Policy policy;
  RefusalHandler on_refusal;
  ProxyOptions options;
  uint16_t port = 0;

  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> allowed{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> active{0};

  // Sessions and handlers hold references into the members above, so those are declared
  // first and destroyed last. The lookup context goes before the I/O context, because the
  // lookups it drops hold sessions whose sockets belong to the I/O context.
  asio::io_context io;
  asio::io_context lookups;
  std::shared_ptr<ProxyListener> main_listener;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> io_work;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> lookup_work;
  std::jthread io_thread;
  std::vector<std::jthread> lookup_threads;

  void Accept(std::shared_ptr<ProxyListener> listener);
  // Opens a listener on 127.0.0.1 on a port the kernel picks and starts accepting on it.
  Result<std::shared_ptr<ProxyListener>> Listen(RefusalHandler on_refusal);
};

namespace {

// The longest request line a refusal repeats.
constexpr size_t kMaxReported = 512;

// What a page reads when the proxy did not connect it: the same whether the egress policy
// refused the address or the name did not resolve.
constexpr const char* kNotReached =
    "pagereel: the capture service's egress policy refused this request, or its host does "
    "not resolve";

std::string Reason(http::status status) { return std::string(http::obsolete_reason(status)); }

// One client connection: its request head, the check, the upstream connection and the
// relay. Lives on the I/O thread only (the lookup thread sees copies of host and port), kept
// alive by the handlers that refer to it.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket client, ProxyImpl& proxy, std::shared_ptr<ProxyListener> listener)
      : proxy_(proxy),
        listener_(std::move(listener)),
        client_(std::move(client)),
        upstream_(proxy.io),
        timer_(proxy.io) {
    ++proxy_.active;
  }
  ~Session() { --proxy_.active; }

  void Start() {
    boost::system::error_code ec;
    client_.set_option(tcp::no_delay(true), ec);
    request_.emplace();
    request_->header_limit(static_cast<uint32_t>(proxy_.options.max_header_bytes));
    SetDeadline(proxy_.options.header_timeout);
    ArmTimer();
    http::async_read_header(client_, client_buf_, *request_,
                            [self = shared_from_this()](beast::error_code e, size_t) {
                              self->OnRequestHead(e);
                            });
  }

 private:
  enum class Phase { kHead, kConnecting, kRelaying, kDone };
  enum class Side { kClient, kUpstream };

  void SetDeadline(std::chrono::milliseconds d) { deadline_ = Clock::now() + d; }

  // One timer per connection, re-armed lazily: activity only moves deadline_ forward, and
  // the timer, when it fires early, sleeps again until the current deadline.
  void ArmTimer() {
    timer_.expires_at(deadline_);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->phase_ == Phase::kDone) return;
      if (Clock::now() < self->deadline_) {
        self->ArmTimer();
        return;
      }
      self->OnTimeout();
    });
  }

  void OnTimeout() {
    if (phase_ == Phase::kConnecting) {
      FailQuietly(http::status::gateway_timeout);
    } else {
      // A connection the browser opened ahead of need and never used is no failure.
      if (phase_ != Phase::kHead || client_buf_.size() > 0) ++proxy_.failed;
      Close();
    }
  }

  void OnRequestHead(beast::error_code ec) {
    if (phase_ == Phase::kDone) return;
    if (ec == http::error::end_of_stream || ec == asio::error::eof) {
      Close();  // The browser opened a connection and did not use it.
      return;
    }
    if (ec == http::error::header_limit) {
      Fail(http::status::request_header_fields_too_large, "the request head is too large");
      return;
    }
    if (ec) {
      Fail(http::status::bad_request, "malformed request: " + ec.message());
      return;
    }
    auto& req = request_->get();
    std::string target(req.target());
    if (req.method() == http::verb::connect) {
      is_connect_ = true;
      request_line_ = "CONNECT " + target;
      // The authority form host:port, read as an https URL so the host is normalised the
      // same way as everywhere else.
      Result<pagereel::http::UrlParts> parts = pagereel::http::ParseUrl("https://" + target);
      size_t bracket = target.rfind(']');
      size_t colon = target.rfind(':');
      bool has_port = colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
      if (!parts.ok() || !has_port || target.find_first_of("/?#@") != std::string::npos) {
        Fail(http::status::bad_request, "bad CONNECT target \"" + target + "\"");
        return;
      }
      host_ = parts->host;
      port_ = parts->port;
    } else {
      request_line_ = std::string(req.method_string()) + " " + target;
      size_t sep = target.find("://");
      if (sep == std::string::npos) {
        Fail(http::status::bad_request,
             "this is a proxy: send absolute-form requests (GET http://host/path) or CONNECT");
        return;
      }
      std::string scheme = target.substr(0, sep);
      std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (scheme != "http") {
        // https, ws and wss arrive as CONNECT (an absolute https URL would ask us to speak
        // TLS); every other scheme is refused by the policy.
        bool tunnelled = scheme == "https" || scheme == "ws" || scheme == "wss";
        Refuse("", "scheme " + scheme.substr(0, 20) +
                       (tunnelled ? " must be tunnelled with CONNECT" : " is not allowed"));
        return;
      }
      Result<pagereel::http::UrlParts> parts = pagereel::http::ParseUrl(target);
      if (!parts.ok()) {
        Fail(http::status::bad_request,
             "bad request target: " + std::string(parts.status().message()));
        return;
      }
      host_ = parts->host;
      port_ = parts->port;
      path_ = parts->path;
    }
    phase_ = Phase::kConnecting;
    SetDeadline(proxy_.options.connect_timeout);
    Lookup();
  }

  void Lookup() {
    asio::post(proxy_.lookups, [self = shared_from_this(), host = host_, port = port_] {
      Result<std::vector<ip::address>> found = self->proxy_.policy.Resolve(host, port);
      asio::post(self->proxy_.io, [self, found = std::move(found)]() mutable {
        self->OnResolved(std::move(found));
      });
    });
  }

  void OnResolved(Result<std::vector<ip::address>> found) {
    if (phase_ == Phase::kDone) return;
    if (!found.ok()) {
      // Answered as a refusal is: a page that could tell "refused" from "does not resolve"
      // (in a frame, so in a screenshot) would learn which internal names exist.
      ++proxy_.failed;
      Respond(http::status::forbidden, kNotReached);
      return;
    }
    std::vector<tcp::endpoint> endpoints;
    for (const ip::address& a : *found) {
      if (std::optional<std::string> why = proxy_.policy.RefusalReason(host_, port_, a)) {
        Refuse(a.to_string(), *why);
        return;
      }
      endpoints.emplace_back(a, port_);
    }
    ++proxy_.allowed;
    asio::async_connect(upstream_, endpoints,
                        [self = shared_from_this()](boost::system::error_code ec,
                                                    const tcp::endpoint&) {
                          self->OnConnected(ec);
                        });
  }

  void OnConnected(boost::system::error_code ec) {
    if (phase_ == Phase::kDone) return;
    if (ec) {
      FailQuietly(http::status::bad_gateway);
      return;
    }
    upstream_.set_option(tcp::no_delay(true), ec);
    phase_ = Phase::kRelaying;
    SetDeadline(proxy_.options.idle_timeout);
    if (is_connect_) {
      out_ = "HTTP/1.1 200 Connection established\r\n\r\n";
      asio::async_write(client_, asio::buffer(out_),
                        [self = shared_from_this()](boost::system::error_code e, size_t) {
                          if (e) return self->Close();
                          self->ForwardLeftoverThenPump();
                        });
      return;
    }
    auto& req = request_->get();
    bool upgrade = req.count(http::field::upgrade) > 0;
    req.erase(http::field::proxy_connection);
    req.erase(http::field::proxy_authorization);
    req.erase(http::field::keep_alive);
    // One request per upstream connection (see proxy.h); an upgrade keeps its own header.
    req.set(http::field::connection, upgrade ? "Upgrade" : "close");
    out_ = std::string(req.method_string()) + " " + path_ + " HTTP/" +
           (req.version() == 10 ? "1.0" : "1.1") + "\r\n";
    AppendFields(req, out_);
    asio::async_write(upstream_, asio::buffer(out_),
                      [self = shared_from_this()](boost::system::error_code e, size_t) {
                        if (e) return self->Close();
                        self->ForwardLeftoverThenPump();
                        self->ReadResponseHead();
                      });
  }

  template <typename Fields>
  static void AppendFields(const Fields& fields, std::string& out) {
    for (const auto& f : fields) {
      out.append(f.name_string().data(), f.name_string().size());
      out += ": ";
      out.append(f.value().data(), f.value().size());
      out += "\r\n";
    }
    out += "\r\n";
  }

  // Bytes the browser sent after the request head (a request body, or a TLS hello sent
  // early) go upstream first; then the client-to-upstream pump runs.
  void ForwardLeftoverThenPump() {
    if (client_buf_.size() == 0) {
      Pump(Side::kClient);
      if (is_connect_) Pump(Side::kUpstream);
      return;
    }
    asio::async_write(upstream_, client_buf_.data(),
                      [self = shared_from_this()](boost::system::error_code e, size_t) {
                        if (e) return self->Close();
                        self->client_buf_.consume(self->client_buf_.size());
                        self->Pump(Side::kClient);
                        if (self->is_connect_) self->Pump(Side::kUpstream);
                      });
  }

  void ReadResponseHead() {
    response_.emplace();
    response_->header_limit(static_cast<uint32_t>(proxy_.options.max_header_bytes));
    http::async_read_header(upstream_, upstream_buf_, *response_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->OnResponseHead(ec);
                            });
  }

  void OnResponseHead(beast::error_code ec) {
    if (phase_ == Phase::kDone) return;
    if (ec) {
      FailQuietly(http::status::bad_gateway);
      return;
    }
    Touch();
    auto& res = response_->get();
    unsigned code = res.result_int();
    bool interim = code >= 100 && code < 200 && code != 101;
    if (code != 101 && !interim) {
      res.erase(http::field::keep_alive);
      res.erase(http::field::proxy_connection);
      res.set(http::field::connection, "close");
    }
    out_ = "HTTP/" + std::string(res.version() == 10 ? "1.0 " : "1.1 ") + std::to_string(code) +
           " " + std::string(res.reason()) + "\r\n";
    AppendFields(res, out_);
    response_sent_ = true;
    asio::async_write(client_, asio::buffer(out_),
                      [self = shared_from_this(), interim](boost::system::error_code e, size_t) {
                        if (e) return self->Close();
                        if (interim) return self->ReadResponseHead();
                        self->ForwardUpstreamLeftoverThenPump();
                      });
  }

  void ForwardUpstreamLeftoverThenPump() {
    if (upstream_buf_.size() == 0) return Pump(Side::kUpstream);
    asio::async_write(client_, upstream_buf_.data(),
                      [self = shared_from_this()](boost::system::error_code e, size_t) {
                        if (e) return self->Close();
                        self->upstream_buf_.consume(self->upstream_buf_.size());
                        self->Pump(Side::kUpstream);
                      });
  }

  void Touch() { SetDeadline(proxy_.options.idle_timeout); }

  // Copies bytes from one side to the other until that side ends, then half-closes the
  // other; the connection closes when both directions have ended or either fails.
  void Pump(Side from_side) {
    bool up = from_side == Side::kClient;
    tcp::socket& from = up ? client_ : upstream_;
    auto& bytes = up ? up_bytes_ : down_bytes_;
    from.async_read_some(
        asio::buffer(bytes), [self = shared_from_this(), up](boost::system::error_code ec, size_t n) {
          if (self->phase_ == Phase::kDone) return;
          tcp::socket& to = up ? self->upstream_ : self->client_;
          if (ec) {
            if (ec != asio::error::eof) return self->Close();
            to.shutdown(tcp::socket::shutdown_send, ec);
            if (++self->ended_ == 2) self->Close();
            return;
          }
          self->Touch();
          auto& b = up ? self->up_bytes_ : self->down_bytes_;
          asio::async_write(to, asio::buffer(b.data(), n),
                            [self, up](boost::system::error_code e, size_t) {
                              if (e) return self->Close();
                              if (self->phase_ == Phase::kDone) return;
                              self->Pump(up ? Side::kClient : Side::kUpstream);
                            });
        });
  }

  void Refuse(std::string address, std::string reason) {
    ++proxy_.refused;
    // The request line goes to logs and to the page: a long URL is cut.
    std::string line = request_line_.size() > kMaxReported
                           ? request_line_.substr(0, kMaxReported) + "..."
                           : request_line_;
    Refusal refusal{host_, port_, std::move(address), std::move(reason), std::move(line)};
    ++listener_->refused;
    if (listener_->on_refusal) listener_->on_refusal(refusal);
    if (proxy_.on_refusal) proxy_.on_refusal(refusal);
    // The page may see this body (in a frame, so in a screenshot): it names no address, and
    // a name that does not resolve gets the same, so the proxy cannot be used to learn what
    // internal names exist or resolve to.
    Respond(http::status::forbidden, kNotReached);
  }

  void Fail(http::status status, std::string text) {
    ++proxy_.failed;
    Respond(status, "pagereel egress proxy: " + text);
  }

  // A failure whose details stay out of the answer (they would describe the inside).
  void FailQuietly(http::status status) {
    ++proxy_.failed;
    Respond(status, "pagereel egress proxy: the destination could not be reached");
  }

  // Answers with `status` and a one-line body, then closes.
  void Respond(http::status status, std::string text) {
    if (response_sent_ || phase_ == Phase::kDone) return Close();
    response_sent_ = true;
    phase_ = Phase::kRelaying;  // Stops the connect timeout; the write has the idle one.
    Touch();
    text += "\n";
    out_ = "HTTP/1.1 " + std::to_string(static_cast<unsigned>(status)) + " " + Reason(status) +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
           std::to_string(text.size()) + "\r\nConnection: close\r\n\r\n" + text;
    boost::system::error_code ec;
    upstream_.close(ec);
    asio::async_write(client_, asio::buffer(out_),
                      [self = shared_from_this()](boost::system::error_code e, size_t) {
                        if (!e) self->client_.shutdown(tcp::socket::shutdown_send, e);
                        self->Close();
                      });
  }

  void Close() {
    if (phase_ == Phase::kDone) return;
    phase_ = Phase::kDone;
    boost::system::error_code ec;
    timer_.cancel();
    client_.close(ec);
    upstream_.close(ec);
  }

  ProxyImpl& proxy_;
  std::shared_ptr<ProxyListener> listener_;
  tcp::socket client_;
  tcp::socket upstream_;
  asio::steady_timer timer_;
  Clock::time_point deadline_;
  Phase phase_ = Phase::kHead;
  beast::flat_buffer client_buf_;
  beast::flat_buffer upstream_buf_;
  std::optional<http::request_parser<http::empty_body>> request_;
  std::optional<http::response_parser<http::empty_body>> response_;
  bool is_connect_ = false;
  bool response_sent_ = false;
  int ended_ = 0;
  std::string request_line_;
  std::string host_;
  uint16_t port_ = 0;
  std::string path_;
  std::string out_;
  std::array<char, 16 * 1024> up_bytes_;
  std::array<char, 16 * 1024> down_bytes_;
};

}  // namespace

void ProxyImpl::Accept(std::shared_ptr<ProxyListener> listener) {
  ProxyListener& l = *listener;
  l.acceptor.async_accept([this, listener = std::move(listener)](boost::system::error_code ec,
                                                                 tcp::socket socket) mutable {
    if (ec == asio::error::operation_aborted || !listener->acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors or a connection reset before it was accepted: keep listening,
      // after a pause so that a lasting EMFILE does not spin the I/O thread.
      listener->retry.expires_after(std::chrono::milliseconds(50));
      listener->retry.async_wait([this, listener](boost::system::error_code e) {
        if (!e) Accept(listener);
      });
      return;
    }
    ++connections;
    ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
    if (active.load() >= options.max_connections) {
      ++failed;
      // The socket is new, so this short answer fits its send buffer at once.
      static constexpr std::string_view kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      boost::system::error_code write_ec;
      socket.non_blocking(true, write_ec);
      socket.write_some(asio::buffer(kBusy), write_ec);
      socket.close(write_ec);
    } else {
      std::make_shared<Session>(std::move(socket), *this, listener)->Start();
    }
    Accept(std::move(listener));
  });
}

Result<std::shared_ptr<ProxyListener>> ProxyImpl::Listen(RefusalHandler handler) {
  auto listener = std::make_shared<ProxyListener>(io);
  listener->on_refusal = std::move(handler);
  boost::system::error_code ec;
  tcp::endpoint where(ip::address_v4::loopback(), 0);
  tcp::acceptor& a = listener->acceptor;
  // Close-on-exec (pagereel::http::Listen), as are the connections accepted on it: a browser
  // launched meanwhile must not inherit the proxy's sockets.
  Status listening = pagereel::http::Listen(a, where, "127.0.0.1");
  if (!listening.ok()) {
    return IoError("opening an egress proxy port: " + std::string(listening.message()));
  }
  listener->port = a.local_endpoint(ec).port();
  if (ec) return IoError("opening an egress proxy port on 127.0.0.1: " + ec.message());
  // Accepting starts on the I/O thread, which owns the acceptor from then on.
  asio::post(io, [this, listener] { Accept(listener); });
  return listener;
}

Result<std::unique_ptr<Proxy>> Proxy::Start(Policy policy, RefusalHandler on_refusal,
                                           ProxyOptions options) {
  if (options.lookup_threads < 1 || options.max_connections < 1) {
    return InvalidArgumentError("the egress proxy needs at least one lookup thread and one "
                                "connection");
  }
  auto impl = std::make_unique<ProxyImpl>(std::move(policy), std::move(on_refusal), options);
  PR_ASSIGN_OR_RETURN(impl->main_listener, impl->Listen(nullptr));
  impl->port = impl->main_listener->port;
  impl->io_work.emplace(impl->io.get_executor());
  impl->lookup_work.emplace(impl->lookups.get_executor());
  ProxyImpl* raw = impl.get();
  impl->io_thread = std::jthread([raw] {
    SetCurrentThreadName("egress-io");
    raw->io.run();
  });
  for (int i = 0; i < options.lookup_threads; ++i) {
    impl->lookup_threads.emplace_back([raw] {
      SetCurrentThreadName("egress-dns");
      raw->lookups.run();
    });
  }
  return std::unique_ptr<Proxy>(new Proxy(std::move(impl)));
}

Proxy::Proxy(std::unique_ptr<ProxyImpl> impl) : impl_(std::move(impl)) {}

Proxy::~Proxy() {
  impl_->lookups.stop();
  impl_->io.stop();
  impl_->lookup_threads.clear();  // Joins.
  if (impl_->io_thread.joinable()) impl_->io_thread.join();
}

Result<std::unique_ptr<ProxyChannel>> Proxy::OpenChannel(RefusalHandler on_refusal) {
  PR_ASSIGN_OR_RETURN(std::shared_ptr<ProxyListener> listener,
                      impl_->Listen(std::move(on_refusal)));
  return std::unique_ptr<ProxyChannel>(new ProxyChannel(impl_->io, std::move(listener)));
}

ProxyChannel::ProxyChannel(asio::io_context& io, std::shared_ptr<ProxyListener> listener)
    : io_(io), listener_(std::move(listener)) {}

ProxyChannel::~ProxyChannel() {
  // The acceptor belongs to the I/O thread; close it there. The listener lives on in the
  // sessions still open through it.
  asio::post(io_, [listener = listener_] {
    boost::system::error_code ec;
    listener->acceptor.close(ec);
    listener->retry.cancel();
  });
}

uint16_t ProxyChannel::port() const { return listener_->port; }

std::string ProxyChannel::Url() const {
  return "http://127.0.0.1:" + std::to_string(listener_->port);
}

uint64_t ProxyChannel::refused() const { return listener_->refused.load(); }

uint16_t Proxy::port() const { return impl_->port; }

std::string Proxy::Url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

std::vector<std::string> Proxy::BrowserArgs() const {
  return {
      "--proxy-server=" + Url(),
      "--proxy-bypass-list=<-loopback>",
      "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  };
}

ProxyStats Proxy::stats() const {
  ProxyStats s;
  s.connections = impl_->connections.load();
  s.allowed = impl_->allowed.load();
  s.refused = impl_->refused.load();
  s.failed = impl_->failed.load();
  s.active = impl_->active.load();
  return s;
}

}  // namespace pagereel::serve::egress
