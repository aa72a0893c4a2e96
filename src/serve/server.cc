#include "serve/server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "base/mutex.h"
#include "base/process_memory.h"
#include "base/thread.h"
#include "browser/context.h"
#include "http/session.h"
#include "http/token.h"
#include "serve/capture_job.h"
#include "serve/egress/policy.h"
#include "serve/egress/proxy.h"
#include "serve/metrics.h"

namespace pagereel::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using nlohmann::json;

namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string NowIso() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  ::gmtime_r(&ts.tv_sec, &utc);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                ts.tv_nsec / 1'000'000);
  return buf;
}

http::Response ToResponse(Answer answer) {
  http::Response r{static_cast<beast::http::status>(answer.status), 11};
  r.set(beast::http::field::content_type, answer.content_type);
  for (auto& [name, value] : answer.headers) r.insert(name, value);  // insert: a name may come more than once.
  r.body() = std::move(answer.body);
  return r;
}

Answer Body(int status, std::string content_type, std::string body) {
  Answer a;
  a.status = status;
  a.content_type = std::move(content_type);
  a.body = std::move(body);
  return a;
}

// How long the service waits before it accepts again after accept() failed for want of
// descriptors or memory. The connection stays queued, so trying again at once fails again
// at once: 1,100 idle connections at `ulimit -n 1024` held a core at 94 % that way.
constexpr std::chrono::milliseconds kAcceptBackoff{100};

// The answer to a connection over the service's most: short enough to fit a new socket's
// send buffer at once, so it is written without waiting.
const std::string& TooManyConnectionsAnswer() {
  static const std::string answer = [] {
    const std::string body =
        "{\"error\":\"overloaded\",\"detail\":\"the service has as many connections open as "
        "it takes; try again shortly\"}\n";
    return "HTTP/1.1 503 Service Unavailable\r\nServer: pagereel\r\n"
           "Content-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
           "Content-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }();
  return answer;
}

int DefaultMaxConnections() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 16384;
  return static_cast<int>(std::clamp<rlim_t>(limit.rlim_cur / 2, 64, 16384));
}

Answer NotAllowed(const char* allowed) {
  Answer a = ErrorAnswer(405, std::string("this route takes ") + allowed);
  a.headers.emplace_back("Allow", allowed);
  return a;
}

}  // namespace

struct Server::Impl {
  ServeOptions options;
  egress::Policy policy;
  Metrics metrics;
  // Set by Start(); declared before the I/O context, so they outlive the connections.
  CaptureServices captures;  // What the capture jobs use of the members below.
  http::SessionOptions session_options;
  // Declared before the pool, so it outlives the browsers that use it.
  std::unique_ptr<egress::Proxy> proxy;
  // Client connections open (each Connection counts itself in and out, on whichever thread
  // lets go of it last). Declared before the I/O context, whose end may end connections.
  std::atomic<int> connections{0};
  std::atomic<bool> stopping{false};
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  // Screenshots and PDFs; GIFs and clips, which need begin-frame control, in browsers of
  // their own, launched when the first is asked for (see browser::FrameControl::kNone).
  BrowserPool pool;
  BrowserPool film_pool;
  Admission admission;
  std::thread io_thread;
  std::once_flag shutdown_once;
  Mutex log_mu;  // Held while a line is written, so lines never interleave.
  std::filesystem::path work_dir;  // GIFs and clips while they are made.
  bool own_work_dir = false;       // Made by Start(), removed by Shutdown().

  Impl(ServeOptions o, egress::Policy p)
      : options(std::move(o)),
        policy(std::move(p)),
        pool(WithFrameControl(options.pool, browser::FrameControl::kNone)),
        film_pool(WithFrameControl(options.pool, browser::FrameControl::kPerTarget)),
        admission(options.admission) {}
  static PoolOptions WithFrameControl(PoolOptions pool, browser::FrameControl control) {
    pool.launch.frame_control = control;
    return pool;
  }
  ~Impl() {
    // Also when Start() failed after making it.
    if (own_work_dir) {
      std::error_code ignored;
      std::filesystem::remove_all(work_dir, ignored);
    }
  }

  // One log line, stamped with the time; from any thread.
  void Log(json line) {
    line["time"] = NowIso();
    std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
    MutexLock lock(&log_mu);
    if (options.log) {
      options.log(text);
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
  }

  Gauges ReadGauges() {
    PoolStats pool_stats = pool.Stats();
    const PoolStats film_stats = film_pool.Stats();
    pool_stats.browsers += film_stats.browsers;
    pool_stats.launched += film_stats.launched;
    pool_stats.crashed += film_stats.crashed;
    pool_stats.recycled += film_stats.recycled;
    pool_stats.browsers_rss_bytes += film_stats.browsers_rss_bytes;
    Gauges g;
    g.capacity = admission.capacity();
    g.running = admission.running();
    g.waiting = admission.waiting();
    g.browsers = pool_stats.browsers;
    g.contexts_open = browser::BrowserContext::OpenCount();
    g.browsers_launched = pool_stats.launched;
    g.browsers_crashed = pool_stats.crashed;
    g.browsers_recycled = pool_stats.recycled;
    g.self_rss_bytes = SelfResidentBytes();
    g.browsers_rss_bytes = pool_stats.browsers_rss_bytes;
    g.connections = connections.load();
    g.ready = !stopping && pool.Ready();
    return g;
  }

  // Accepts the next connection once one is queued, on the I/O thread.
  void Accept();
  // Takes the connection queued on the listener, if there is one.
  void AcceptOne();

  // Every 20 ms on the HTTP thread: how late it ran is how long any request would have
  // waited to be read (capture work must never hold this thread).
  static constexpr std::chrono::milliseconds kBeat{20};
  asio::steady_timer heartbeat{io};
  Clock::time_point next_beat;
  void Beat() {
    heartbeat.expires_at(next_beat);
    heartbeat.async_wait([this](beast::error_code ec) {
      if (ec) return;
      Clock::time_point now = Clock::now();
      metrics.HttpLag(Seconds(now - next_beat));
      next_beat += kBeat;
      if (next_beat < now) next_beat = now + kBeat;  // Beats missed are not owed.
      Beat();
    });
  }
};

// One client connection, from its socket to its answers: it reads requests one after
// another (http::Session: limits, keep-alive, lingering close), answers the cheap routes
// here on the I/O thread, and hands each capture to a CaptureJob waiting in the admission
// line. While a capture waits or runs, it watches the socket, so a client that leaves
// stops its capture (answered and logged as 499).
class Connection : public http::Session {
 public:
  Connection(tcp::socket socket, Server::Impl& server)
      : http::Session(std::move(socket), server.session_options), server_(server) {
    ++server_.connections;
  }
  ~Connection() override { --server_.connections; }

 private:
  std::shared_ptr<Connection> Self() {
    return std::static_pointer_cast<Connection>(shared_from_this());
  }

  void Reply(Answer answer) { Write(ToResponse(std::move(answer))); }

  http::Response ReadError(int status, const std::string& detail) override {
    return ToResponse(ErrorAnswer(status, detail));
  }

  // What a request asks for, as its header says.
  enum class Endpoint { kHealthz, kReadyz, kMetrics, kStatus, kCapture };

  // Everything the header decides is decided here, before the body is read: the route, the
  // method and the token. A request refused here never has its body read (nor kept).
  std::optional<http::Response> CheckHeader(const http::Request& header) override {
    std::string_view target = header.target();
    std::string_view path = target.substr(0, target.find('?'));
    beast::http::verb method = header.method();
    bool is_get = method == beast::http::verb::get;
    route_.reset();
    if (path == "/healthz" || path == "/readyz") {
      if (!is_get) return ToResponse(NotAllowed("GET"));
      endpoint_ = path == "/healthz" ? Endpoint::kHealthz : Endpoint::kReadyz;
      return std::nullopt;  // Open to all: load balancers and orchestrators ask without a token.
    }
    if (!http::IsAuthorized(header[beast::http::field::authorization], server_.options.token)) {
      Answer a = ErrorAnswer(401, "this service needs an Authorization: Bearer token");
      a.headers.emplace_back("WWW-Authenticate", "Bearer");
      return ToResponse(std::move(a));
    }
    if (path == "/metrics" || path == "/v1/status") {
      if (!is_get) return ToResponse(NotAllowed("GET"));
      endpoint_ = path == "/metrics" ? Endpoint::kMetrics : Endpoint::kStatus;
      return std::nullopt;
    }
    if (path == "/v1/screenshot") route_ = Route::kScreenshot;
    if (path == "/v1/pdf") route_ = Route::kPdf;
    if (path == "/v1/gif") route_ = Route::kGif;
    if (path == "/v1/clip") route_ = Route::kClip;
    if (!route_) return ToResponse(NoRouteAnswer(path));
    if (method != beast::http::verb::get && method != beast::http::verb::post) {
      return ToResponse(NotAllowed("GET, POST"));
    }
    endpoint_ = Endpoint::kCapture;
    return std::nullopt;
  }

  void HandleRequest() override {
    started_ = Clock::now();
    switch (endpoint_) {
      case Endpoint::kHealthz:
        return Reply(Body(200, "application/json", "{\"status\":\"ok\"}\n"));
      case Endpoint::kReadyz: {
        bool ready = !server_.stopping && server_.pool.Ready();
        return Reply(Body(ready ? 200 : 503, "application/json",
                          ready ? "{\"ready\":true}\n" : "{\"ready\":false}\n"));
      }
      case Endpoint::kMetrics:
        return Reply(Body(200, "text/plain; version=0.0.4; charset=utf-8",
                          server_.metrics.Prometheus(server_.ReadGauges())));
      case Endpoint::kStatus:
        return Reply(Body(200, "application/json", server_.metrics.Json(server_.ReadGauges())));
      case Endpoint::kCapture:
        return StartCapture(*route_);
    }
  }

  // Reads the capture's parameters and puts it in line.
  void StartCapture(Route route) {
    const http::Request& request = this->request();
    auto capture = std::make_shared<CaptureJob>(server_.captures, route, started_);
    if (std::optional<Answer> bad = capture->Parse(
            request.target(), request[beast::http::field::content_type], request.body())) {
      return Finish(*capture, std::move(*bad));
    }
    // The line's entry holds its connection until Finish() lets go of it (job_.reset()):
    // a client may leave while its capture runs, and the capture must still be logged then.
    auto job = std::make_shared<Job>();
    std::shared_ptr<Connection> self = Self();
    // The admission holds the entry while it runs; a pointer avoids a cycle job -> job.
    Job* raw_job = job.get();
    job->run = [self, capture, raw_job](Clock::duration waited) {
      bool answered = false;
      try {
        capture->Run(waited, raw_job->cancelled, [&](Answer answer) {
          answered = true;
          self->AnswerFinished(capture, std::move(answer));
        });
      } catch (const std::exception& e) {
        // A capture worker must outlive any one capture: what a library threw fails only it.
        if (!answered) self->AnswerFinished(capture, capture->Threw(e.what()));
      }
    };
    job->reject = [self, capture](const Status& status) {
      self->AnswerFinished(capture, capture->Rejected(status));
    };
    Status submitted = server_.admission.Submit(job);
    if (!submitted.ok()) return Finish(*capture, capture->Refused(submitted));
    job_ = std::move(job);
    capture_ = std::move(capture);
    WatchForClose();
  }

  // From a worker (or the thread that rejected the capture) to the I/O thread.
  void AnswerFinished(std::shared_ptr<CaptureJob> capture, Answer answer) {
    asio::post(stream().get_executor(), [self = Self(), capture = std::move(capture),
                                         answer = std::move(answer)]() mutable {
      self->Finish(*capture, std::move(answer));
    });
  }

  // Logs the capture and answers it (unless the client left).
  void Finish(CaptureJob& capture, Answer answer) {
    capture.Finish(answer, client_left_);
    job_.reset();
    capture_.reset();
    if (client_left_) return Close();
    Reply(std::move(answer));
  }

  // A client that closes its connection while its capture waits or runs has left.
  void WatchForClose() {
    stream().expires_never();
    stream().socket().async_wait(tcp::socket::wait_read, [self = Self()](beast::error_code ec) {
      if (ec || !self->job_) return;  // Cancelled: the answer is being written.
      char c;
      ssize_t n = ::recv(self->stream().socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) return;  // The next request, sent early: the client is still there.
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return self->WatchForClose();
      }
      self->ClientLeft();
    });
  }

  void ClientLeft() {
    client_left_ = true;
    std::shared_ptr<Job> job = job_;
    if (!job) return;
    job->cancelled = true;
    if (server_.admission.Remove(job.get())) return Finish(*capture_, capture_->Abandoned());
    // A running capture sees `cancelled`, stops, and finishes as 499 through Finish; one
    // whose page's script is busy answers no call, so its calls are failed here.
    capture_->Stop();
  }

  Server::Impl& server_;
  Endpoint endpoint_ = Endpoint::kHealthz;  // Of the request being answered, from its header.
  std::optional<Route> route_;               // When it is a capture.
  bool client_left_ = false;
  Clock::time_point started_;
  std::shared_ptr<Job> job_;              // While a capture waits or runs: its line entry,
  std::shared_ptr<CaptureJob> capture_;  // and the capture.
};

void Server::Impl::Accept() {
  // Asio re-arms the listener for each wait, so one queued already is seen at once.
  acceptor.async_wait(tcp::acceptor::wait_read, [this](beast::error_code ec) {
    if (ec || !acceptor.is_open()) return;  // Closed: the service is stopping.
    AcceptOne();
  });
}

void Server::Impl::AcceptOne() {
  // accept4 rather than Asio's accept, so the socket is close-on-exec from its first
  // instant: a browser launched meanwhile from another thread must not inherit it (it
  // would hold the connection open after pagereel closed it).
  const int fd =
      ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
      metrics.AcceptFailed();
      accept_retry.expires_after(kAcceptBackoff);
      accept_retry.async_wait([this](beast::error_code e) {
        if (!e) Accept();
      });
      return;
    }
    // Nothing queued after all, or a connection reset before it was taken: wait on.
    return Accept();
  }
  tcp::socket socket(asio::make_strand(io));
  beast::error_code ec;
  socket.assign(acceptor.local_endpoint(ec).protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return Accept();
  }
  if (connections.load() >= options.max_connections) {
    // Answered and closed at once: an idle connection more would hold a descriptor that
    // captures need, and a client told 503 comes back later rather than waiting unseen.
    metrics.ConnectionRefused();
    socket.write_some(asio::buffer(TooManyConnectionsAnswer()), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    socket.close(ec);
  } else {
    std::make_shared<Connection>(std::move(socket), *this)->Read();
  }
  Accept();
}

Result<std::unique_ptr<Server>> Server::Start(ServeOptions options) {
  options.admission.capacity = options.pool.browsers * options.pool.per_browser;
  if (options.listen.find(':') == std::string::npos) {
    return InvalidArgumentError("the listen address " + options.listen +
                                " has no port (HOST:PORT)");
  }
  std::optional<tcp::endpoint> endpoint =
      http::ParseListenAddress(options.listen, http::HostNames::kNumericOnly);
  if (!endpoint) {
    return InvalidArgumentError("the listen address " + options.listen +
                                " is not HOST:PORT with a numeric IP address (127.0.0.1:8080, "
                                "[::1]:8080, 0.0.0.0:8080)");
  }
  Result<egress::Policy> policy = egress::Policy::Parse(options.allow, options.resolve);
  if (!policy.ok()) return policy.status();
  // The proxy must exist before the browsers: its address is on their command line.
  Result<std::unique_ptr<egress::Proxy>> proxy = egress::Proxy::Start(*policy, nullptr);
  if (!proxy.ok()) return proxy.status().WithContext("starting the egress proxy");
  for (std::string& arg : (*proxy)->BrowserArgs()) options.pool.launch.extra_args.push_back(arg);
  // No GPU: the "GPU process" only composites and reads back, in software. On a thread of
  // the browser process, with software compositing said outright, each capture costs the
  // browser tree about 7 % less CPU for the same pixels (bench/RESULTS.md, "serve speed").
  // A crash there ends the browser, which the pool replaces as any that dies.
  options.pool.launch.extra_args.push_back("--in-process-gpu");
  options.pool.launch.extra_args.push_back("--disable-gpu-compositing");
  // The pool's watch thread logs the renderers it kills; the log exists once Impl does.
  auto log_renderer_killed = std::make_shared<std::function<void(const std::string&)>>();
  options.pool.on_renderer_killed = [log_renderer_killed](const std::string& message) {
    if (*log_renderer_killed) (*log_renderer_killed)(message);
  };
  auto impl = std::make_unique<Impl>(std::move(options), std::move(policy).value());
  impl->proxy = std::move(proxy).value();
  PR_RETURN_IF_ERROR(http::Listen(impl->acceptor, *endpoint, impl->options.listen));
  if (impl->options.max_connections <= 0) impl->options.max_connections = DefaultMaxConnections();
  {
    // AcceptOne() takes connections with accept4, which must not block the I/O thread
    // should a connection be gone by the time it is taken.
    beast::error_code ec;
    impl->acceptor.native_non_blocking(true, ec);
    if (ec)
      return UnavailableError("cannot listen on " + impl->options.listen + ": " + ec.message());
  }
  std::error_code fs_error;
  if (impl->options.work_dir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path(fs_error) / "pagereel-serve-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return UnavailableError("cannot make a work folder for GIFs and clips in " +
                              std::filesystem::temp_directory_path(fs_error).string() + ": " +
                              std::strerror(errno) + " (set TMPDIR, or give the service a work folder)");
    }
    impl->work_dir = pattern;
    impl->own_work_dir = true;
  } else {
    impl->work_dir = impl->options.work_dir;
  }
  std::filesystem::create_directories(impl->work_dir, fs_error);
  if (fs_error || !std::filesystem::is_directory(impl->work_dir)) {
    return UnavailableError("cannot make the work folder " + impl->work_dir.string() +
                            " for GIFs and clips: " + fs_error.message());
  }
  *log_renderer_killed = [raw = impl.get()](const std::string& message) {
    raw->Log({{"level", "warning"}, {"message", message}});
  };
  PR_RETURN_IF_ERROR(impl->pool.Start());
  PR_RETURN_IF_ERROR(impl->film_pool.Start(BrowserPool::FirstBrowser::kOnDemand));
  Impl& s = *impl;
  s.captures.policy = &s.policy;
  s.captures.proxy = s.proxy.get();
  s.captures.pool = &s.pool;
  s.captures.film_pool = &s.film_pool;
  s.captures.admission = &s.admission;
  s.captures.metrics = &s.metrics;
  s.captures.limits = &s.options.limits;
  s.captures.work_dir = s.work_dir;
  s.captures.log = [&s](json line) { s.Log(std::move(line)); };
  s.session_options.max_body_bytes = s.options.limits.max_body_bytes;
  s.session_options.body_too_large = "the body is larger than " +
                                     std::to_string(s.options.limits.max_body_bytes) +
                                     " bytes, the most this service accepts";
  s.session_options.close = http::CloseMode::kLinger;
  s.session_options.stopping = &s.stopping;
  impl->Accept();
  impl->next_beat = Clock::now() + Impl::kBeat;
  impl->Beat();
  Impl* raw = impl.get();
  impl->io_thread = std::thread([raw] {
    SetCurrentThreadName("http-io");
    http::RunIo(raw->io, [raw](std::string_view what) {
      raw->Log({{"level", "error"},
                {"message", "a connection was dropped: its handler threw: " + std::string(what)}});
    });
  });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { Shutdown(); }

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::Shutdown() {
  std::call_once(impl_->shutdown_once, [this] {
    Impl& s = *impl_;
    s.stopping = true;
    // Closed, the port refuses new connections (no process but this one holds it: it is
    // close-on-exec), rather than taking connections nobody will accept.
    asio::post(s.io, [&s] {
      beast::error_code ignored;
      s.accept_retry.cancel();
      s.acceptor.close(ignored);
    });
    int left = s.admission.Shutdown(s.options.grace);
    if (left > 0) {
      s.Log({{"level", "warning"},
             {"message", std::to_string(left) + " captures were still running after the grace "
                         "period; their browsers are killed"}});
    }
    s.pool.KillAll();
    s.film_pool.KillAll();
    // Let answers already queued (503s, 502s of the killed captures) reach their clients.
    s.admission.Shutdown(std::chrono::milliseconds(5'000));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s.io.stop();
    s.io_thread.join();
    std::error_code ignored;
    if (s.own_work_dir) std::filesystem::remove_all(s.work_dir, ignored);
  });
}

}  // namespace pagereel::serve
