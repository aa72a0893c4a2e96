#include "serve/capture_job.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "capture/page.h"
#include "capture/snapshot.h"
#include "http/url.h"
#include "serve/browser_pool.h"
#include "serve/clip.h"
#include "serve/egress/policy.h"
#include "serve/egress/proxy.h"
#include "serve/metrics.h"

namespace pagereel::serve {

using nlohmann::json;

namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
int64_t Ms(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// The HTTP status for a capture that failed with `status`.
int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 422;  // A selector that matches nothing.
    case StatusCode::kFailedPrecondition:
      return 422;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kUnavailable:
      return 502;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kResourceExhausted:
      return 503;
    default:
      return 500;
  }
}

// What a client is told of a capture that failed with `message`: what went wrong with its
// page, not the service's insides, which go to the log instead. A 500 is the service's own
// failure and says only that; the browser's last words (its stderr) and the service's
// folders are left out of every answer.
std::string ForClient(int http_status, std::string message, const std::filesystem::path& work_dir) {
  if (http_status == 500) {
    return "the service failed on this capture; its log says why (look for this capture's line)";
  }
  if (size_t at = message.find("; its last words:"); at != std::string::npos) message.resize(at);
  if (message.starts_with("no browser could be started")) {
    return "no browser could be started; the service's log says why";
  }
  const std::string folder = work_dir.string();
  if (folder.size() > 1) {
    for (size_t at = message.find(folder); at != std::string::npos; at = message.find(folder, at)) {
      message.replace(at, folder.size(), "(the service's work folder)");
    }
  }
  return message;
}

// Whether `url`'s host is a name rather than an IP address (whose class the answer may name:
// it tells the client nothing the client did not write).
bool HostIsAName(const std::string& url) {
  Result<http::UrlParts> parts = http::ParseUrl(url);
  if (!parts.ok()) return false;
  in6_addr scratch{};
  return ::inet_pton(AF_INET, parts->host.c_str(), &scratch) != 1 &&
         ::inet_pton(AF_INET6, parts->host.c_str(), &scratch) != 1;
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

// What the egress proxy refused for one capture, as "host:port (reason)"; the proxy's
// threads add to it while the capture's worker reads it.
class Refusals {
 public:
  void Add(const egress::Refusal& refusal) {
    MutexLock lock(&mu_);
    if (list_.size() < 10) {
      list_.push_back(refusal.host + ":" + std::to_string(refusal.port) + " (" + refusal.reason +
                      ")");
    }
  }
  std::vector<std::string> List() {
    MutexLock lock(&mu_);
    return list_;
  }

 private:
  Mutex mu_;
  std::vector<std::string> list_ GUARDED_BY(mu_);
};

// What a clip's sound holds and leaves out, for its answer: the counts, and the first few
// of each (the log line has them all).
void AddSoundHeaders(const ClipReport& report,
                     std::vector<std::pair<std::string, std::string>>& headers) {
  constexpr size_t kNamed = 8;
  headers.emplace_back("Pagereel-Sounds-Mixed", std::to_string(report.sounds.size()));
  headers.emplace_back("Pagereel-Sounds-Left-Out", std::to_string(report.sounds_left_out.size()));
  for (size_t i = 0; i < report.sounds.size() && i < kNamed; ++i) {
    headers.emplace_back("Pagereel-Sound-Mixed", HeaderText(report.sounds[i]));
  }
  for (size_t i = 0; i < report.sounds_left_out.size() && i < kNamed; ++i) {
    headers.emplace_back("Pagereel-Sound-Left-Out", HeaderText(report.sounds_left_out[i]));
  }
}

}  // namespace

CaptureJob::CaptureJob(CaptureServices& services, Route route, Clock::time_point started)
    : services_(services),
      route_(route),
      started_(started),
      stop_(std::make_shared<capture::StopHandle>()),
      log_(std::make_unique<json>()) {}

void CaptureJob::Stop() { stop_->Stop(); }

CaptureJob::~CaptureJob() = default;

std::optional<Answer> CaptureJob::Parse(std::string_view target, std::string_view content_type,
                                        std::string_view body) {
  Result<CaptureRequest> parsed =
      ParseCaptureRequest(route_, target, content_type, body, *services_.limits);
  if (!parsed.ok()) {
    int status = parsed.status().code() == StatusCode::kResourceExhausted ? 413 : 400;
    return ErrorAnswer(status, parsed.status().message());
  }
  request_ = std::move(parsed).value();
  return std::nullopt;
}

void CaptureJob::Run(Clock::duration waited, const std::atomic<bool>& cancelled,
                     const std::function<void(Answer)>& answer) {
  services_.metrics->Waited(Seconds(waited));
  Clock::time_point start = Clock::now();
  json& log = *log_;
  log["queue_ms"] = Ms(waited);
  auto fail = [&](const Status& status) {
    log["error"] = status.message();
    const int http_status = HttpStatusFor(status);
    answer(ErrorAnswer(http_status,
                       ForClient(http_status, std::string(status.message()), services_.work_dir)));
  };
  if (cancelled) return fail(CancelledError("the client left before the capture started"));
  capture::SnapshotOptions& page = request_.page;
  if (!page.url.empty()) {
    // Resolving may block: it is done here, on the capture's worker.
    Status allowed = egress::CheckUrl(*services_.policy, page.url);
    if (!allowed.ok() && HostIsAName(page.url)) {
      // One answer for a name the policy refuses and for one that does not resolve: a
      // client that could tell them apart would learn which internal names exist.
      log["error"] = allowed.message();
      return answer(ErrorAnswer(
          403,
          "url: its host does not resolve, or resolves to an address the service's egress "
          "policy refuses (the service's log says which; its --allow opens what it needs)"));
    }
    if (allowed.code() == StatusCode::kInvalidArgument) {
      log["error"] = allowed.message();
      return answer(ErrorAnswer(
          403, std::string(allowed.message()) + " (the service's --allow opens what it needs)"));
    }
    if (!allowed.ok()) return fail(FailedPreconditionError(std::string(allowed.message())));
  }
  // A port of the egress proxy of its own, so the requests it refuses are this capture's.
  auto refusals = std::make_shared<Refusals>();
  Result<std::unique_ptr<egress::ProxyChannel>> channel = services_.proxy->OpenChannel(
      [refusals, &metrics = *services_.metrics](const egress::Refusal& refusal) {
        metrics.EgressRefused();
        refusals->Add(refusal);
      });
  if (!channel.ok()) {
    return fail(UnavailableError("the egress proxy: " + std::string(channel.status().message())));
  }
  page.context.proxy_server = (*channel)->Url();
  page.context.proxy_bypass_list = "<-loopback>";
  std::vector<std::pair<std::string, std::string>> headers;  // Beyond Pagereel-Wait.
  auto succeed = [&](std::string bytes) {
    log["capture_total_ms"] = Ms(Clock::now() - start);
    if (std::vector<std::string> list = refusals->List(); !list.empty()) {
      log["egress_refused"] = list;
    }
    Answer a;
    a.content_type = request_.content_type;
    a.body = std::move(bytes);
    a.headers = std::move(headers);
    // What ended the wait for the page, as the log line says it.
    if (log.contains("wait"))
      a.headers.emplace_back("Pagereel-Wait", log["wait"].get<std::string>());
    answer(std::move(a));
  };
  auto fail_naming_refusals = [&](const Status& status) {
    std::vector<std::string> list = refusals->List();
    if (list.empty()) return fail(status);
    log["egress_refused"] = list;
    std::string text(status.message());
    text += "; the service's egress policy refused " + list.front();
    if (list.size() > 1) text += " and " + std::to_string(list.size() - 1) + " more";
    return fail(Status(status.code(), text));
  };

  const bool animated = route_ == Route::kGif || route_ == Route::kClip;
  Result<BrowserPool::Lease> lease = (animated ? services_.film_pool : services_.pool)->Acquire();
  if (!lease.ok()) {
    return fail(
        UnavailableError("no browser could be started: " + std::string(lease.status().message())));
  }
  page.should_stop = [&cancelled] { return cancelled.load(); };
  page.stop = stop_;
  if (animated) {
    capture::PageOptions film_page;
    film_page.url = page.html.empty() ? page.url : capture::HtmlDataUrl(page.html);
    film_page.width = page.width;
    film_page.height = page.height;
    film_page.timeout = page.timeout;
    film_page.context = page.context;
    film_page.should_stop = page.should_stop;
    film_page.name = page.html.empty() ? "" : "(the posted HTML)";
    ClipReport report;
    Result<std::string> film = MakeClip(lease->browser(), film_page, request_.clip,
                                        services_.work_dir, start + page.timeout, &report);
    log["frames"] = report.frames;
    log["load_ms"] = report.load.count();
    log["frames_ms"] = report.frames_time.count();
    log["encode_ms"] = report.encode.count();
    if (report.sound_asked) {
      log["sound_ms"] = report.sound.count();
      log["sounds"] = report.sounds;
      if (!report.sounds_left_out.empty()) log["sounds_left_out"] = report.sounds_left_out;
      services_.metrics->ClipSound(film.ok() ? static_cast<int64_t>(report.sounds.size()) : 0,
                                   static_cast<int64_t>(report.sounds_left_out.size()));
    }
    if (!film.ok()) return fail_naming_refusals(film.status());
    if (report.sound_asked) AddSoundHeaders(report, headers);
    return succeed(std::move(film).value());
  }
  Result<std::unique_ptr<capture::Snapshot>> snapshot =
      capture::Snapshot::Open(lease->browser(), page);
  if (!snapshot.ok()) return fail_naming_refusals(snapshot.status());
  const capture::WaitReport& report = (*snapshot)->wait_report();
  log["wait"] = report.ended_by;
  log["load_ms"] = report.load.count();
  log["wait_ms"] = report.wait.count();
  if (!report.pending.empty()) log["wait_pending"] = report.pending;
  if (report.ended_by == "cap") {
    services_.log(
        {{"level", "warning"},
         {"url", request_.what},
         {"message", "captured 2.5 s after the network went idle although the page still had " +
                         (report.pending.empty() ? std::string("changes") : report.pending) +
                         " going on; a page that calls window.triggerCapture() or sets "
                         "window.pagereel.ready is captured when it is done"}});
  }
  Clock::time_point shot_start = Clock::now();
  const int max_pages = services_.limits->max_pdf_pages;
  capture::PdfOptions pdf = request_.pdf;
  // Without pageRanges, Chromium is asked for one page more than the service prints, not
  // the whole document: a 5,000-page document was refused only after 52.9 s of printing
  // it. The one more says the document is too long. (A range past the document's end is
  // cut there by Chromium.)
  const bool capped = pdf.page_ranges.empty();
  if (capped) pdf.page_ranges = "1-" + std::to_string(max_pages + 1);
  Result<std::string> bytes = route_ == Route::kScreenshot
                                  ? (*snapshot)->Screenshot(request_.screenshot)
                                  : (*snapshot)->Pdf(pdf);
  if (!bytes.ok() && (*snapshot)->screenshot_stuck()) {
    // Chromium lost the screenshot, and the target would lose every later one
    // (capture/snapshot.h): the page is taken once more in a fresh context, within what is
    // left of its timeout.
    services_.metrics->ScreenshotRetried();
    log["screenshot_retries"] = 1;
    snapshot->reset();
    capture::SnapshotOptions again = page;
    again.timeout = std::max(std::chrono::milliseconds(1),
                             page.timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                                Clock::now() - start));
    snapshot = capture::Snapshot::Open(lease->browser(), again);
    if (!snapshot.ok()) return fail_naming_refusals(snapshot.status());
    shot_start = Clock::now();
    bytes = (*snapshot)->Screenshot(request_.screenshot);
  }
  if (!bytes.ok()) return fail_naming_refusals(bytes.status());
  log["capture_ms"] = Ms(Clock::now() - shot_start);
  if (route_ == Route::kPdf) {
    int pages = CountPdfPages(*bytes);
    log["pages"] = pages;
    if (pages > max_pages) {
      return fail(InvalidArgumentError(
          "pageRanges: the document has " + std::string(capped ? "more than " : "") +
          std::to_string(capped ? max_pages : pages) + " pages, more than the " +
          std::to_string(max_pages) + " this service prints; choose some with pageRanges"));
    }
  }
  snapshot->reset();  // Close the context before answering: it is part of the capture.
  succeed(std::move(bytes).value());
}

Answer CaptureJob::Threw(std::string_view what) {
  (*log_)["error"] = "the capture failed: " + std::string(what);
  return ErrorAnswer(500, ForClient(500, std::string(what), services_.work_dir));
}

Answer CaptureJob::Refused(const Status& status) { return Overloaded(status, "queue_full"); }

Answer CaptureJob::Rejected(const Status& status) { return Overloaded(status, "wait_timeout"); }

Answer CaptureJob::Overloaded(const Status& status, const char* busy_reason) {
  bool shutting_down = status.code() == StatusCode::kUnavailable;
  services_.metrics->Refused(shutting_down ? "shutting_down" : busy_reason);
  Answer a = ErrorAnswer(503, status.message());
  a.headers.emplace_back("Retry-After", std::to_string(services_.admission->RetryAfterSeconds()));
  *log_ = json{{"error", status.message()}};
  return a;
}

Answer CaptureJob::Abandoned() {
  *log_ = json{{"error", "the client left while the capture waited"}};
  return ErrorAnswer(499, "the client left");
}

void CaptureJob::Finish(const Answer& answer, bool client_left) {
  int status = client_left ? 499 : answer.status;
  json& log = *log_;
  log["route"] = RouteName(route_);
  log["url"] = request_.what;
  log["status"] = status;
  log["total_ms"] = Ms(Clock::now() - started_);
  log["bytes"] = answer.body.size();
  services_.log(std::move(log));
  services_.metrics->CaptureDone(RouteName(route_), status, Seconds(Clock::now() - started_));
}

}  // namespace pagereel::serve
