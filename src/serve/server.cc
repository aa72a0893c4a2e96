#include "serve/server.h"

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <nlohmann/json.hpp>

#include <array>
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

#include "base/process_memory.h"
#include "base/thread.h"
#include "browser/context.h"
#include "capture/page.h"
#include "capture/snapshot.h"
#include "serve/clip.h"
#include "serve/egress/policy.h"
#include "serve/egress/proxy.h"
#include "serve/metrics.h"

namespace pagereel::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

namespace {

// How long an idle keep-alive connection, or a slow client's request, may take.
constexpr std::chrono::seconds kIdleTimeout{60};
constexpr size_t kMaxHeaderBytes = 16 * 1024;
// How long, and how much, a closing connection's remaining input is read and dropped.
constexpr std::chrono::seconds kLingerTimeout{5};
constexpr size_t kMaxLingerBytes = 64 << 20;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
int64_t Ms(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

const char* ErrorName(int status) {
  switch (status) {
    case 400: return "bad parameter";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 413: return "body too large";
    case 422: return "page could not be loaded";
    case 431: return "headers too large";
    case 502: return "browser crashed";
    case 503: return "overloaded";
    case 504: return "page did not finish in time";
    default: return "internal error";
  }
}

// The HTTP status for a capture that failed with `status`.
int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 422;  // A selector that matches nothing.
    case StatusCode::kFailedPrecondition: return 422;
    case StatusCode::kDeadlineExceeded: return 504;
    case StatusCode::kUnavailable: return 502;
    case StatusCode::kCancelled: return 499;
    case StatusCode::kResourceExhausted: return 503;
    default: return 500;
  }
}

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

// Number of pages of a PDF that Chromium wrote (each page object says "/Type /Page").
int CountPdfPages(const std::string& pdf) {
  int pages = 0;
  for (size_t at = pdf.find("/Type /Page"); at != std::string::npos;
       at = pdf.find("/Type /Page", at + 1)) {
    if (pdf.compare(at, 12, "/Type /Pages") != 0) ++pages;
  }
  return pages;
}

using Response = http::response<http::string_body>;

}  // namespace

class Session;

struct Server::Impl {
  ServeOptions options;
  egress::Policy policy;
  Metrics metrics;
  // Declared before the pool, so it outlives the browsers that use it.
  std::unique_ptr<egress::Proxy> proxy;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  BrowserPool pool;
  Admission admission;
  std::thread io_thread;
  std::atomic<bool> stopping{false};
  std::once_flag shutdown_once;
  std::mutex log_mu;
  std::filesystem::path work_dir;  // GIFs and clips while they are made.
  bool own_work_dir = false;       // Made by Start(), removed by Shutdown().

  Impl(ServeOptions o, egress::Policy p)
      : options(std::move(o)), policy(std::move(p)), pool(options.pool),
        admission(options.admission) {}
  ~Impl() {
    // Also when Start() failed after making it.
    if (own_work_dir) {
      std::error_code ignored;
      std::filesystem::remove_all(work_dir, ignored);
    }
  }

  void Log(const json& line) {
    std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(log_mu);
    if (options.log) {
      options.log(text);
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
  }

  Gauges ReadGauges() {
    PoolStats pool_stats = pool.Stats();
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
    g.ready = !stopping && pool.Ready();
    return g;
  }

  void Accept();

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

// One client connection: reads requests one after another (keep-alive), answers the
// cheap routes on the I/O thread and hands captures to the admission queue. While a
// capture runs, it watches the socket so a client that leaves stops its capture.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server::Impl& server)
      : stream_(std::move(socket)), server_(server) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(server_.options.limits.max_body_bytes);
    parser_->header_limit(kMaxHeaderBytes);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      return Write(Error(413, "the body is larger than " +
                                  std::to_string(server_.options.limits.max_body_bytes) +
                                  " bytes, the most this service accepts"));
    }
    if (ec == http::error::header_limit) {
      keep_alive_ = false;
      return Write(Error(431, "the request's headers are larger than 16 KiB"));
    }
    if (ec) {
      if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
          ec != asio::error::connection_reset && ec != asio::error::operation_aborted) {
        // A request that is not HTTP: answer once, then hang up.
        keep_alive_ = false;
        return Write(Error(400, "the request is not valid HTTP/1.1: " + ec.message()));
      }
      return Close();
    }
    request_ = parser_->release();
    keep_alive_ = request_.keep_alive();
    started_ = Clock::now();
    Route();
  }

  Response Error(int status, const std::string& detail) {
    Response r{static_cast<http::status>(status), 11};
    r.set(http::field::content_type, "application/json");
    r.body() = json{{"error", ErrorName(status)}, {"detail", detail}}.dump() + "\n";
    return r;
  }

  Response Body(int status, std::string content_type, std::string body) {
    Response r{static_cast<http::status>(status), 11};
    r.set(http::field::content_type, content_type);
    r.body() = std::move(body);
    return r;
  }

  void Route() {
    std::string_view target = request_.target();
    std::string_view path = target.substr(0, target.find('?'));
    http::verb method = request_.method();
    bool is_get = method == http::verb::get;

    if (path == "/healthz" || path == "/readyz") {
      if (!is_get) return Write(NotAllowed("GET"));
      if (path == "/healthz") return Write(Body(200, "application/json", "{\"status\":\"ok\"}\n"));
      bool ready = !server_.stopping && server_.pool.Ready();
      return Write(Body(ready ? 200 : 503, "application/json",
                        ready ? "{\"ready\":true}\n" : "{\"ready\":false}\n"));
    }
    if (!Authorized()) {
      Response r = Error(401, "this service needs an Authorization: Bearer token");
      r.set(http::field::www_authenticate, "Bearer");
      return Write(std::move(r));
    }
    if (path == "/metrics") {
      if (!is_get) return Write(NotAllowed("GET"));
      return Write(Body(200, "text/plain; version=0.0.4; charset=utf-8",
                        server_.metrics.Prometheus(server_.ReadGauges())));
    }
    if (path == "/v1/status") {
      if (!is_get) return Write(NotAllowed("GET"));
      return Write(Body(200, "application/json", server_.metrics.Json(server_.ReadGauges())));
    }
    std::optional<serve::Route> route;
    if (path == "/v1/screenshot") route = serve::Route::kScreenshot;
    if (path == "/v1/pdf") route = serve::Route::kPdf;
    if (path == "/v1/gif") route = serve::Route::kGif;
    if (path == "/v1/clip") route = serve::Route::kClip;
    if (!route) {
      return Write(Error(404, "no route " + std::string(path).substr(0, 100) +
                                  "; the routes are /v1/screenshot, /v1/pdf, /v1/gif, /v1/clip, "
                                  "/healthz, /readyz, /metrics and /v1/status"));
    }
    if (method != http::verb::get && method != http::verb::post) return Write(NotAllowed("GET, POST"));
    route_name_ = RouteName(*route);
    StartCapture(*route);
  }

  Response NotAllowed(const char* allowed) {
    Response r = Error(405, std::string("this route takes ") + allowed);
    r.set(http::field::allow, allowed);
    return r;
  }

  bool Authorized() const {
    const std::string& token = server_.options.token;
    if (token.empty()) return true;
    auto it = request_.find(http::field::authorization);
    if (it == request_.end()) return false;
    std::string expected = "Bearer " + token;
    std::string_view given = it->value();
    // Constant-time compare: the token must not leak through timing.
    if (given.size() != expected.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < given.size(); ++i) {
      diff |= static_cast<unsigned char>(given[i] ^ expected[i]);
    }
    return diff == 0;
  }

  void StartCapture(serve::Route route) {
    std::string content_type;
    if (auto it = request_.find(http::field::content_type); it != request_.end()) {
      content_type = std::string(it->value());
    }
    Result<CaptureRequest> parsed = ParseCaptureRequest(
        route, request_.target(), content_type, request_.body(), server_.options.limits);
    if (!parsed.ok()) {
      int status = parsed.status().code() == StatusCode::kResourceExhausted ? 413 : 400;
      return Finish(Error(status, std::string(parsed.status().message())), {});
    }
    auto job = std::make_shared<Job>();
    job_ = job;
    // The job holds its session until Finish() lets go of the job (job_.reset()): a client
    // may leave while its capture runs, and the capture must still be logged then.
    std::shared_ptr<Session> self = shared_from_this();
    auto capture = std::make_shared<CaptureRequest>(std::move(parsed).value());
    // The admission holds the job while it runs; a pointer avoids a cycle job -> job.
    Job* raw_job = job.get();
    job->run = [self, capture, raw_job](Clock::duration waited) {
      self->server_.metrics.Waited(Seconds(waited));
      RunCapture(*self, *capture, *raw_job, waited);
    };
    job->reject = [self](const Status& status) {
      Server::Impl& server = self->server_;
      bool shutting_down = status.code() == StatusCode::kUnavailable;
      server.metrics.Refused(shutting_down ? "shutting_down" : "wait_timeout");
      Response r = self->Error(503, std::string(status.message()));
      r.set(http::field::retry_after, std::to_string(server.admission.RetryAfterSeconds()));
      self->AnswerFinished(std::move(r), json{{"error", status.message()}});
    };
    what_ = capture->what;
    Status submitted = server_.admission.Submit(job);
    if (!submitted.ok()) {
      job_.reset();
      bool shutting_down = submitted.code() == StatusCode::kUnavailable;
      server_.metrics.Refused(shutting_down ? "shutting_down" : "queue_full");
      Response r = Error(503, std::string(submitted.message()));
      r.set(http::field::retry_after, std::to_string(server_.admission.RetryAfterSeconds()));
      return Finish(std::move(r), json{{"error", submitted.message()}});
    }
    WatchForClose();
  }

  // The capture itself, on a worker thread.
  static void RunCapture(Session& session, CaptureRequest& request, Job& job,
                         Clock::duration waited) {
    Server::Impl& server = session.server_;
    Clock::time_point start = Clock::now();
    json log = {{"queue_ms", Ms(waited)}};
    auto answer = [&](Response r) { session.AnswerFinished(std::move(r), std::move(log)); };
    auto fail = [&](const Status& status) {
      log["error"] = status.message();
      answer(session.Error(HttpStatusFor(status), std::string(status.message())));
    };
    if (job.cancelled) return fail(CancelledError("the client left before the capture started"));
    if (!request.page.url.empty()) {
      // Resolving may block: it is done here, on the capture's worker.
      Status allowed = egress::CheckUrl(server.policy, request.page.url);
      if (allowed.code() == StatusCode::kInvalidArgument) {
        log["error"] = allowed.message();
        return answer(session.Error(403, std::string(allowed.message()) +
                                             " (the service's --allow opens what it needs)"));
      }
      if (!allowed.ok()) return fail(FailedPreconditionError(std::string(allowed.message())));
    }
    // A port of the egress proxy of its own, so the requests it refuses are this capture's.
    auto refusals = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
    Result<std::unique_ptr<egress::ProxyChannel>> channel = server.proxy->OpenChannel(
        [refusals, &metrics = server.metrics](const egress::Refusal& refusal) {
          metrics.EgressRefused();
          std::lock_guard lock(refusals->first);
          if (refusals->second.size() < 10) {
            refusals->second.push_back(refusal.host + ":" + std::to_string(refusal.port) + " (" +
                                       refusal.reason + ")");
          }
        });
    if (!channel.ok()) return fail(UnavailableError("the egress proxy: " + std::string(channel.status().message())));
    request.page.context.proxy_server = (*channel)->Url();
    request.page.context.proxy_bypass_list = "<-loopback>";
    auto refused = [&refusals] {
      std::lock_guard lock(refusals->first);
      return refusals->second;
    };
    auto succeed = [&](std::string bytes) {
      log["capture_total_ms"] = Ms(Clock::now() - start);
      if (std::vector<std::string> list = refused(); !list.empty()) log["egress_refused"] = list;
      answer(session.Body(200, request.content_type, std::move(bytes)));
    };
    auto fail_naming_refusals = [&](const Status& status) {
      std::vector<std::string> list = refused();
      if (list.empty()) return fail(status);
      log["egress_refused"] = list;
      std::string text(status.message());
      text += "; the service's egress policy refused " + list.front();
      if (list.size() > 1) text += " and " + std::to_string(list.size() - 1) + " more";
      return fail(Status(status.code(), text));
    };

    Result<BrowserPool::Lease> lease = server.pool.Acquire();
    if (!lease.ok()) return fail(UnavailableError("no browser could be started: " + std::string(lease.status().message())));
    request.page.should_stop = [&job] { return job.cancelled.load(); };
    if (request.route == serve::Route::kGif || request.route == serve::Route::kClip) {
      capture::PageOptions page;
      page.url = request.page.html.empty() ? request.page.url : capture::HtmlDataUrl(request.page.html);
      page.width = request.page.width;
      page.height = request.page.height;
      page.timeout = request.page.timeout;
      page.context = request.page.context;
      page.should_stop = request.page.should_stop;
      page.name = request.page.html.empty() ? "" : "(the posted HTML)";
      ClipReport report;
      Result<std::string> film = MakeClip(lease->browser(), page, request.clip, server.work_dir,
                                          start + request.page.timeout, &report);
      log["frames"] = report.frames;
      log["load_ms"] = report.load.count();
      log["frames_ms"] = report.frames_time.count();
      log["encode_ms"] = report.encode.count();
      if (!film.ok()) return fail_naming_refusals(film.status());
      return succeed(std::move(film).value());
    }
    Result<std::unique_ptr<capture::Snapshot>> snapshot =
        capture::Snapshot::Open(lease->browser(), request.page);
    if (!snapshot.ok()) return fail_naming_refusals(snapshot.status());
    const capture::WaitReport& report = (*snapshot)->wait_report();
    log["wait"] = report.ended_by;
    log["load_ms"] = report.load.count();
    log["wait_ms"] = report.wait.count();
    if (report.ended_by == "cap") {
      server.Log({{"time", NowIso()},
                  {"level", "warning"},
                  {"url", request.what},
                  {"message", "captured 2 s after the network went idle although the page was "
                              "still changing; a page that calls window.triggerCapture() or sets "
                              "window.pagereel.ready is captured when it is done"}});
    }
    Clock::time_point shot_start = Clock::now();
    Result<std::string> bytes = request.route == serve::Route::kScreenshot
                                    ? (*snapshot)->Screenshot(request.screenshot)
                                    : (*snapshot)->Pdf(request.pdf);
    if (!bytes.ok()) return fail_naming_refusals(bytes.status());
    log["capture_ms"] = Ms(Clock::now() - shot_start);
    if (request.route == serve::Route::kPdf) {
      int pages = CountPdfPages(*bytes);
      log["pages"] = pages;
      if (pages > server.options.limits.max_pdf_pages) {
        return fail(InvalidArgumentError(
            "pageRanges: the document has " + std::to_string(pages) + " pages, more than the " +
            std::to_string(server.options.limits.max_pdf_pages) +
            " this service prints; choose some with pageRanges"));
      }
    }
    snapshot->reset();  // Close the context before answering: it is part of the capture.
    succeed(std::move(bytes).value());
  }

  void AnswerFinished(Response r, json log) {
    asio::post(stream_.get_executor(), [self = shared_from_this(), r = std::move(r),
                                        log = std::move(log)]() mutable {
      self->Finish(std::move(r), std::move(log));
    });
  }

  // Logs the capture and answers it (unless the client left).
  void Finish(Response r, json log) {
    int status = static_cast<int>(r.result_int());
    if (client_left_) status = 499;
    log["time"] = NowIso();
    log["route"] = route_name_;
    log["url"] = what_;
    log["status"] = status;
    log["total_ms"] = Ms(Clock::now() - started_);
    log["bytes"] = r.body().size();
    server_.Log(log);
    server_.metrics.CaptureDone(route_name_, status, Seconds(Clock::now() - started_));
    job_.reset();
    if (client_left_) return Close();
    Write(std::move(r));
  }

  // A client that closes its connection while its capture waits or runs has left.
  void WatchForClose() {
    stream_.expires_never();
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (ec || !self->job_) return;  // Cancelled: the answer is being written.
      char c;
      ssize_t n = ::recv(self->stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
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
    if (server_.admission.Remove(job.get())) {
      Finish(Error(499, "the client left"), json{{"error", "the client left while the capture waited"}});
    }
    // A running capture sees `cancelled`, stops, and finishes as 499 through Finish.
  }

  void Write(Response r) {
    if (!stream_.socket().is_open()) return;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // The close watch, if any.
    r.keep_alive(keep_alive_ && !server_.stopping);
    r.set(http::field::server, "pagereel");
    r.prepare_payload();
    auto response = std::make_shared<Response>(std::move(r));
    stream_.expires_after(kIdleTimeout);
    http::async_write(stream_, *response, [self = shared_from_this(), response](beast::error_code ec, size_t) {
      if (ec || !response->keep_alive()) return self->Close();
      self->Read();
    });
  }

  // Stops sending, then reads and drops what the client still sends (a body refused as too
  // large, say) for a while before closing: closing at once would reset the connection
  // under a client still writing, and it would never read the answer it was sent.
  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTimeout);
    Drain(std::make_shared<std::array<char, 64 * 1024>>(), 0);
  }

  void Drain(std::shared_ptr<std::array<char, 64 * 1024>> scratch, size_t drained) {
    stream_.async_read_some(asio::buffer(*scratch), [self = shared_from_this(), scratch, drained](
                                                        beast::error_code ec, size_t n) {
      if (ec || drained + n > kMaxLingerBytes) return self->stream_.close();
      self->Drain(scratch, drained + n);
    });
  }

  beast::tcp_stream stream_;
  Server::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  bool keep_alive_ = true;
  bool client_left_ = false;
  Clock::time_point started_;
  std::string route_name_;
  std::string what_;
  std::shared_ptr<Job> job_;
};

void Server::Impl::Accept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    } else {
      std::make_shared<Session>(std::move(socket), *this)->Read();
    }
    Accept();
  });
}

Result<std::unique_ptr<Server>> Server::Start(ServeOptions options) {
  options.admission.capacity = options.pool.browsers * options.pool.per_browser;
  size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgumentError("the listen address " + options.listen + " has no port (HOST:PORT)");
  }
  std::string host = options.listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = std::atoi(options.listen.c_str() + colon + 1);
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec || port < 0 || port > 65535 ||
      options.listen.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return InvalidArgumentError("the listen address " + options.listen +
                                " is not HOST:PORT with a numeric IP address (127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080)");
  }
  Result<egress::Policy> policy = egress::Policy::Parse(options.allow, options.resolve);
  if (!policy.ok()) return policy.status();
  // The proxy must exist before the browsers: its address is on their command line.
  Result<std::unique_ptr<egress::Proxy>> proxy = egress::Proxy::Start(*policy, nullptr);
  if (!proxy.ok()) return proxy.status().WithContext("starting the egress proxy");
  for (std::string& arg : (*proxy)->BrowserArgs()) options.pool.launch.extra_args.push_back(arg);
  auto impl = std::make_unique<Impl>(std::move(options), std::move(policy).value());
  impl->proxy = std::move(proxy).value();
  tcp::endpoint endpoint(address, static_cast<uint16_t>(port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
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
  PR_RETURN_IF_ERROR(impl->pool.Start());
  impl->Accept();
  impl->next_beat = Clock::now() + Impl::kBeat;
  impl->Beat();
  Impl* raw = impl.get();
  impl->io_thread = std::thread([raw] {
    SetCurrentThreadName("http-io");
    raw->io.run();
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
    asio::post(s.io, [&s] {
      beast::error_code ignored;
      s.acceptor.close(ignored);
    });
    int left = s.admission.Shutdown(s.options.grace);
    if (left > 0) {
      s.Log({{"time", NowIso()},
             {"level", "warning"},
             {"message", std::to_string(left) + " captures were still running after the grace "
                         "period; their browsers are killed"}});
    }
    s.pool.KillAll();
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
