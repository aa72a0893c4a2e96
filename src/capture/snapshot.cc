#include "capture/snapshot.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

extern "C" {
#include <libavutil/base64.h>
}

#include "base/mutex.h"
#include "capture/image.h"
#include "capture/page_session.h"
#include "capture/snapshot_script.h"
#include "cdp/json_util.h"

namespace pagereel::capture {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// wait=networkidle and wait=quiet: how long the network must stay idle, and then the page
// unchanged.
constexpr milliseconds kNetworkIdle{500};
constexpr milliseconds kQuiet{200};
// The default wait: how long nothing may change on a page with nothing left to do before
// it is settled (a margin for work the page's script does not show, such as an image
// decoding or a message from a worker), and how long after its network first went idle it
// is captured anyway (the old default's 500 ms of network idle and 2 s of quiet at most).
constexpr milliseconds kSettleQuiet{50};
constexpr milliseconds kSettleCap{2'500};
// How long a page whose call timed out has to answer a trivial one before its main thread
// is taken to be busy.
constexpr milliseconds kBusyProbe{300};
// How long a screenshot may take before Chromium is taken not to answer it at all. Seen
// about once in 300 to 1,200 captures while browsers ran with
// --run-all-compositor-stages-before-draw (the page had settled, answered every other
// call and ran animation frames; no call to the target made it answer): serve's
// screenshots now run without that switch, and this is the bound should it happen again.
// Screenshots of a 1280x720 page took at most 171 ms in 5,000 captures 8 at once on 2
// cores (bench/RESULTS.md, "screenshots that never came").
constexpr milliseconds kScreenshotPatience{5'000};
// How often a wait looks at the clock and at should_stop.
constexpr milliseconds kPoll{20};
// The tallest (and widest) full-page screenshot, in CSS pixels; larger pages are cut there.
constexpr int kMaxFullPageHeight = 16'384;

milliseconds Since(Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t);
}

// The bytes of a reply's base64 `data`, decoded in place of the reply's text.
Result<std::string> DecodeData(cdp::Message reply) {
  PR_ASSIGN_OR_RETURN(EncodedFrame encoded,
                      TakeScreenshot(std::move(reply), {"result", "data"}, 0, encode::ImageFormat::kPng));
  PR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, encode::DecodeBase64(encoded.base64(), encoded.length));
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

void StopHandle::Stop() {
  // Called under the lock, so the Snapshot cannot close its page (Attach(nullptr) waits for
  // the lock) while its calls are being failed. Failing them only wakes their waiters.
  MutexLock lock(&mu_);
  stopped_ = true;
  if (fail_calls_) fail_calls_();
}

bool StopHandle::stopped() const {
  MutexLock lock(&mu_);
  return stopped_;
}

void StopHandle::Attach(std::function<void()> fail_calls) {
  MutexLock lock(&mu_);
  fail_calls_ = std::move(fail_calls);
  if (stopped_ && fail_calls_) fail_calls_();
}

namespace {

// Cuts a clip of `width` × `height` CSS pixels, drawn at `scale` device pixels to the CSS
// pixel, to at most `max_pixels` pixels of image: at the bottom, and at the right should
// one row of it be more. Chromium rounds each side of the image up.
void HoldToPixelCap(double& width, double& height, double scale, int64_t max_pixels) {
  if (max_pixels <= 0) return;
  const double cap = static_cast<double>(max_pixels);
  if (std::ceil(width * scale) * std::ceil(height * scale) <= cap) return;
  width = std::min(width, std::floor(cap / scale));
  const double rows = std::floor(cap / std::ceil(width * scale));
  height = std::max(1.0, std::floor(rows / scale));
}

}  // namespace

std::string HtmlDataUrl(const std::string& html) {
  std::string encoded(AV_BASE64_SIZE(html.size()), '\0');
  av_base64_encode(encoded.data(), static_cast<int>(encoded.size()),
                   reinterpret_cast<const uint8_t*>(html.data()), static_cast<int>(html.size()));
  encoded.resize(std::strlen(encoded.c_str()));
  return "data:text/html;charset=utf-8;base64," + encoded;
}

// What the DevTools reader thread learns about the page, for the thread that waits.
struct Snapshot::Shared {
  Mutex mu;
  // Signalled when a request ends, the page loads or signals, or its renderer crashes (the
  // session, whose handler runs first, holds that; a wait here learns of it at once).
  CondVar cv;
  // A posted document has no request of its own (a Document request is a frame's). Set
  // before the events are subscribed to.
  bool document_posted = false;
  std::string main_frame_id GUARDED_BY(mu);
  std::string document_request GUARDED_BY(mu);
  int http_status GUARDED_BY(mu) = 0;
  std::string network_error GUARDED_BY(mu);
  bool loaded GUARDED_BY(mu) = false;
  std::map<std::string, std::string> requests GUARDED_BY(mu);  // In flight: id -> URL.
  Clock::time_point idle_since GUARDED_BY(mu) = Clock::now();  // When requests emptied.
  std::string signal GUARDED_BY(mu);  // "trigger", "ready", ...
  // The last answer of the page's script to a wait for it to settle ("settled", "cap:...",
  // "quiet"), empty while it waits.
  std::string settle GUARDED_BY(mu);
  // Set before the events are subscribed to; the session outlives its subscriptions.
  PageSession* session = nullptr;

  void OnEvent(const cdp::Event& e) EXCLUDES(mu);
};

void Snapshot::Shared::OnEvent(const cdp::Event& e) {
  const cdp::Message& m = *e.message;
  const std::string& method = e.method;
  if (method == "Page.javascriptDialogOpening") {
    // alert(), confirm(), prompt() and beforeunload hold the page's main thread (its load,
    // its script, every later call) until they are answered, and nobody will: dismiss each
    // at once, from here, as a user who closes it would (alert returns, confirm is false,
    // prompt null, the page stays).
    if (session != nullptr) {
      session->Send("Page.handleJavaScriptDialog", R"({"accept":false})").IgnoreError();
    }
    return;
  }
  MutexLock lock(&mu);
  if (method == "Network.requestWillBeSent") {
    // Media and event streams stay open for as long as the page lives: waiting for them
    // would wait for ever.
    Result<std::string> type = cdp::GetString(m, {"params", "type"});
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    if (!id.ok()) return;
    if (type.ok() && *type == "Document" && document_request.empty() && !document_posted) {
      Result<std::string> frame = cdp::GetString(m, {"params", "frameId"});
      if (frame.ok() && (main_frame_id.empty() || *frame == main_frame_id)) document_request = *id;
    }
    if (type.ok() && (*type == "Media" || *type == "EventSource")) return;
    // A worker's main script is announced here and finishes on the worker's own session,
    // which a Snapshot does not attach: its request id is the worker's target id (32 hex
    // digits, as a navigation's loader id is; other requests are "<process>.<number>").
    // The page's script counts the worker as work it cannot see the end of.
    if (type.ok() && *type != "Document" && id->size() == 32 &&
        id->find_first_not_of("0123456789ABCDEF") == std::string::npos) {
      return;
    }
    Result<std::string> url = cdp::GetString(m, {"params", "request", "url"});
    requests[*id] = url.ok() ? *url : "?";
  } else if (method == "Network.responseReceived") {
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    if (id.ok() && *id == document_request && http_status == 0) {
      Result<double> status = cdp::GetNumber(m, {"params", "response", "status"});
      if (status.ok()) http_status = static_cast<int>(*status);
    }
  } else if (method == "Network.loadingFinished" || method == "Network.loadingFailed") {
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    if (!id.ok()) return;
    if (method == "Network.loadingFailed" && *id == document_request && network_error.empty()) {
      Result<std::string> text = cdp::GetString(m, {"params", "errorText"});
      network_error = text.ok() ? *text : "failed";
    }
    if (requests.erase(*id) > 0 && requests.empty()) idle_since = Clock::now();
    cv.SignalAll();
  } else if (method == "Page.documentOpened") {
    // A posted document is written into the page's first document (Load): a load event
    // before this one was the empty document's.
    loaded = false;
  } else if (method == "Page.loadEventFired") {
    loaded = true;
    cv.SignalAll();
  } else if (method == "Runtime.bindingCalled") {
    Result<std::string> payload = cdp::GetString(m, {"params", "payload"});
    if (payload.ok() && payload->starts_with("settle:")) {
      settle = payload->substr(7);
    } else if (payload.ok() && signal.empty()) {
      signal = *payload;
    }
    cv.SignalAll();
  } else if (method == "Inspector.targetCrashed") {
    cv.SignalAll();
  }
}

Snapshot::Snapshot(browser::Browser& browser, const SnapshotOptions& options)
    : browser_(browser), options_(options), start_(Clock::now()),
      shared_(std::make_shared<Shared>()) {}

Snapshot::~Snapshot() {
  // Nothing stops the page once it is closing; the session then closes the target and its
  // context.
  if (options_.stop) options_.stop->Attach(nullptr);
}

int Snapshot::http_status() const {
  MutexLock lock(&shared_->mu);
  return shared_->http_status;
}

std::string Snapshot::PageName() const {
  return options_.html.empty() ? "the page " + options_.url : "the document";
}

Result<std::unique_ptr<Snapshot>> Snapshot::Open(browser::Browser& browser,
                                                 const SnapshotOptions& options) {
  std::unique_ptr<Snapshot> snapshot(new Snapshot(browser, options));
  PR_RETURN_IF_ERROR(snapshot->Prepare());
  PR_RETURN_IF_ERROR(snapshot->Load());
  PR_RETURN_IF_ERROR(snapshot->Wait());
  return snapshot;
}

Result<cdp::Message> Snapshot::Call(std::string_view method, std::string_view params) {
  PR_ASSIGN_OR_RETURN(std::vector<cdp::Message> replies,
                      CallAll({cdp::Command{std::string(method), std::string(params)}}));
  return std::move(replies.front());
}

Result<std::vector<cdp::Message>> Snapshot::CallAll(const std::vector<cdp::Command>& commands) {
  // A capture stopped between two calls makes no more: StopHandle::Stop() fails only the
  // calls waiting when it comes.
  PR_RETURN_IF_ERROR(session_->Check());
  // Every call is held to what is left of the capture's whole timeout.
  Result<std::vector<cdp::Message>> replies =
      session_->CallAll(commands, std::max(milliseconds(1), options_.timeout - Since(start_)));
  if (!replies.ok() && replies.status().code() == StatusCode::kDeadlineExceeded) {
    std::string methods;
    for (const cdp::Command& command : commands) {
      methods += (methods.empty() ? "" : ", ") + command.method;
    }
    return TimedOut((commands.size() == 1 ? "an answer to " : "the answers to ") + methods);
  }
  return replies;
}

Status Snapshot::TimedOut(const std::string& waiting_for) {
  // What the page still had in flight; its own document first (until that is answered, the
  // page has no document of its own, and DevTools holds calls to it).
  std::string requests;
  bool document_pending = false;
  {
    MutexLock lock(&shared_->mu);
    auto document = shared_->requests.find(shared_->document_request);
    if (document != shared_->requests.end()) {
      document_pending = true;
      requests = "the answer of its server (" + document->second + ")";
    }
    for (const auto& [id, url] : shared_->requests) {
      if (id == shared_->document_request) continue;
      if (requests.size() > 300) {
        requests += ", ...";
        break;
      }
      requests += (requests.empty() ? "" : ", ") + url;
    }
  }
  std::string why;
  if (document_pending) {
    why = "still waiting for " + requests;
  } else {
    // The page's main thread answers a trivial call at once unless a script holds it;
    // pagereel's script, when the page has it, says what work the page still had.
    Result<cdp::Message> probe = session_->Call(
        "Runtime.evaluate",
        json{{"expression",
              "window.__pagereelSnapshot ? window.__pagereelSnapshot.pendingWork(Infinity) : ''"},
             {"returnByValue", true}}
            .dump(),
        kBusyProbe);
    if (!probe.ok() && probe.status().code() == StatusCode::kDeadlineExceeded) {
      why = "its main thread was busy running a script all along (a script that does not end?)";
    } else if (!requests.empty()) {
      why = "still waiting for " + requests;
    } else {
      why = "still waiting for " + waiting_for;
      Result<std::string> work =
          probe.ok() ? cdp::GetString(*probe, {"result", "result", "value"}) : std::string();
      if (work.ok() && !work->empty()) why += " (it still had " + *work + " to do)";
    }
  }
  return DeadlineExceededError(PageName() + " did not finish within " +
                               std::to_string(options_.timeout.count()) + " ms: " + why);
}

Status Snapshot::Prepare() {
  PageSessionOptions session;
  session.name = PageName();
  session.context = options_.context;
  session.target.width = options_.width;
  session.target.height = options_.height;
  session.target.begin_frame_control = false;
  session.timeout = options_.timeout;
  // A capture whose client left fails with kCancelled, whatever the browser answered.
  session.check = [this] {
    if ((options_.should_stop && options_.should_stop()) ||
        (options_.stop && options_.stop->stopped())) {
      return CancelledError("the capture was stopped");
    }
    return Status::Ok();
  };
  PR_ASSIGN_OR_RETURN(session_, PageSession::Open(browser_, std::move(session)));
  if (options_.stop) {
    // A page whose script runs on and on answers no call: stopping fails the calls waiting
    // for it, rather than letting them wait out the capture's timeout.
    options_.stop->Attach([session = session_.get()] {
      session->FailCalls(CancelledError("the capture was stopped"));
    });
  }
  shared_->session = session_.get();
  shared_->document_posted = !options_.html.empty();
  session_->Subscribe("", shared_, &Shared::OnEvent);
  // The page's setup, sent at once: none of these needs an earlier one's answer, and the
  // page runs them in the order sent (one round trip instead of eight; bench/RESULTS.md,
  // "fewer round trips").
  std::vector<cdp::Command> setup = {
      {"Runtime.enable"},
      {"Runtime.addBinding", json{{"name", "__pagereelSignal"}}.dump()},
      {"Page.enable"},
      {"Network.enable", json{{"maxTotalBufferSize", 0}, {"maxResourceBufferSize", 0}}.dump()},
      {"Page.addScriptToEvaluateOnNewDocument", json{{"source", kSnapshotScript}}.dump()},
      {"Emulation.setDeviceMetricsOverride", json{{"width", options_.width},
                                                  {"height", options_.height},
                                                  {"deviceScaleFactor", options_.scale},
                                                  {"mobile", false}}
                                                 .dump()},
  };
  if (options_.transparent) {
    setup.push_back({"Emulation.setDefaultBackgroundColorOverride",
                     json{{"color", {{"r", 0}, {"g", 0}, {"b", 0}, {"a", 0}}}}.dump()});
  }
  setup.push_back({"Page.getFrameTree"});
  const size_t frame_tree = setup.size() - 1;
  if (!options_.html.empty()) {
    // A posted document is written into the target's first (empty) document, as
    // document.open() and write() do: no navigation, so no second renderer process, and no
    // URL, whose length Chromium limits to 2 MiB (issue 20). The empty document keeps its
    // window through document.open(), with pagereel's script put in it first. Sent with
    // the setup, after it: the page runs them in that order.
    setup.push_back({"Runtime.evaluate", json{{"expression", kSnapshotScript}}.dump()});
    setup.push_back({"Runtime.evaluate",
                     json{{"expression", "document.open(); document.write(" +
                                             cdp::JsonQuote(options_.html) +
                                             "); document.close(); 0"}}
                         .dump()});
  }
  PR_ASSIGN_OR_RETURN(std::vector<cdp::Message> replies, CallAll(setup));
  if (!options_.html.empty() && cdp::Has(replies.back(), {"result", "exceptionDetails"})) {
    return FailedPreconditionError(PageName() + " could not be written into the page");
  }
  PR_ASSIGN_OR_RETURN(std::string frame_id,
                      cdp::GetString(replies[frame_tree], {"result", "frameTree", "frame", "id"}));
  MutexLock lock(&shared_->mu);
  shared_->main_frame_id = frame_id;
  return Status::Ok();
}

Status Snapshot::SleepUntil(Clock::time_point until, Clock::time_point deadline,
                            const std::string& waiting_for) {
  return WaitFor([until] { return Clock::now() >= until; }, deadline, waiting_for);
}

Status Snapshot::WaitFor(const std::function<bool()>& done, Clock::time_point deadline,
                         const std::string& waiting_for, PageSignals signals) {
  for (;;) {
    PR_RETURN_IF_ERROR(session_->Check());
    {
      MutexLock lock(&shared_->mu);
      if ((signals == PageSignals::kEndTheWait && !shared_->signal.empty()) || done()) {
        return Status::Ok();
      }
      Clock::time_point now = Clock::now();
      if (now < deadline) {
        shared_->cv.WaitUntil(&shared_->mu, std::min(deadline, now + kPoll));
        continue;
      }
    }
    return TimedOut(waiting_for);
  }
}

Status Snapshot::Load() {
  // A posted document was written in with the page's setup (Prepare).
  if (options_.html.empty()) {
    PR_ASSIGN_OR_RETURN(cdp::Message navigated,
                        Call("Page.navigate", json{{"url", options_.url}}.dump()));
    Result<std::string> error = cdp::GetString(navigated, {"result", "errorText"});
    if (error.ok() && !error->empty()) {
      return FailedPreconditionError(PageName() + " could not be loaded: " + *error);
    }
  }
  Status failed;
  PR_RETURN_IF_ERROR(WaitFor(
      [&]() REQUIRES(shared_->mu) {
        if (shared_->http_status >= 400) {
          failed = FailedPreconditionError(PageName() + " answered HTTP " +
                                           std::to_string(shared_->http_status));
        } else if (!shared_->network_error.empty()) {
          failed = FailedPreconditionError(PageName() +
                                           " could not be loaded: " + shared_->network_error);
        }
        return !failed.ok() || shared_->loaded;
      },
      start_ + options_.timeout, "its load event", PageSignals::kIgnored));
  PR_RETURN_IF_ERROR(failed);
  report_.load = Since(start_);
  return Status::Ok();
}

Status Snapshot::WaitNetworkIdle(Clock::time_point deadline, milliseconds idle) {
  return WaitFor(
      [&]() REQUIRES(shared_->mu) {
        return shared_->requests.empty() && Clock::now() - shared_->idle_since >= idle;
      },
      deadline, "its network to go idle");
}

Status Snapshot::WaitQuiet(milliseconds cap, Clock::time_point deadline) {
  // The page's script notes its own activity; it answers through the binding so this
  // thread can still notice a trigger, a crash or a client that left meanwhile.
  std::string expression = "window.__pagereelSnapshot.waitForQuiet(" +
                           std::to_string(kQuiet.count()) + ", " + std::to_string(cap.count()) +
                           ").then((r) => window.__pagereelSignal('settle:' + r))";
  return AskPage(expression, deadline, "the page to stop changing");
}

Status Snapshot::AskPage(const std::string& expression, Clock::time_point deadline,
                         const std::string& waiting_for) {
  {
    MutexLock lock(&shared_->mu);
    shared_->settle.clear();
  }
  PR_ASSIGN_OR_RETURN(cdp::Message reply, Call("Runtime.evaluate", json{{"expression", expression}}.dump()));
  if (cdp::Has(reply, {"result", "exceptionDetails"})) {
    // The page replaced pagereel's script (or a frame-busting document): give it the old
    // default's quiet time, and say so.
    PR_RETURN_IF_ERROR(SleepUntil(Clock::now() + kQuiet, deadline, waiting_for));
    MutexLock lock(&shared_->mu);
    shared_->settle = "quiet";
    return Status::Ok();
  }
  return WaitFor([&]() REQUIRES(shared_->mu) { return !shared_->settle.empty(); }, deadline,
                 waiting_for);
}

namespace {

// Asks the page's script to answer "settle:<answer>" through the binding once the page has
// settled, or after `left`.
std::string SettleQuestion(milliseconds left) {
  return "window.__pagereelSnapshot.waitForSettled(" + std::to_string(kSettleQuiet.count()) +
         ", " + std::to_string(left.count()) +
         ").then((r) => window.__pagereelSignal('settle:' + r))";
}

}  // namespace

Status Snapshot::WaitSettled(Clock::time_point deadline, std::optional<Clock::time_point> asked) {
  std::optional<Clock::time_point> cap = asked;
  for (;;) {
    if (asked) {
      // The first question went with the check for window.pagereel.ready (Wait()).
      asked.reset();
      PR_RETURN_IF_ERROR(WaitFor([&]() REQUIRES(shared_->mu) { return !shared_->settle.empty(); },
                                 deadline, "the page to settle"));
    } else {
      // Every request the page's documents made (images, stylesheets, fonts, frames,
      // fetches) has ended; DevTools tells of them in order with the page's answers.
      PR_RETURN_IF_ERROR(WaitNetworkIdle(deadline, milliseconds(0)));
      if (!cap) cap = Clock::now() + kSettleCap;
      const milliseconds left = std::max(
          milliseconds(0), std::chrono::duration_cast<milliseconds>(*cap - Clock::now()));
      PR_RETURN_IF_ERROR(AskPage(SettleQuestion(left), deadline, "the page to settle"));
    }
    MutexLock lock(&shared_->mu);
    if (!shared_->signal.empty()) return Status::Ok();
    // Settled with nothing in flight, or out of time: done. A request that began while the
    // page's script looked is waited for, and the page asked again.
    if (shared_->settle != "settled" || shared_->requests.empty() || Clock::now() >= *cap) {
      report_.ended_by = shared_->settle == "settled" ? "settled" : "cap";
      if (shared_->settle.starts_with("cap:")) report_.pending = shared_->settle.substr(4);
      if (shared_->settle == "quiet") report_.ended_by = "quiet";
      return Status::Ok();
    }
  }
}

Status Snapshot::Wait() {
  Clock::time_point wait_start = Clock::now();
  Clock::time_point deadline = start_ + options_.timeout;
  auto finish = [&](std::string ended_by) {
    {
      MutexLock lock(&shared_->mu);
      if (!shared_->signal.empty()) ended_by = shared_->signal;
    }
    report_.ended_by = std::move(ended_by);
    report_.wait = Since(wait_start);
    return Status::Ok();
  };
  switch (options_.wait) {
    case WaitMode::kLoad:
      return finish("load");
    case WaitMode::kFixed:
      PR_RETURN_IF_ERROR(
          SleepUntil(Clock::now() + options_.fixed_wait, deadline, "the end of the fixed wait"));
      return finish("fixed");
    case WaitMode::kNetworkIdle:
      PR_RETURN_IF_ERROR(WaitNetworkIdle(deadline, kNetworkIdle));
      return finish("networkidle");
    case WaitMode::kQuiet:
      PR_RETURN_IF_ERROR(WaitNetworkIdle(deadline, kNetworkIdle));
      // No cap but the deadline: the script's own cap lies beyond it.
      PR_RETURN_IF_ERROR(WaitQuiet(2 * options_.timeout, deadline));
      return finish("quiet");
    case WaitMode::kAuto:
      break;
  }
  // A page that declares readiness is captured when its promise settles. One that does not
  // is asked to say when it has settled in the same call, when nothing of it is in flight
  // (one round trip fewer; otherwise WaitSettled waits for that first).
  std::optional<Clock::time_point> cap;
  {
    MutexLock lock(&shared_->mu);
    if (shared_->requests.empty()) {
      cap = Clock::now() + kSettleCap;
      shared_->settle.clear();
    }
  }
  const std::string otherwise =
      cap ? "(window.__pagereelSnapshot ? (" + SettleQuestion(kSettleCap) + ", 'asked') : false)"
          : std::string("false");
  PR_ASSIGN_OR_RETURN(
      cdp::Message declared,
      Call("Runtime.evaluate",
           json{{"expression",
                 "(window.pagereel && window.pagereel.ready) ? (Promise.resolve(window.pagereel.ready)"
                 ".then(() => window.__pagereelSignal('ready'), (e) => "
                 "window.__pagereelSignal('rejected:' + (e && e.message || e))), true) : " +
                     otherwise},
                {"returnByValue", true}}
               .dump()));
  Result<std::string> asked = cdp::GetString(declared, {"result", "result", "value"});
  if (!asked.ok() || *asked != "asked") cap.reset();
  Result<bool> signals = cdp::GetBool(declared, {"result", "result", "value"});
  if (signals.ok() && *signals) {
    PR_RETURN_IF_ERROR(SleepUntil(deadline, deadline, "window.pagereel.ready to settle"));
    MutexLock lock(&shared_->mu);
    if (shared_->signal.rfind("rejected:", 0) == 0) {
      return FailedPreconditionError(PageName() + " rejected window.pagereel.ready: " +
                                     shared_->signal.substr(9));
    }
  } else {
    PR_RETURN_IF_ERROR(WaitSettled(deadline, cap));
  }
  return finish(report_.ended_by);
}

Result<std::string> Snapshot::Screenshot(const ScreenshotOptions& options) {
  json params = {{"fromSurface", true}};
  switch (options.type) {
    case ImageType::kPng:
      // Chromium's fast PNG encoder (Up filter, fast zlib): the same pixels in about a third
      // of the browser's CPU, for 30-55 % more bytes (bench/RESULTS.md, serve speed).
      params["format"] = "png";
      params["optimizeForSpeed"] = true;
      break;
    case ImageType::kJpeg: params["format"] = "jpeg"; params["quality"] = options.quality; break;
    case ImageType::kWebp: params["format"] = "webp"; params["quality"] = options.quality; break;
  }
  if (!options.selector.empty()) {
    std::string expression =
        "(() => { const e = document.querySelector(" + cdp::JsonQuote(options.selector) +
        "); if (!e) return null; const r = e.getBoundingClientRect(); "
        "return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()";
    PR_ASSIGN_OR_RETURN(cdp::Message reply,
                        Call("Runtime.evaluate",
                             json{{"expression", expression}, {"returnByValue", true}}.dump()));
    if (cdp::Has(reply, {"result", "exceptionDetails"})) {
      return InvalidArgumentError("selector '" + options.selector + "' is not a valid CSS selector");
    }
    json box = json::parse(reply.json.c_str(), nullptr, false)["result"]["result"].value("value", json());
    if (!box.is_array() || box.size() != 4 || !(box[2].get<double>() > 0) ||
        !(box[3].get<double>() > 0)) {
      return NotFoundError("selector '" + options.selector + "' matches no visible element");
    }
    double width = box[2].get<double>();
    double height = box[3].get<double>();
    HoldToPixelCap(width, height, options_.scale, options.max_pixels);
    params["clip"] = {
        {"x", box[0]}, {"y", box[1]}, {"width", width}, {"height", height}, {"scale", 1}};
    params["captureBeyondViewport"] = true;
  } else if (options.full_page) {
    PR_ASSIGN_OR_RETURN(cdp::Message metrics, Call("Page.getLayoutMetrics"));
    Result<double> w = cdp::GetNumber(metrics, {"result", "cssContentSize", "width"});
    Result<double> h = cdp::GetNumber(metrics, {"result", "cssContentSize", "height"});
    if (w.ok() && h.ok()) {
      double width = std::min<double>(std::max<double>(*w, options_.width), kMaxFullPageHeight);
      double height = std::min<double>(std::max<double>(*h, options_.height), kMaxFullPageHeight);
      HoldToPixelCap(width, height, options_.scale, options.max_pixels);
      params["clip"] = {{"x", 0}, {"y", 0}, {"width", width}, {"height", height}, {"scale", 1}};
      params["captureBeyondViewport"] = true;
    }
  }
  PR_RETURN_IF_ERROR(session_->Check());
  const milliseconds left = options_.timeout - Since(start_);
  if (left > kScreenshotPatience) {
    Result<cdp::Message> shot =
        session_->Call("Page.captureScreenshot", params.dump(), kScreenshotPatience);
    if (shot.ok()) return DecodeData(std::move(shot).value());
    if (shot.status().code() != StatusCode::kDeadlineExceeded) return shot.status();
    // A page whose script holds its main thread answers nothing; one that answers a trivial
    // call at once has had its screenshot lost by Chromium.
    Result<cdp::Message> probe =
        session_->Call("Runtime.evaluate", json{{"expression", "0"}}.dump(), kBusyProbe);
    if (probe.ok()) {
      screenshot_stuck_ = true;
      return UnavailableError("Chromium did not answer Page.captureScreenshot of " + PageName() +
                              " within " + SecondsText(kScreenshotPatience) +
                              " although the page answered other calls");
    }
  }
  PR_ASSIGN_OR_RETURN(cdp::Message shot, Call("Page.captureScreenshot", params.dump()));
  return DecodeData(std::move(shot));
}

Result<std::string> Snapshot::Pdf(const PdfOptions& options) {
  json params = {{"paperWidth", options.paper_width_in},
                 {"paperHeight", options.paper_height_in},
                 {"marginTop", options.margin_top_in},
                 {"marginBottom", options.margin_bottom_in},
                 {"marginLeft", options.margin_left_in},
                 {"marginRight", options.margin_right_in},
                 {"landscape", options.landscape},
                 {"printBackground", options.print_background}};
  if (!options.header_template.empty() || !options.footer_template.empty()) {
    params["displayHeaderFooter"] = true;
    // Chromium prints its own date and title where a template is missing.
    params["headerTemplate"] = options.header_template.empty() ? "<span></span>" : options.header_template;
    params["footerTemplate"] = options.footer_template.empty() ? "<span></span>" : options.footer_template;
  }
  if (!options.page_ranges.empty()) params["pageRanges"] = options.page_ranges;
  Result<cdp::Message> pdf = Call("Page.printToPDF", params.dump());
  if (!pdf.ok() && !options.page_ranges.empty() &&
      pdf.status().code() == StatusCode::kFailedPrecondition) {
    return InvalidArgumentError("pageRanges '" + options.page_ranges +
                                "' does not fit the document: " + std::string(pdf.status().message()));
  }
  PR_RETURN_IF_ERROR(pdf.status());
  return DecodeData(std::move(pdf).value());
}

}  // namespace pagereel::capture
