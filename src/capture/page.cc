#include "capture/page.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "capture/page_script.h"
#include "capture/page_session.h"
#include "capture/shared_port_script.h"
#include "capture/worker_script.h"
#include "cdp/json_util.h"

namespace pagereel::capture {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Virtual time at which the page loads: a fence just past 0 that holds the clock still.
// The page's documents take their time origin here.
constexpr int64_t kLoadUs = 1;
// How many times, this far apart, a page must be found ready with nothing in flight
// before frame 0 (WaitUntilReady).
constexpr int kQuietChecks = 2;
constexpr std::chrono::milliseconds kQuietCheckPause{20};

// Page time granted per step while the page waits on its own timers to become ready.
constexpr int64_t kReadyStepUs = 10'000;
// Frames are drawn this far past a whole millisecond after kLoadUs. Timers the page set
// while it loaded then never fall due at the very instant a frame ends, and Date.now()
// (which floors virtual time to the ms) still reads the frame's whole-ms time. Every
// instant pagereel gives the page (frames, steps) stays a multiple of 100 us from the
// documents' time origins: Chromium coarsens animation and timeline times to 100 us with
// a random jitter, so a time between two multiples would round either way from run to run.
constexpr int64_t kFramePhaseUs = 500;
// No two animation frames are further apart than this in page time: animation libraries
// read longer gaps as a stalled tab and skip them (GSAP's lag smoothing starts at 500 ms,
// d3-timer's at 1000 ms), so slow films get extra animation frames between theirs.
constexpr int64_t kMaxTickGapMs = 300;
// The page's clocks read -lead while it loads, and run to 0 at frame 0: as in a browser,
// the first frame comes a frame after the page started. Libraries that measure from their
// start take no elapsed time for "nothing happened yet": at 0 PixiJS's Ticker ran no
// listener and p5 drew nothing in frame 0 (both films opened with a black frame). One
// film frame, at most 100 ms: longer gaps look like a stalled tab to GSAP (500 ms).
constexpr int64_t kMaxLoadLeadMs = 100;
int64_t LoadLeadMs(Rational fps) { return std::min(FrameTimeMillis(1, fps), kMaxLoadLeadMs); }
// Tries for one frame's screenshot. The first beginFrame after a load came back without
// screenshotData ("Readback from surface failed") in 19 of 40 runs measured on
// headless-shell 156 with 2 cores; sending the same frameTimeTicks again fixed every case
// within 2-4 tries, with requestAnimationFrame still run once (docs/architecture.md,
// "Driving the browser").
constexpr int kScreenshotTries = 10;
// Times a frame drawn without the page's animation frame is drawn again (each such redraw
// is told: PageOptions::on_redrawn_frame), each after a pause that doubles from 1 ms up to
// kRedrawPauseMax (about 0.4 s in all). Three at once were not enough beside two CPU hogs:
// a View Transition starting at frame 30 of tests/pages/view-transition.html ran no
// animation frame in four beginFrames in a row (Chromium holds rendering while it captures
// the old state, until the page's update callback has run), and the render failed.
constexpr int kRedrawTries = 10;
constexpr std::chrono::milliseconds kRedrawPauseMax{100};
// How long a frame waits, at most, for sought videos' pictures to reach drawImage(video).
constexpr std::chrono::milliseconds kVideoPictureWait{1'000};
// How long a frame's report from the page may trail the browser's reply to beginFrame.
constexpr std::chrono::milliseconds kReportWait{2'000};
// Page messages kept between two TakeMessages() calls (the renderer takes them every frame).
constexpr size_t kMaxMessages = 100;
// Grants of page time a frame's advance may end early, each where a timer set while page
// time stood still is due (AdvanceTo). Each costs a grant and a round trip to the page
// (under 1 ms: bench/RESULTS.md "timers"); a 1 ms setInterval takes about 9 a frame at
// 30 fps (4 ms apart from its 7th run).
constexpr int kMaxTimerStops = 256;

// How long page time waits for a WebSocket to connect, and for its answer to a message the
// page sent, before it goes on without (page_script.js). A server that answers does so in
// milliseconds on the networks a render runs on; one that never answers costs this once
// per socket. A socket that never connects (a firewall that drops it) does not fail the
// render, as it did not before sockets were waited for.
constexpr std::chrono::seconds kSocketConnectWait{5};
constexpr std::chrono::seconds kSocketAnswerWait{1};

// The two, within a third of the page's timeout each, so giving up comes before the
// timeout that fails the render.
std::pair<Clock::duration, Clock::duration> SocketWaits(std::chrono::milliseconds timeout) {
  const Clock::duration most = timeout / 3;
  return {std::min<Clock::duration>(kSocketConnectWait, most),
          std::min<Clock::duration>(kSocketAnswerWait, most)};
}

std::string Dump(const json& j) { return j.dump(); }

// Target.setAutoAttach for the page and each of its workers: dedicated workers stop at
// their start until pagereel's worker script is in them (Shared::OnAttached); worklets
// (AudioWorklet, paint worklets) are attached only to be let go: left out of the filter,
// one still waited for a debugger, and its addModule() never settled (headless-shell 156).
// Other kinds of target are not attached.
std::string AutoAttachParams() {
  return Dump({{"autoAttach", true},
               {"waitForDebuggerOnStart", true},
               {"flatten", true},
               {"filter", json::array({{{"type", "worker"}, {"exclude", false}},
                                       {{"type", "worklet"}, {"exclude", false}}})}});
}

// Target.setAutoAttach for the browser's own session: shared workers, which are not
// children of any page, stop at their start until the page of their browser context has
// put pagereel's worker script in them (Shared::OnBrowserEvent). Nothing else attaches.
std::string SharedWorkerAutoAttachParams() {
  return Dump({{"autoAttach", true},
               {"waitForDebuggerOnStart", true},
               {"flatten", true},
               {"filter", json::array({{{"type", "shared_worker"}, {"exclude", false}}})}});
}

// "A:B:C" into its parts.
std::vector<std::string> SplitColons(std::string_view text) {
  std::vector<std::string> parts;
  for (;;) {
    const size_t colon = text.find(':');
    parts.emplace_back(text.substr(0, colon));
    if (colon == std::string_view::npos) return parts;
    text.remove_prefix(colon + 1);
  }
}

// Milliseconds as Chromium wants them, from exact microseconds: Chromium truncates
// ms * 1000 to whole microseconds, so 0.4 us keeps the result on `us`.
double Millis(int64_t us) { return (static_cast<double>(us) + 0.4) / 1000.0; }

// What messages call the page: its name, else its URL; a data: URL (a whole document)
// would fill the message, so only its start is shown.
std::string NameFor(const PageOptions& options) {
  if (!options.name.empty()) return options.name;
  if (options.url.starts_with("data:") && options.url.size() > 64) {
    return options.url.substr(0, 60) + "...";
  }
  return options.url;
}

// The first frame whose time is not before `ms`: the frame that shows what the page did
// at that time (what runs between two frames shows in the second).
int64_t FrameAtOrAfter(int64_t ms, Rational fps) {
  int64_t n = std::max<int64_t>(0, ms * fps.num / (1000 * fps.den) - 1);
  while (FrameTimeMillis(n, fps) < ms) ++n;
  return n;
}

// The frame an unhandled promise rejection happened in, from the film time when Chromium
// reported it (`at`) and that of the document's last animation frame (`last`). A rejection
// in an animation frame is reported in a task that runs with page time already at the next
// frame's: reported exactly at a frame's time, after the last animation frame, it is that
// frame's. (So is one of a timer due exactly at a frame's time: it is listed a frame
// early, where a browser would have run it just after that frame.)
int64_t RejectionFrame(int64_t at, int64_t last, Rational fps) {
  const int64_t next = FrameAtOrAfter(at, fps);
  if (last >= 0 && last < at && FrameTimeMillis(next, fps) == at) return FrameAtOrAfter(last, fps);
  return next;
}

// How the summary shows a dialog: alert("Saved"), dismissed.
std::string DialogText(const std::string& type, const std::string& message) {
  std::string text = message;
  if (text.size() > 160) {
    size_t cut = 157;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  // Quoted and escaped, on one line.
  std::string quoted = json(text).dump(-1, ' ', false, json::error_handler_t::replace);
  const char* answer = type == "confirm"        ? ", dismissed (it returned false)"
                       : type == "prompt"       ? ", dismissed (it returned null)"
                       : type == "beforeunload" ? ", dismissed (the page stayed)"
                                                : ", dismissed";
  return type + "(" + quoted + ")" + answer;
}

}  // namespace

struct Page::Shared : std::enable_shared_from_this<Page::Shared> {
  // A worker of the page, attached paused at its start (see OnAttached): a dedicated
  // worker, or a shared worker of the page's browser context (OnBrowserEvent).
  enum class WorkerKind { kDedicated, kShared };
  struct Worker {
    WorkerKind kind = WorkerKind::kDedicated;
    std::string target_id;  // Also the request id of its main script.
    uint64_t subscription = 0;
    std::string traffic_id;  // Its id in `traffic`, once it has said it (dedicated only).
    int64_t order = 0;       // Workers advance in the order they started.
    int64_t ports_waiting = 0;  // Shared: ports it started whose id has not come yet.
  };
  // Messages between a document and one of its dedicated workers (page_script.js): sent
  // and received as the document counts them, handled and posted as the worker does.
  struct Traffic {
    int64_t sent = 0;
    int64_t received = 0;
    int64_t handled = 0;
    int64_t posted = 0;
  };
  // A MessagePort between a document and a shared worker, by the id the document gave it:
  // its counts as for a dedicated worker's messages, sent and received as the document
  // counts them (shared_port_script.js), handled and posted as the worker does
  // (worker_script.js).
  struct Port {
    int64_t context = -1;  // The document's, once it has said.
    std::string worker;    // The worker's session, once it has said.
    bool page_started = false;  // The document's end delivers messages.
    Traffic counts;
  };

  Shared(int64_t epoch, int64_t lead, Rational film_fps,
         std::pair<Clock::duration, Clock::duration> socket_limits)
      : epoch_ms(epoch),
        lead_ms(lead),
        fps(film_fps),
        socket_connect_wait(socket_limits.first),
        socket_answer_wait(socket_limits.second) {}

  const int64_t epoch_ms;  // Date.now() at frame 0, as the page script has it.
  const int64_t lead_ms;   // How long before frame 0 the page loaded, as its clocks read.
  const Rational fps;
  // How long a WebSocket's connection and answer are waited for (SocketWaits).
  const Clock::duration socket_connect_wait;
  const Clock::duration socket_answer_wait;
  Mutex mu;
  CondVar cv;  // Signalled when reports, leaving or requests change.
  std::string main_frame_id GUARDED_BY(mu);
  std::string navigated_to GUARDED_BY(mu);  // Set when the main frame leaves our URL...
  int64_t navigated_at GUARDED_BY(mu) = -1;  // ...at this frame (-1: while it loaded).
  bool closed GUARDED_BY(mu) = false;       // It called window.close().
  bool leaving GUARDED_BY(mu) = false;  // The top document began to unload...
  // ...at this frame: where the page asked to go, which may be frames before the other
  // document arrives.
  int64_t leaving_at GUARDED_BY(mu) = -1;
  std::map<std::string, std::string> requests GUARDED_BY(mu);  // In flight: id -> URL.
  std::set<std::string> requested GUARDED_BY(mu);  // Every URL the page asked for.
  std::set<int64_t> contexts GUARDED_BY(mu);       // Main worlds of the page's documents.
  std::set<int64_t> video_contexts GUARDED_BY(mu);  // Those of them that hold videos.
  // Response bodies each document reads and has not got yet (page_script.js), by context.
  std::map<int64_t, int64_t> bodies_pending GUARDED_BY(mu);
  // Pictures of worker canvases each document has drawn (page_script.js), by context.
  std::map<int64_t, int64_t> canvases_received GUARDED_BY(mu);
  // What page time waits for on the page's WebSockets (page_script.js): a connection being
  // made, or the answer to a message sent, by "CONTEXT:SOCKET.WAIT".
  struct SocketWait {
    bool answer = false;  // Else a connection.
    std::string url;
    Clock::time_point since;
    int64_t frame = -1;
  };
  std::map<std::string, SocketWait> socket_waits GUARDED_BY(mu);
  // The frame the next unhandled promise rejection reported in each document (by context)
  // happened in, as page_script.js's "rejection:" said just before Chromium reports it.
  std::map<int64_t, int64_t> rejection_frames GUARDED_BY(mu);
  // Timers (page_script.js): the virtual times (us) at which those the page set while page
  // time stood still are due, and the grant of page time in flight (from, to: equal while
  // none is), where such a timer was set.
  std::set<int64_t> timer_dues GUARDED_BY(mu);
  int64_t turns GUARDED_BY(mu) = 0;  // Turns of animation frames the page saw the end of.
  int64_t grant_from GUARDED_BY(mu) = 0;
  int64_t grant_to GUARDED_BY(mu) = 0;
  // Sockets ("CONTEXT:SOCKET") an answer was given up on: their sends are not waited for.
  std::set<std::string> sockets_given_up GUARDED_BY(mu);
  int64_t reports GUARDED_BY(mu) = 0;  // Animation frames the page counted, as reported...
  int64_t last_report_ms GUARDED_BY(mu) = -1;  // ...and the film time of the last one.
  int64_t frame GUARDED_BY(mu) = -1;  // The frame being made (for messages).
  // What the page did with sound, as page_script.js told it (capture/page_sound.h).
  std::vector<std::string> sound_messages GUARDED_BY(mu);
  // Raw events for PageMessages, with the frame they came in; parsed by TakeMessages on
  // the page's thread. At most kMaxMessages between two calls.
  std::vector<std::pair<int64_t, std::shared_ptr<const cdp::Message>>> messages GUARDED_BY(mu);
  // The page's dedicated workers, by session id, and the requests they have in flight
  // (request id -> worker session; their URLs are in `requests` too).
  std::map<std::string, Worker> workers GUARDED_BY(mu);
  int64_t workers_started GUARDED_BY(mu) = 0;
  std::map<std::string, std::string> worker_requests GUARDED_BY(mu);
  // By the id the document gave the worker.
  std::map<std::string, Traffic> traffic GUARDED_BY(mu);
  // Ports between documents and shared workers, by the id the document gave each.
  std::map<std::string, Port> ports GUARDED_BY(mu);
  // The page's browser context: shared workers of other contexts are not the page's.
  std::string browser_context_id GUARDED_BY(mu);
  // Where the page's virtual time stands (ms since it was created), and frame 0's whole-ms
  // virtual time once it is known: what a worker that starts now is told.
  double virtual_ms GUARDED_BY(mu) = 0;
  std::optional<int64_t> shift_ms GUARDED_BY(mu);
  // Answers the dialogs pagereel's script cannot (a beforeunload, a document it missed).
  // Set before the first event; the session outlives every call of OnEvent.
  PageSession* session = nullptr;

  void OnEvent(const cdp::Event& e) EXCLUDES(mu);
  // Events of the workers' own sessions: their network requests, message counts and the
  // workers they start.
  void OnWorkerEvent(const cdp::Event& e) EXCLUDES(mu);
  // Target.attachedToTarget and detachedFromTarget, of the page or of a worker.
  void OnAttached(const cdp::Message& m) REQUIRES(mu);
  void OnDetached(const cdp::Message& m) REQUIRES(mu);
  // The same on the browser's own session, where shared workers attach.
  void OnBrowserEvent(const cdp::Event& e) EXCLUDES(mu);
  // Puts pagereel's worker script in a worker attached paused as `session_id`, watches
  // it and lets it run (the calls are queued in order on its session; nothing waits).
  void AdoptWorker(const std::string& session_id, const std::string& target_id, WorkerKind kind)
      REQUIRES(mu);
  // "port:page:ID:SENT:RECEIVED:STARTED" from a document (in `context`),
  // "port:worker:ID:HANDLED:POSTED" and "port:waiting:N" from the shared worker attached
  // as `worker`.
  void OnPortSignal(const std::string& payload, int64_t context, const std::string& worker)
      REQUIRES(mu);
  // "timer:F:DELAY" from a document (page_script.js): a timer set at film ms F to run
  // DELAY ms later.
  void OnTimerSignal(const std::string& payload) REQUIRES(mu);
  // "socket:+S.W:connect|answer:URL" and "socket:-S.W" from a document (page_script.js).
  void OnSocketSignal(const std::string& payload, int64_t context) REQUIRES(mu);
  // Whether page time may go on as far as the page's WebSockets go: no connection is being
  // made and no answer waited for. A connection or answer waited for longer than
  // kSocketConnectWait or kSocketAnswerWait is given up on, with a message for the summary,
  // and that socket is not waited for again.
  bool SocketsSettled() REQUIRES(mu);
  // The worker script with its settings, for a worker that starts now.
  std::string WorkerScript(WorkerKind kind) const REQUIRES(mu);
  // Whether every message on a port between a document and a shared worker has been
  // handled, on both ends that deliver messages. A port whose worker has not started its
  // end (or not yet received its id) is not waited for: its messages stay queued.
  bool PortsSettled() const REQUIRES(mu) {
    for (const auto& [session_id, worker] : workers) {
      if (worker.ports_waiting > 0) return false;
    }
    for (const auto& [id, port] : ports) {
      if (port.context < 0 || port.worker.empty()) continue;
      if (port.counts.handled < port.counts.sent) return false;
      if (port.page_started && port.counts.received < port.counts.posted) return false;
    }
    return true;
  }
  // Whether every worker has started pagereel's script and handled every message its
  // document sent it, and the document has received every message the worker posted.
  bool TrafficSettled() const REQUIRES(mu) {
    for (const auto& [session_id, worker] : workers) {
      if (worker.kind == WorkerKind::kShared) continue;  // Its ports: PortsSettled.
      if (worker.traffic_id.empty()) return false;
      auto t = traffic.find(worker.traffic_id);
      if (t != traffic.end() && (t->second.handled < t->second.sent ||
                                 t->second.received < t->second.posted)) {
        return false;
      }
    }
    return PortsSettled();
  }
  // "traffic:ID:A:B" from a document or worker about a worker it started (A sent, B
  // received), "worker:ID:A:B" from the worker itself (A handled, B posted).
  static bool ParseTraffic(const std::string& payload, std::string* id, int64_t* a, int64_t* b) {
    const size_t colon0 = payload.find(':');
    const size_t colon2 = payload.rfind(':');
    const size_t colon1 = colon2 == std::string::npos ? colon2 : payload.rfind(':', colon2 - 1);
    if (colon1 == std::string::npos || colon1 <= colon0) return false;
    *id = payload.substr(colon0 + 1, colon1 - colon0 - 1);
    *a = std::atoll(payload.c_str() + colon1 + 1);
    *b = std::atoll(payload.c_str() + colon2 + 1);
    return true;
  }
  // Whether a worker is still fetching its scripts (it runs them when they arrive, on the
  // wall clock: page time waits for them).
  bool WorkerFetching() const REQUIRES(mu) {
    if (!worker_requests.empty()) return true;
    for (const auto& [session_id, worker] : workers) {
      if (requests.count(worker.target_id)) return true;
    }
    return false;
  }
};

std::string Page::Shared::WorkerScript(WorkerKind kind) const {
  json config = {{"epoch", epoch_ms},
                 {"lead", lead_ms},
                 {"t", virtual_ms},
                 {"shift", shift_ms ? json(*shift_ms) : json(nullptr)},
                 {"shared", kind == WorkerKind::kShared}};
  std::string script = kWorkerScript;
  script.replace(script.find(kPageScriptConfig), std::string_view(kPageScriptConfig).size(),
                 config.dump());
  return script;
}

void Page::Shared::OnWorkerEvent(const cdp::Event& e) {
  const cdp::Message& m = *e.message;
  MutexLock lock(&mu);
  if (e.method == "Target.attachedToTarget") {
    OnAttached(m);
  } else if (e.method == "Target.detachedFromTarget") {
    OnDetached(m);
  } else if (e.method == "Runtime.bindingCalled") {
    // "worker:ID:HANDLED:POSTED", its own counts; "traffic:ID:SENT:RECEIVED", those of a
    // worker it started, as it counts them.
    Result<std::string> payload = cdp::GetString(m, {"params", "payload"});
    if (payload.ok() && payload->starts_with("port:")) {
      OnPortSignal(*payload, -1, e.session_id);
      return;
    }
    std::string id;
    int64_t a = 0;
    int64_t b = 0;
    auto worker = workers.find(e.session_id);
    if (!payload.ok() || worker == workers.end() || !ParseTraffic(*payload, &id, &a, &b)) return;
    if (payload->starts_with("worker:")) {
      worker->second.traffic_id = id;
      traffic[id].handled = a;
      traffic[id].posted = b;
    } else if (payload->starts_with("traffic:")) {
      traffic[id].sent = a;
      traffic[id].received = b;
    }
    cv.SignalAll();
  } else if (e.method == "Network.requestWillBeSent") {
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    Result<std::string> url = cdp::GetString(m, {"params", "request", "url"});
    if (url.ok()) requested.insert(*url);
    if (!id.ok()) return;
    // A worker's fetch() is waited for by the worker script, which hands its response (and
    // then its body) to the worker's script in its next advance; waiting here for the body to
    // finish loading would wait for ever on a body nobody reads until then.
    Result<std::string> type = cdp::GetString(m, {"params", "type"});
    if (type.ok() && *type == "Fetch") return;
    requests[*id] = url.ok() ? *url : "?";
    worker_requests[*id] = e.session_id;
  } else if (e.method == "Network.loadingFinished" || e.method == "Network.loadingFailed") {
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    if (!id.ok()) return;
    requests.erase(*id);
    worker_requests.erase(*id);
    cv.SignalAll();
  }
}

void Page::Shared::OnAttached(const cdp::Message& m) {
  // A dedicated worker (classic, module or blob:, started by the page or by a worker),
  // paused at its start by an auto-attach: pagereel's worker script goes in before the
  // worker's own, its network requests are watched (its main script's request is announced
  // on the parent's session, and finishes only on the worker's own), the workers it starts
  // are attached the same way, then it runs. The calls are queued in order on its session;
  // nothing here waits. Anything else is let go at once.
  Result<std::string> session_id = cdp::GetString(m, {"params", "sessionId"});
  Result<std::string> type = cdp::GetString(m, {"params", "targetInfo", "type"});
  Result<std::string> target_id = cdp::GetString(m, {"params", "targetInfo", "targetId"});
  if (!session_id.ok() || session == nullptr) return;
  if (type.ok() && *type == "worker" && target_id.ok()) {
    AdoptWorker(*session_id, *target_id, WorkerKind::kDedicated);
    return;
  }
  session->SendTo(*session_id, "Runtime.runIfWaitingForDebugger").IgnoreError();
}

void Page::Shared::AdoptWorker(const std::string& session_id, const std::string& target_id,
                               WorkerKind kind) {
  Worker& worker = workers[session_id];
  worker.kind = kind;
  worker.target_id = target_id;
  worker.order = workers_started++;
  worker.subscription =
      session->SubscribeTo(session_id, shared_from_this(), &Shared::OnWorkerEvent);
  session->SendTo(session_id, "Network.enable",
                  Dump({{"maxTotalBufferSize", 0}, {"maxResourceBufferSize", 0}}))
      .IgnoreError();
  session->SendTo(session_id, "Runtime.addBinding", Dump({{"name", "__pagereelWorkerSignal"}}))
      .IgnoreError();
  session->SendTo(session_id, "Target.setAutoAttach", AutoAttachParams()).IgnoreError();
  session->SendTo(session_id, "Runtime.evaluate", Dump({{"expression", WorkerScript(kind)}}))
      .IgnoreError();
  session->SendTo(session_id, "Runtime.runIfWaitingForDebugger").IgnoreError();
}

void Page::Shared::OnBrowserEvent(const cdp::Event& e) {
  const cdp::Message& m = *e.message;
  MutexLock lock(&mu);
  if (e.method == "Target.detachedFromTarget") {
    OnDetached(m);  // (Only the page's own workers are in `workers`.)
    return;
  }
  // Every page of the browser sees every shared worker attach: each takes those of its
  // own browser context and leaves the others, paused, to theirs.
  Result<std::string> session_id = cdp::GetString(m, {"params", "sessionId"});
  Result<std::string> type = cdp::GetString(m, {"params", "targetInfo", "type"});
  Result<std::string> target_id = cdp::GetString(m, {"params", "targetInfo", "targetId"});
  Result<std::string> context = cdp::GetString(m, {"params", "targetInfo", "browserContextId"});
  if (!session_id.ok() || !type.ok() || *type != "shared_worker" || !target_id.ok() ||
      !context.ok() || *context != browser_context_id || session == nullptr) {
    return;
  }
  AdoptWorker(*session_id, *target_id, WorkerKind::kShared);
}

void Page::Shared::OnTimerSignal(const std::string& payload) {
  if (!shift_ms) return;  // While it loads, page time moves only in grants of its own.
  char* end = nullptr;
  const int64_t film_ms = std::strtoll(payload.c_str() + 6, &end, 10);
  if (*end != ':') return;
  const int64_t delay_ms = std::atoll(end + 1);
  // Where it was set: where the grant in flight ends (a task run at its end), where it
  // began (a task run at its start), or in between, while page time moved, and then
  // Chromium runs it on time. Film ms F is virtual [shift + F ms, + 1 ms); a grant's two
  // ends fall in the same ms only for a 1 us grant, where the later is taken.
  const int64_t from = (*shift_ms + film_ms) * 1000;
  auto in_ms = [&](int64_t us) { return us >= from && us < from + 1000; };
  const int64_t set = in_ms(grant_to) ? grant_to : in_ms(grant_from) ? grant_from : -1;
  if (set >= 0) timer_dues.insert(set + delay_ms * 1000);
}

void Page::Shared::OnSocketSignal(const std::string& payload, int64_t context) {
  const std::string prefix = std::to_string(context) + ":";
  if (payload.starts_with("socket:-")) {
    socket_waits.erase(prefix + payload.substr(8));
    cv.SignalAll();
    return;
  }
  // "socket:+S.W:KIND:URL" (the URL has colons of its own).
  if (!payload.starts_with("socket:+")) return;
  const size_t id_end = payload.find(':', 8);
  if (id_end == std::string::npos) return;
  const size_t kind_end = payload.find(':', id_end + 1);
  if (kind_end == std::string::npos) return;
  const std::string id = payload.substr(8, id_end - 8);
  SocketWait wait;
  wait.answer = payload.compare(id_end + 1, kind_end - id_end - 1, "answer") == 0;
  wait.url = payload.substr(kind_end + 1);
  wait.since = Clock::now();
  wait.frame = frame;
  if (sockets_given_up.contains(prefix + id.substr(0, id.find('.')))) return;
  socket_waits[prefix + id] = std::move(wait);
}

bool Page::Shared::SocketsSettled() {
  const Clock::time_point now = Clock::now();
  bool settled = true;
  for (auto it = socket_waits.begin(); it != socket_waits.end();) {
    const SocketWait& wait = it->second;
    const Clock::duration limit = wait.answer ? socket_answer_wait : socket_connect_wait;
    if (now - wait.since < limit) {
      settled = false;
      ++it;
      continue;
    }
    // Given up: the summary says so, once for the socket, which is not waited for again.
    const std::string socket = it->first.substr(0, it->first.find('.'));
    if (sockets_given_up.insert(socket).second && messages.size() < kMaxMessages) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(limit);
      const json payload = {
          {"url", wait.url}, {"answer", wait.answer}, {"waited", SecondsText(waited)}};
      auto message = std::make_shared<cdp::Message>();
      message->json = Dump({{"method", "Runtime.bindingCalled"},
                            {"params", {{"payload", "socket-unanswered:" + payload.dump()}}}});
      messages.emplace_back(wait.frame, std::move(message));
    }
    it = socket_waits.erase(it);
  }
  return settled;
}

void Page::Shared::OnPortSignal(const std::string& payload, int64_t context,
                                const std::string& worker) {
  const std::vector<std::string> parts = SplitColons(payload);
  if (parts.size() == 3 && parts[1] == "waiting") {
    auto w = workers.find(worker);
    if (w != workers.end()) w->second.ports_waiting = std::atoll(parts[2].c_str());
  } else if (parts.size() == 6 && parts[1] == "page" && context >= 0) {
    Port& port = ports[parts[2]];
    port.context = context;
    port.counts.sent = std::atoll(parts[3].c_str());
    port.counts.received = std::atoll(parts[4].c_str());
    port.page_started = parts[5] == "1";
  } else if (parts.size() == 5 && parts[1] == "worker" && workers.count(worker)) {
    Port& port = ports[parts[2]];
    port.worker = worker;
    port.counts.handled = std::atoll(parts[3].c_str());
    port.counts.posted = std::atoll(parts[4].c_str());
  }
  cv.SignalAll();
}

void Page::Shared::OnDetached(const cdp::Message& m) {
  Result<std::string> session_id = cdp::GetString(m, {"params", "sessionId"});
  if (!session_id.ok()) return;
  auto worker = workers.find(*session_id);
  if (worker == workers.end()) return;
  requests.erase(worker->second.target_id);
  for (auto r = worker_requests.begin(); r != worker_requests.end();) {
    if (r->second != *session_id) {
      ++r;
      continue;
    }
    requests.erase(r->first);
    r = worker_requests.erase(r);
  }
  if (session != nullptr) session->Unsubscribe(worker->second.subscription);
  traffic.erase(worker->second.traffic_id);
  std::erase_if(ports, [&](const auto& port) { return port.second.worker == *session_id; });
  workers.erase(worker);
  cv.SignalAll();
}

void Page::Shared::OnEvent(const cdp::Event& e) {
  const cdp::Message& m = *e.message;
  const std::string& method = e.method;
  MutexLock lock(&mu);
  if (method == "Runtime.bindingCalled") {
    Result<std::string> payload = cdp::GetString(m, {"params", "payload"});
    if (!payload.ok()) return;
    if (payload->rfind("frame:", 0) == 0) {
      // "frame:COUNT:MS"; reports come in order, so the newest is the page's count.
      char* end = nullptr;
      reports = std::strtoll(payload->c_str() + 6, &end, 10);
      last_report_ms = *end == ':' ? std::atoll(end + 1) : -1;
      cv.SignalAll();
    } else if (*payload == "close") {
      closed = true;
    } else if (*payload == "leaving") {
      if (!leaving) leaving_at = frame;
      leaving = true;
      cv.SignalAll();
    } else if (payload->starts_with("unseekable:") || payload->starts_with("dialog:") ||
               payload->starts_with("video-late:")) {
      if (messages.size() < kMaxMessages) messages.emplace_back(frame, e.message);
    } else if (payload->rfind("sound:", 0) == 0) {
      sound_messages.push_back(payload->substr(6));
    } else if (*payload == "video") {
      Result<double> context = cdp::GetNumber(m, {"params", "executionContextId"});
      if (context.ok()) video_contexts.insert(static_cast<int64_t>(*context));
    } else if (payload->rfind("traffic:", 0) == 0) {
      std::string id;
      int64_t sent = 0;
      int64_t received = 0;
      if (ParseTraffic(*payload, &id, &sent, &received)) {
        traffic[id].sent = sent;
        traffic[id].received = received;
      }
      cv.SignalAll();
    } else if (payload->starts_with("port:")) {
      Result<double> context = cdp::GetNumber(m, {"params", "executionContextId"});
      if (context.ok()) OnPortSignal(*payload, static_cast<int64_t>(*context), "");
    } else if (payload->rfind("canvases:", 0) == 0) {
      Result<double> context = cdp::GetNumber(m, {"params", "executionContextId"});
      if (context.ok()) {
        canvases_received[static_cast<int64_t>(*context)] = std::atoll(payload->c_str() + 9);
      }
      cv.SignalAll();
    } else if (payload->starts_with("timer:")) {
      OnTimerSignal(*payload);
    } else if (payload->starts_with("turn:")) {
      turns = std::max<int64_t>(turns, std::atoll(payload->c_str() + 5));
      cv.SignalAll();
    } else if (payload->starts_with("rejection:")) {
      // "rejection:AT:LAST": film time now and at the document's last animation frame.
      Result<double> context = cdp::GetNumber(m, {"params", "executionContextId"});
      char* end = nullptr;
      const int64_t at = std::strtoll(payload->c_str() + 10, &end, 10);
      const int64_t last = *end == ':' ? std::atoll(end + 1) : -1;
      if (context.ok()) {
        rejection_frames[static_cast<int64_t>(*context)] = RejectionFrame(at, last, fps);
      }
    } else if (payload->starts_with("socket:")) {
      Result<double> context = cdp::GetNumber(m, {"params", "executionContextId"});
      if (context.ok()) OnSocketSignal(*payload, static_cast<int64_t>(*context));
    } else if (payload->rfind("bodies:", 0) == 0) {
      Result<double> context = cdp::GetNumber(m, {"params", "executionContextId"});
      const int64_t pending = std::atoll(payload->c_str() + 7);
      if (context.ok() && pending > 0) {
        bodies_pending[static_cast<int64_t>(*context)] = pending;
      } else if (context.ok()) {
        bodies_pending.erase(static_cast<int64_t>(*context));
      }
      cv.SignalAll();
    }
  } else if (method == "Page.javascriptDialogOpening") {
    // A real dialog holds the page's main thread (and the frame being made) until it is
    // answered: dismiss it now, from here, as the script dismisses the ones it catches.
    // A beforeunload dismissed keeps the page where it is, so it is not leaving after all.
    Result<std::string> type = cdp::GetString(m, {"params", "type"});
    if (type.ok() && *type == "beforeunload") {
      leaving = false;
      leaving_at = -1;
    }
    if (session != nullptr) {
      session->Send("Page.handleJavaScriptDialog", Dump({{"accept", false}})).IgnoreError();
    }
    if (messages.size() < kMaxMessages) messages.emplace_back(frame, e.message);
  } else if (method == "Target.attachedToTarget") {
    OnAttached(m);
  } else if (method == "Target.detachedFromTarget") {
    OnDetached(m);
  } else if (method == "Network.requestWillBeSent") {
    if (Result<std::string> url = cdp::GetString(m, {"params", "request", "url"}); url.ok()) {
      requested.insert(*url);
    }
    // Media streams in ranges and pauses its download once it has enough (which also lets
    // virtual time run); waiting for the whole file would wait for ever on a long video.
    Result<std::string> type = cdp::GetString(m, {"params", "type"});
    if (type.ok() && *type == "Media") return;
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    Result<std::string> url = cdp::GetString(m, {"params", "request", "url"});
    if (id.ok()) requests[*id] = url.ok() ? *url : "?";
  } else if (method == "Network.loadingFinished" || method == "Network.loadingFailed") {
    Result<std::string> id = cdp::GetString(m, {"params", "requestId"});
    if (id.ok()) requests.erase(*id);
    cv.SignalAll();
  } else if (method == "Runtime.executionContextCreated") {
    Result<bool> is_default = cdp::GetBool(m, {"params", "context", "auxData", "isDefault"});
    Result<double> id = cdp::GetNumber(m, {"params", "context", "id"});
    if (id.ok() && is_default.ok() && *is_default) contexts.insert(static_cast<int64_t>(*id));
  } else if (method == "Runtime.executionContextDestroyed") {
    Result<double> id = cdp::GetNumber(m, {"params", "executionContextId"});
    if (id.ok()) contexts.erase(static_cast<int64_t>(*id));
    if (id.ok()) bodies_pending.erase(static_cast<int64_t>(*id));
    if (id.ok()) {
      const int64_t gone = static_cast<int64_t>(*id);
      std::erase_if(ports, [&](const auto& port) { return port.second.context == gone; });
      const std::string prefix = std::to_string(gone) + ":";
      std::erase_if(socket_waits, [&](const auto& wait) { return wait.first.starts_with(prefix); });
    }
    cv.SignalAll();
  } else if (method == "Runtime.executionContextsCleared") {
    contexts.clear();
    bodies_pending.clear();
    socket_waits.clear();
    rejection_frames.clear();
    cv.SignalAll();
  } else if (method == "Page.frameNavigated") {
    Result<std::string> frame_id = cdp::GetString(m, {"params", "frame", "id"});
    Result<std::string> url = cdp::GetString(m, {"params", "frame", "url"});
    if (!frame_id.ok() || cdp::Has(m, {"params", "frame", "parentId"})) return;
    if (main_frame_id.empty()) return;  // Still loading our own URL.
    if (*frame_id == main_frame_id && navigated_to.empty()) {
      navigated_to = url.ok() ? *url : "?";
      navigated_at = leaving ? leaving_at : frame;
    }
  } else if (method == "Runtime.exceptionThrown" || method == "Runtime.consoleAPICalled" ||
             method == "Log.entryAdded") {
    if (method == "Runtime.consoleAPICalled") {
      Result<std::string> type = cdp::GetString(m, {"params", "type"});
      if (!type.ok() || (*type != "error" && *type != "assert")) return;
    }
    if (method == "Log.entryAdded") {
      Result<std::string> level = cdp::GetString(m, {"params", "entry", "level"});
      if (!level.ok() || *level != "error") return;
    }
    int64_t at = frame;
    if (method == "Runtime.exceptionThrown") {
      // An unhandled rejection, announced by the page script: at the frame it happened in.
      Result<double> context =
          cdp::GetNumber(m, {"params", "exceptionDetails", "executionContextId"});
      auto rejection = context.ok() ? rejection_frames.find(static_cast<int64_t>(*context))
                                    : rejection_frames.end();
      if (rejection != rejection_frames.end()) {
        at = rejection->second;
        rejection_frames.erase(rejection);
      }
    }
    if (messages.size() < kMaxMessages) messages.emplace_back(at, e.message);
  }
}

std::string Page::PageScript(std::optional<int64_t> shift_ms) const {
  json config = {{"epoch", options_.epoch_ms},
                 {"shift", shift_ms ? json(*shift_ms) : json(nullptr)},
                 {"lead", LoadLeadMs(options_.fps)},
                 {"deviceMemory", options_.device_memory_gb}};
  std::string script = kPageScript;
  script.replace(script.find(kPageScriptConfig), std::string_view(kPageScriptConfig).size(),
                 config.dump());
  return script;
}

Page::Page(browser::Browser& browser, const PageOptions& options)
    : browser_(browser), options_(options), name_(NameFor(options)),
      shared_(std::make_shared<Shared>(options.epoch_ms, LoadLeadMs(options.fps), options.fps,
                                       SocketWaits(options.timeout))) {}

Page::~Page() = default;  // The session closes the target and its context.

std::string Page::Where() const {
  MutexLock lock(&shared_->mu);
  return shared_->frame < 0 ? "while it loaded" : "at frame " + std::to_string(shared_->frame);
}

Result<cdp::Message> Page::Call(std::string_view method, std::string_view params) {
  return session_->Call(method, params);
}

Result<cdp::Message> Page::Evaluate(const std::string& expression, bool await_promise) {
  PR_ASSIGN_OR_RETURN(cdp::Message reply,
                      Call("Runtime.evaluate", Dump({{"expression", expression},
                                                     {"returnByValue", true},
                                                     {"awaitPromise", await_promise}})));
  if (cdp::Has(reply, {"result", "exceptionDetails"})) {
    Result<std::string> text =
        cdp::GetString(reply, {"result", "exceptionDetails", "exception", "description"});
    return FailedPreconditionError("the page threw: " +
                                   (text.ok() ? *text : std::string("an exception")));
  }
  return reply;
}

std::string Page::FileName(const std::string& url) const {
  return url == options_.url ? "the document itself" : url;
}

Status Page::CheckDocument() const {
  MutexLock lock(&shared_->mu);
  if (shared_->closed) {
    return FailedPreconditionError("the page " + name_ +
                                   " stopped: it called window.close(); a page must stay open "
                                   "while it renders");
  }
  if (!shared_->navigated_to.empty()) {
    const int64_t at = shared_->navigated_at;
    return FailedPreconditionError(
        "the page " + name_ + " navigated away to " + shared_->navigated_to +
        (at < 0 ? std::string(" while it loaded") : " at frame " + std::to_string(at)) +
        "; pages must stay on one document while they render");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Page>> Page::Open(browser::Browser& browser, const PageOptions& options) {
  std::unique_ptr<Page> page(new Page(browser, options));
  PR_RETURN_IF_ERROR(page->OpenSession());
  PR_RETURN_IF_ERROR(page->Emulate());
  PR_RETURN_IF_ERROR(page->Load());
  PR_RETURN_IF_ERROR(page->WaitUntilReady());
  PR_RETURN_IF_ERROR(page->Start());
  PR_RETURN_IF_ERROR(page->ReadContract());
  return page;
}

Status Page::OpenSession() {
  const int css_width = static_cast<int>(std::lround(options_.width / options_.scale));
  const int css_height = static_cast<int>(std::lround(options_.height / options_.scale));
  PR_ASSIGN_OR_RETURN(
      session_,
      PageSession::Open(
          browser_,
          {.name = "the page " + name_,
           .context = options_.context,
           .target = {.width = css_width, .height = css_height, .begin_frame_control = true},
           .timeout = options_.timeout,
           .where = [this] { return Where(); },
           .check = [this] { return CheckDocument(); }}));
  // Everything the page's session says goes through one handler, on the reader thread.
  shared_->session = session_.get();
  session_->Subscribe("", shared_, &Shared::OnEvent);
  return Status::Ok();
}

Status Page::Emulate() {
  PR_RETURN_IF_ERROR(Call("Runtime.enable").status());  // Contexts, bindings, exceptions.
  PR_RETURN_IF_ERROR(Call("Runtime.addBinding", Dump({{"name", "__pagereelSignal"}})).status());
  PR_RETURN_IF_ERROR(Call("Page.enable").status());
  PR_RETURN_IF_ERROR(Call("Log.enable").status());
  PR_RETURN_IF_ERROR(
      Call("Network.enable", Dump({{"maxTotalBufferSize", 0}, {"maxResourceBufferSize", 0}}))
          .status());
  PR_RETURN_IF_ERROR(Call("Target.setAutoAttach", AutoAttachParams()).status());
  PR_RETURN_IF_ERROR(Call("Page.addScriptToEvaluateOnNewDocument",
                          Dump({{"source", PageScript(std::nullopt)}}))
                         .status());
  if (options_.shared_workers == PageOptions::SharedWorkers::kAttach) {
    PR_RETURN_IF_ERROR(AttachSharedWorkers());
  }
  PR_RETURN_IF_ERROR(Call("Emulation.setFocusEmulationEnabled", Dump({{"enabled", true}})).status());
  // The screen is the page's own size, so screen.width/height (and availWidth/Height)
  // agree with the film rather than with the browser's default 800x600: pages that size
  // themselves from the screen lay out as they would full-screen.
  const int64_t css_width = std::lround(options_.width / options_.scale);
  const int64_t css_height = std::lround(options_.height / options_.scale);
  PR_RETURN_IF_ERROR(Call("Emulation.setDeviceMetricsOverride",
                          Dump({{"width", css_width},
                                {"height", css_height},
                                {"screenWidth", css_width},
                                {"screenHeight", css_height},
                                {"deviceScaleFactor", options_.scale},
                                {"mobile", false}}))
                         .status());
  if (Status s = Call("Emulation.setTimezoneOverride", Dump({{"timezoneId", options_.timezone}}))
                     .status();
      !s.ok()) {
    return InvalidArgumentError("unknown time zone '" + options_.timezone +
                                "': name an IANA zone such as UTC, Europe/Berlin or "
                                "America/New_York (" + std::string(s.message()) + ")");
  }
  if (Status s = Call("Emulation.setLocaleOverride", Dump({{"locale", options_.locale}})).status();
      !s.ok()) {
    return InvalidArgumentError("unknown locale '" + options_.locale +
                                "': name a BCP 47 locale such as en-US, de-DE or ja-JP (" +
                                std::string(s.message()) + ")");
  }
  // The browser's own user agent, so that overriding the language keeps the real one.
  PR_RETURN_IF_ERROR(
      Call("Emulation.setUserAgentOverride",
           Dump({{"userAgent", browser_.user_agent()}, {"acceptLanguage", options_.locale}}))
          .status());
  PR_RETURN_IF_ERROR(Call("Emulation.setHardwareConcurrencyOverride",
                          Dump({{"hardwareConcurrency", options_.hardware_concurrency}}))
                         .status());
  if (options_.alpha) {
    PR_RETURN_IF_ERROR(Call("Emulation.setDefaultBackgroundColorOverride",
                            Dump({{"color", {{"r", 0}, {"g", 0}, {"b", 0}, {"a", 0}}}}))
                           .status());
  }
  return Status::Ok();
}

Status Page::Load() {
  // Virtual time starts paused at the epoch. A 1 us budget then leaves a fence at 1 us that
  // the budget-less policy keeps: the page loads entirely at virtual time 0, its timers do
  // not run, and files that arrive in a different order cannot move its clocks (Chromium
  // adds 10 ms of virtual time per file otherwise, more when loads do not overlap).
  // Navigating under this policy rather than under `pause` also matters: documents that
  // commit while virtual time is paused wait for a budget that would move the fence.
  PR_ASSIGN_OR_RETURN(
      cdp::Message policy,
      Call("Emulation.setVirtualTimePolicy",
           Dump({{"policy", "pause"},
                 {"initialVirtualTime", static_cast<double>(options_.epoch_ms) / 1000.0}})));
  PR_ASSIGN_OR_RETURN(double base_ms, cdp::GetNumber(policy, {"result", "virtualTimeTicksBase"}));
  ticks_base_us_ = std::llround(base_ms * 1000.0);
  PR_RETURN_IF_ERROR(AdvanceTo(kLoadUs));
  PR_RETURN_IF_ERROR(
      Call("Emulation.setVirtualTimePolicy", Dump({{"policy", "pauseIfNetworkFetchesPending"}}))
          .status());

  cdp::EventWaiter loaded = session_->Expect("Page.loadEventFired");
  PR_ASSIGN_OR_RETURN(cdp::Message nav, Call("Page.navigate", Dump({{"url", options_.url}})));
  if (Result<std::string> error = cdp::GetString(nav, {"result", "errorText"}); error.ok()) {
    return FailedPreconditionError("could not load " + name_ + ": " + *error);
  }
  PR_RETURN_IF_ERROR(WaitFor("Page.loadEventFired", loaded, [&] {
    std::string waiting;
    {
      MutexLock lock(&shared_->mu);
      if (!shared_->requests.empty()) {
        waiting = "; still waiting for " + std::to_string(shared_->requests.size()) +
                  " file(s), such as " + FileName(shared_->requests.begin()->second);
      }
    }
    return DeadlineExceededError("the page " + name_ + " did not finish loading within " +
                                 SecondsText(options_.timeout) + " (its load event never fired" +
                                 waiting + ")");
  }));
  if (Result<std::string> frame_id = cdp::GetString(nav, {"result", "frameId"}); frame_id.ok()) {
    MutexLock lock(&shared_->mu);
    shared_->main_frame_id = *frame_id;
  }

  // An HTTP error page is not the page the user meant to film.
  PR_ASSIGN_OR_RETURN(
      cdp::Message status,
      Evaluate("(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0"));
  if (Result<double> code = cdp::GetNumber(status, {"result", "result", "value"});
      code.ok() && *code >= 400) {
    return FailedPreconditionError("could not load " + name_ + ": the server answered HTTP " +
                            std::to_string(static_cast<int>(*code)));
  }
  return Status::Ok();
}

Status Page::WaitUntilReady() {
  // Fonts and window.pagereel.ready. Page time passes only when nothing is in flight: the
  // page may be waiting on its own timers then, and granting time while a file is still
  // on its way would let the order of arrival decide what happens when.
  Clock::time_point deadline = Clock::now() + options_.timeout;
  const int64_t max_wait_us = static_cast<int64_t>(options_.timeout.count()) * 1000;
  int64_t waited_us = 0;
  bool busy = false;  // Something was in flight or not ready at some check.
  int quiet_checks = 0;
  for (;;) {
    std::string in_flight;
    {
      MutexLock lock(&shared_->mu);
      busy = busy || !shared_->requests.empty();
      // In slices, so a capture that is no longer wanted stops within one; after half a
      // second, a look for workers' scripts (below).
      for (int slice = 0; slice < 5; ++slice) {
        Clock::time_point until = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
        while (!shared_->requests.empty()) {
          if (!shared_->cv.WaitUntil(&shared_->mu, until)) break;
        }
        if (shared_->requests.empty() || Clock::now() >= deadline || Stopped()) break;
      }
      if (!shared_->requests.empty()) in_flight = FileName(shared_->requests.begin()->second);
    }
    PR_RETURN_IF_ERROR(session_->Check());
    if (Stopped()) return CancelledError("the page " + name_ + " was no longer wanted");
    if (!in_flight.empty() && Clock::now() < deadline) {
      PR_RETURN_IF_ERROR(ForgetWorkerScripts());
      continue;
    }
    // Response bodies and WebAssembly compiles the page waits on, and its WebSockets, come
    // on the wall clock too: waited for here, page time held, they complete while the page
    // loads in every render. (Left to frame 0, Rive's wasm compile and .riv fetch ended
    // while the page loaded in 3 renders of 12 and at frame 0 in the rest.)
    bool held = false;
    {
      MutexLock lock(&shared_->mu);
      held = !shared_->bodies_pending.empty() || !shared_->socket_waits.empty();
    }
    if (held && in_flight.empty()) {
      busy = true;
      PR_RETURN_IF_ERROR(AwaitBodies());
      continue;
    }
    PR_ASSIGN_OR_RETURN(cdp::Message reply, Evaluate("window.__pagereel.state()", true));
    PR_ASSIGN_OR_RETURN(std::string text, cdp::GetString(reply, {"result", "result", "value"}));
    json state = json::parse(text, nullptr, /*allow_exceptions=*/false);
    std::string ready = state.value("ready", "none");
    if (ready == "rejected") {
      return FailedPreconditionError("the page " + name_ +
                                     " rejected window.pagereel.ready: " +
                                     state.value("error", std::string()));
    }
    bool fonts = state.value("fonts", false);
    // (A file still in flight here is one that did not arrive within the timeout.)
    if (fonts && ready != "pending" && in_flight.empty()) {
      // A library that goes on loading after the load event (a wasm compiled, then a file
      // fetched with what it returned) has nothing in flight between two of its steps, for
      // as long as a task or two takes: a page that was busy after its load event is ready
      // once nothing has started for a while. (One that was not is ready at once.)
      if (!busy || quiet_checks++ >= kQuietChecks) return Status::Ok();
      std::this_thread::sleep_for(kQuietCheckPause);
      continue;
    }
    quiet_checks = 0;
    busy = true;
    if (Clock::now() > deadline || waited_us >= max_wait_us) {
      std::string waiting = !in_flight.empty() ? "a file to arrive (" + in_flight + ")"
                            : !fonts           ? "its fonts (document.fonts.ready)"
                                               : "window.pagereel.ready to resolve";
      return DeadlineExceededError("the page " + name_ + " was not ready within " +
                                   SecondsText(options_.timeout) + ": still waiting for " +
                                   waiting);
    }
    if (!in_flight.empty()) continue;
    PR_RETURN_IF_ERROR(AdvanceTo(virtual_us_ + kReadyStepUs));
    waited_us += kReadyStepUs;
  }
}

Status Page::AttachSharedWorkers() {
  // A shared worker is a target of the browser, not of the page: only an auto-attach on the
  // browser's own session stops it at its start (the page's does not reach it; checked on
  // headless-shell 156). Its ports' messages are counted on the page's end by
  // shared_port_script.js, which goes in after page_script.js.
  {
    MutexLock lock(&shared_->mu);
    shared_->browser_context_id = session_->browser_context_id();
  }
  session_->SubscribeToBrowser("Target.attachedToTarget", shared_, &Shared::OnBrowserEvent);
  session_->SubscribeToBrowser("Target.detachedFromTarget", shared_, &Shared::OnBrowserEvent);
  PR_RETURN_IF_ERROR(
      Call("Page.addScriptToEvaluateOnNewDocument", Dump({{"source", kSharedPortScript}}))
          .status());
  Result<cdp::Message> attach =
      browser_.client().Call("Target.setAutoAttach", SharedWorkerAutoAttachParams());
  if (!attach.ok()) return session_->Explain("Target.setAutoAttach", attach.status());
  return Status::Ok();
}

Status Page::ForgetWorkerScripts() {
  // A shared or service worker's main script is announced on the page's session and
  // finishes on the worker's own, which pagereel does not attach: its request id is the
  // worker's target id. (Dedicated workers are attached, and their scripts watched; so are
  // shared workers where the page attaches them.)
  PR_ASSIGN_OR_RETURN(cdp::Message targets, browser_.client().Call("Target.getTargets"));
  json parsed = json::parse(targets.json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return Status::Ok();
  const json list = parsed.value("result", json::object()).value("targetInfos", json::array());
  MutexLock lock(&shared_->mu);
  for (const json& target : list) {
    const std::string type = target.value("type", "");
    const bool attached =
        type == "shared_worker" && options_.shared_workers == PageOptions::SharedWorkers::kAttach;
    if ((type == "shared_worker" && !attached) || type == "service_worker") {
      shared_->requests.erase(target.value("targetId", ""));
    }
  }
  return Status::Ok();
}

Status Page::Start() {
  // Frame 0 is drawn half a millisecond past the whole millisecond the page got ready at.
  const int64_t shift_ms = (virtual_us_ - kLoadUs) / 1000;
  origin_us_ = kLoadUs + shift_ms * 1000 + kFramePhaseUs;

  // Workers learn frame 0's time first: the advance to frame 0 runs their animation frames
  // (at film time 0, as the page's first), which run only from frame 0 on.
  std::vector<std::string> workers;
  {
    MutexLock lock(&shared_->mu);
    shared_->shift_ms = shift_ms;
    for (const auto& [session_id, worker] : shared_->workers) workers.push_back(session_id);
  }
  for (const std::string& worker : workers) {  // A worker may have gone meanwhile.
    session_->CallIn(worker, "Runtime.evaluate",
                     Dump({{"expression", "self.__pagereelWorker && self.__pagereelWorker.start(" +
                                              std::to_string(shift_ms) + ")"}}),
                     options_.timeout)
        .status()
        .IgnoreError();
  }
  PR_RETURN_IF_ERROR(AdvanceTo(origin_us_));

  // Every document there is learns frame 0's time; documents made later get it with the
  // script. (Each runs on its own clock until then, standing at 0.)
  std::string start = "window.__pagereel && window.__pagereel.start(" + std::to_string(shift_ms) + ")";
  std::set<int64_t> contexts;
  {
    MutexLock lock(&shared_->mu);
    contexts = shared_->contexts;
    shared_->frame = 0;
  }
  for (int64_t context : contexts) {
    // A context may have gone meanwhile; that is fine.
    Call("Runtime.evaluate", Dump({{"expression", start}, {"contextId", context}}))
        .status()
        .IgnoreError();
  }
  PR_RETURN_IF_ERROR(
      Call("Page.addScriptToEvaluateOnNewDocument", Dump({{"source", PageScript(shift_ms)}}))
          .status());
  return Status::Ok();
}

Status Page::ReadContract() {
  // The page judges its own duration, so Infinity, NaN and strings never reach JSON.
  PR_ASSIGN_OR_RETURN(
      cdp::Message contract,
      Evaluate("(() => { const p = window.pagereel || {};"
               " const given = p.duration !== undefined && p.duration !== null;"
               " const d = Number(p.duration);"
               " return JSON.stringify({given, ok: Number.isFinite(d) && d > 0, d: given && "
               "Number.isFinite(d) ? d : 0, seek: typeof p.seek === 'function'}); })()"));
  PR_ASSIGN_OR_RETURN(std::string contract_text,
                      cdp::GetString(contract, {"result", "result", "value"}));
  json c = json::parse(contract_text, nullptr, false);
  if (!c.is_object()) return InternalError("could not read window.pagereel from the page");
  if (c.value("given", false)) {
    if (!c.value("ok", false)) {
      return InvalidArgumentError("the page " + name_ +
                                  " set window.pagereel.duration to something that is not a "
                                  "positive number of seconds");
    }
    declared_duration_ = c.value("d", 0.0);
  }
  has_seek_ = c.value("seek", false);
  return Status::Ok();
}

Status Page::WaitFor(std::string_view event, cdp::EventWaiter& waiter,
                     const std::function<Status()>& on_timeout) {
  // Short waits, so a page that navigated away or closed (which means the event will
  // never come) is reported at once rather than after the whole timeout.
  constexpr std::chrono::milliseconds kSlice{100};
  Clock::time_point deadline = Clock::now() + options_.timeout;
  for (;;) {
    Result<cdp::Event> e = waiter.Wait(kSlice);
    if (e.ok()) return Status::Ok();
    PR_RETURN_IF_ERROR(session_->Check());
    if (Stopped()) return CancelledError("the page " + name_ + " was no longer wanted");
    if (e.status().code() != StatusCode::kDeadlineExceeded) {
      return session_->Explain("the wait for " + std::string(event), e.status());
    }
    if (Clock::now() >= deadline) return on_timeout();
  }
}

Status Page::AdvanceWorkers(int64_t virtual_us) {
  std::vector<std::string> workers;
  std::string waiting_for;  // A file a worker still waits for at the deadline.
  {
    MutexLock lock(&shared_->mu);
    if (shared_->workers.empty()) return Status::Ok();
    // Scripts a worker is still fetching run when they arrive, on the wall clock; what they
    // post would reach the page in whichever frame was running then.
    const Clock::time_point deadline = Clock::now() + options_.timeout;
    while (shared_->WorkerFetching() && !Stopped()) {
      if (Clock::now() >= deadline) {
        waiting_for = "?";
        for (const auto& [id, url] : shared_->requests) {
          if (shared_->worker_requests.count(id)) waiting_for = url;
        }
        for (const auto& [session_id, worker] : shared_->workers) {
          auto script = shared_->requests.find(worker.target_id);
          if (script != shared_->requests.end()) waiting_for = script->second;
        }
        break;
      }
      shared_->cv.WaitUntil(&shared_->mu,
                            std::min(deadline, Clock::now() + std::chrono::milliseconds(100)));
    }
    std::vector<std::pair<int64_t, std::string>> started;
    for (const auto& [session_id, worker] : shared_->workers) {
      started.emplace_back(worker.order, session_id);
    }
    std::sort(started.begin(), started.end());
    for (auto& [order, session_id] : started) workers.push_back(std::move(session_id));
  }
  if (!waiting_for.empty()) {
    return DeadlineExceededError("the page " + name_ + " did not settle " + Where() +
                                 ": a worker of it waited " + SecondsText(options_.timeout) +
                                 " for " + FileName(waiting_for));
  }
  PR_RETURN_IF_ERROR(AwaitWorkerTraffic());
  // Every worker runs its timers due by then, and its animation frames, before the page's
  // time moves (worker_script.js).
  const std::string advance =
      "self.__pagereelWorker && self.__pagereelWorker.advance(" +
      json(static_cast<double>(virtual_us) / 1000.0).dump() + ")";
  int64_t pictures = 0;  // Pictures of the page's canvases the workers have sent, in all.
  for (const std::string& worker : workers) {
    Result<cdp::Message> reply = session_->CallIn(
        worker, "Runtime.evaluate",
        Dump({{"expression", advance}, {"awaitPromise", true}, {"returnByValue", true}}),
        options_.timeout);
    if (!reply.ok() && reply.status().code() == StatusCode::kDeadlineExceeded) {
      PR_RETURN_IF_ERROR(session_->Check());
      return DeadlineExceededError("a worker of the page " + name_ + " stopped responding " +
                                   Where() + ": its script was busy for " +
                                   SecondsText(options_.timeout) +
                                   " without a pause (an endless loop?)");
    }
    // Any other failure: the worker ended meanwhile (its detachment follows).
    if (reply.ok()) {
      if (Result<double> sent = cdp::GetNumber(*reply, {"result", "result", "value"}); sent.ok()) {
        pictures += static_cast<int64_t>(*sent);
      }
    }
    // What it posted (to the page, to a worker it started or that started it) is handled
    // before the next worker's turn.
    PR_RETURN_IF_ERROR(AwaitWorkerTraffic());
  }
  if (pictures > 0) PR_RETURN_IF_ERROR(AwaitWorkerPictures(pictures));
  return Status::Ok();
}

Status Page::AwaitWorkerTraffic() {
  // A message crosses between a document and its worker on the wall clock, and is handled
  // when it arrives: page time waits until every message sent has been handled.
  return HoldTimeUntil([this]() REQUIRES(shared_->mu) { return shared_->TrafficSettled(); },
                       "messages between it and its workers did not come to rest (a worker "
                       "that never answers, or a page and a worker that answer each other "
                       "without end)");
}

Status Page::AwaitWorkerPictures(int64_t pictures) {
  // A picture crosses from the worker's thread to the page's on the wall clock (a
  // MessagePort), and the page takes it as a task.
  return HoldTimeUntil(
      [this, pictures]() REQUIRES(shared_->mu) {
        int64_t received = 0;
        for (const auto& [context, n] : shared_->canvases_received) received += n;
        return received >= pictures;
      },
      "picture(s) a worker drew on its canvases did not arrive");
}

Status Page::HoldTimeUntil(const std::function<bool()>& done, std::string_view what) {
  {
    MutexLock lock(&shared_->mu);
    if (done()) return Status::Ok();
  }
  // The page's tasks run, with page time held at the fence the last budget left.
  PR_RETURN_IF_ERROR(
      Call("Emulation.setVirtualTimePolicy", Dump({{"policy", "pauseIfNetworkFetchesPending"}}))
          .status());
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  bool settled = false;
  for (;;) {
    {
      MutexLock lock(&shared_->mu);
      while (!(settled = done()) && !Stopped() && Clock::now() < deadline) {
        shared_->cv.WaitUntil(&shared_->mu,
                              std::min(deadline, Clock::now() + std::chrono::milliseconds(100)));
      }
    }
    if (!settled) break;
    // What settled it may start more in the same task (an open socket's handler sends, a
    // body's handler reads another): those signals come after the one that settled it. A
    // round trip to the page's main thread comes back after that task, and after them.
    PR_RETURN_IF_ERROR(RoundTrip());
    MutexLock lock(&shared_->mu);
    if (done()) break;
  }
  PR_RETURN_IF_ERROR(session_->Check());
  if (Stopped()) return CancelledError("the page " + name_ + " was no longer wanted");
  if (!settled) {
    return DeadlineExceededError("the page " + name_ + " did not settle " + Where() + ": " +
                                 std::string(what) + " within " + SecondsText(options_.timeout));
  }
  return Status::Ok();
}

Status Page::AdvanceTo(int64_t virtual_us) {
  if (virtual_us <= virtual_us_) return Status::Ok();
  if (turns_told_) {
    // The last animation frame reported itself before the page's callbacks ran; what they
    // told (the timers they set) has come once the end of that turn has.
    MutexLock lock(&shared_->mu);
    const Clock::time_point deadline = Clock::now() + kReportWait;
    while (shared_->turns < ticks_run_ && !shared_->leaving && !Stopped()) {
      if (!shared_->cv.WaitUntil(&shared_->mu, deadline)) break;
    }
    // Should a callback the page asked for not run (none is known to), its turn would not
    // end: from then on a round trip, which runs after the whole turn, tells the same.
    turns_told_ = shared_->turns >= ticks_run_ || shared_->leaving;
  }
  if (!turns_told_) {
    PR_RETURN_IF_ERROR(RoundTrip());
  }
  // Chromium runs a timer set while page time stands still (in an animation frame, or in a
  // task run where a grant of page time ended) only where a later grant ends, not when it
  // is due: a 10 ms timer set in the animation frame at 67 ms ran at 101, and a 50 ms
  // setTimeout chain started there ticked at 134, 201, 267 ms. Page knows where each such
  // timer was set (OnTimerSignal) and ends a grant exactly where it is due: it runs there.
  // A page that sets hundreds of such timers a frame has those past the first
  // kMaxTimerStops run where the frame's grant ends, as Chromium alone would.
  for (int stops = 0; stops < kMaxTimerStops; ++stops) {
    int64_t stop = -1;
    {
      MutexLock lock(&shared_->mu);
      auto& dues = shared_->timer_dues;
      // One due now (set with no delay where page time stands) runs in a grant of 1 us;
      // one passed (told late) is dropped.
      while (!dues.empty() && *dues.begin() <= virtual_us_) {
        if (*dues.begin() == virtual_us_) stop = virtual_us_ + 1;
        dues.erase(dues.begin());
      }
      if (stop < 0 && !dues.empty() && *dues.begin() < virtual_us) {
        stop = *dues.begin();
        dues.erase(dues.begin());
      }
    }
    if (stop < 0 || stop >= virtual_us) break;
    PR_RETURN_IF_ERROR(AdvanceStep(stop));
    // What the timer that ran there set is told before the next grant is made.
    PR_RETURN_IF_ERROR(RoundTrip());
  }
  return AdvanceStep(virtual_us);
}

Status Page::RoundTrip() {
  return session_->Call("Runtime.evaluate", Dump({{"expression", "0"}}), options_.timeout).status();
}

Status Page::AdvanceStep(int64_t virtual_us) {
  PR_RETURN_IF_ERROR(AdvanceWorkers(virtual_us));
  {
    MutexLock lock(&shared_->mu);
    shared_->grant_from = virtual_us_;
    shared_->grant_to = virtual_us;
  }
  cdp::EventWaiter expired = session_->Expect("Emulation.virtualTimeBudgetExpired");
  PR_RETURN_IF_ERROR(Call("Emulation.setVirtualTimePolicy",
                          Dump({{"policy", "pauseIfNetworkFetchesPending"},
                                {"budget", Millis(virtual_us - virtual_us_)}}))
                         .status());
  PR_RETURN_IF_ERROR(WaitFor("Emulation.virtualTimeBudgetExpired", expired, [&] {
    std::string waiting;
    {
      MutexLock lock(&shared_->mu);
      if (!shared_->requests.empty()) waiting = " for " + FileName(shared_->requests.begin()->second);
    }
    // A page that still answers is held by a request; one that does not is stuck in script.
    Result<cdp::Message> alive =
        session_->Call("Runtime.evaluate", Dump({{"expression", "0"}}), std::chrono::seconds(1));
    if (!alive.ok() && alive.status().code() == StatusCode::kDeadlineExceeded) {
      return DeadlineExceededError("the page " + name_ + " stopped responding " + Where() +
                                   ": its script was busy for " + SecondsText(options_.timeout) +
                                   " without a pause (an endless loop?)");
    }
    return DeadlineExceededError("the page " + name_ + " did not settle " + Where() +
                                 ": page time stood still for " + SecondsText(options_.timeout) +
                                 " waiting" + (waiting.empty() ? " on the network" : waiting) +
                                 " (a request that never finishes holds it)");
  }));
  virtual_us_ = virtual_us;
  {
    MutexLock lock(&shared_->mu);
    shared_->virtual_ms = static_cast<double>(virtual_us) / 1000.0;
    shared_->grant_from = virtual_us;
  }
  PR_RETURN_IF_ERROR(AwaitBodies());
  return AwaitWorkerTraffic();
}

Status Page::AwaitBodies() {
  return HoldTimeUntil(
      [this]() REQUIRES(shared_->mu) {
        const bool sockets = shared_->SocketsSettled();  // Gives up late ones.
        return shared_->bodies_pending.empty() && sockets;
      },
      "a response body it reads did not arrive");
}

Status Page::BeginFrame(int64_t film_ms, Draw draw, EncodedFrame* screenshot, int64_t index) {
  PR_RETURN_IF_ERROR(AdvanceTo(origin_us_ + film_ms * 1000));
  json params = {
      {"frameTimeTicks", Millis(ticks_base_us_ + virtual_us_)},
      {"interval", 1000.0 * static_cast<double>(options_.fps.den) /
                       static_cast<double>(options_.fps.num)},
  };
  if (draw == Draw::kNo) params["noDisplayUpdates"] = true;
  if (screenshot != nullptr) {
    if (screenshot_format() == encode::ImageFormat::kPng) {
      params["screenshot"] = {{"format", "png"}, {"optimizeForSpeed", true}};
    } else {
      params["screenshot"] = {{"format", "jpeg"}, {"quality", options_.jpeg_quality}};
    }
  }
  const std::string text = Dump(params);

  // Every beginFrame must run the page's animation frame exactly once, at this time: a
  // frame drawn without one is a stale copy of the one before, and two would run the
  // page's own per-frame state ahead. pagereel's script counts and reports each one. On a
  // loaded machine the browser now and then draws a frame without running the animation
  // frame (the renderer's main thread had not yet asked for one); nothing of the page ran,
  // so the same beginFrame is sent again and the frame comes out as it should.
  const int64_t expected = ticks_run_ + 1;
  for (int redraws = 0;; ++redraws) {
    PR_RETURN_IF_ERROR(SendBeginFrame(text, screenshot, index));
    PR_ASSIGN_OR_RETURN(TickReport tick, AwaitTick(expected));
    if (tick.count == expected && tick.ms == film_ms) break;
    if (tick.count == ticks_run_ && !tick.leaving && redraws < kRedrawTries) {
      if (options_.on_redrawn_frame) options_.on_redrawn_frame();
      // The page's tasks run meanwhile (its clock held): what it was busy with can finish.
      std::this_thread::sleep_for(std::min(kRedrawPauseMax, std::chrono::milliseconds(1 << redraws)));
      continue;
    }
    if (tick.count <= ticks_run_) {
      // Still nothing: a page on its way to another document runs no animation frame.
      // Wait for the navigation to show, so the message names where it went.
      const Clock::time_point deadline = Clock::now() + kReportWait;
      while (Clock::now() < deadline) {
        PR_RETURN_IF_ERROR(session_->Check());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      bool leaving = false;
      {
        MutexLock lock(&shared_->mu);
        leaving = shared_->leaving;
      }
      if (leaving) return NavigatedAway(index);
    }
    std::string seen = tick.count < expected
                           ? "without running the page's animation frame (it would repeat the "
                             "frame before), " +
                                 std::to_string(redraws + 1) + " times"
                           : "with the page's animation frame run " +
                                 std::to_string(tick.count - ticks_run_) + " times, the last at " +
                                 std::to_string(tick.ms) + " ms";
    return InternalError("frame " + std::to_string(index) + " (" + std::to_string(film_ms) +
                         " ms) of " + name_ + " was made " + seen +
                         "; this is a fault in pagereel or the browser, please report it");
  }
  ticks_run_ = expected;
  last_tick_ms_ = film_ms;
  return Status::Ok();
}

Result<cdp::Message> Page::BeginFrameOnce(const std::string& params, int64_t index) {
  Result<cdp::Message> reply = session_->BeginFrame(params);
  if (reply.ok() || reply.status().code() != StatusCode::kDeadlineExceeded) return reply;
  // Was it the page? A script that does not end leaves the page unable to answer; a page
  // that answers at once was idle while the browser did not finish the frame (seen once in
  // a suite run beside two CPU hogs, a View Transition's frame 31 unanswered for 30 s).
  Result<cdp::Message> alive =
      session_->Call("Runtime.evaluate", Dump({{"expression", "0"}}), std::chrono::seconds(1));
  if (!alive.ok()) return reply;
  return UnavailableError("the browser did not finish frame " + std::to_string(index) + " of " + name_ +
                          " within " + SecondsText(options_.timeout) +
                          " while the page's script was idle (the browser hung, not the page)");
}

Status Page::SendBeginFrame(const std::string& params, EncodedFrame* screenshot,
                            int64_t index) {
  if (screenshot == nullptr) return BeginFrameOnce(params, index).status();
  for (int attempt = 0; attempt < kScreenshotTries; ++attempt) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply, BeginFrameOnce(params, index));
    if (!cdp::Has(reply, {"result", "screenshotData"})) continue;
    PR_ASSIGN_OR_RETURN(*screenshot, TakeScreenshot(std::move(reply), {"result", "screenshotData"},
                                                    index, screenshot_format()));
    return Status::Ok();
  }
  return UnavailableError("the browser sent no screenshot for frame " + std::to_string(index) +
                          " after " + std::to_string(kScreenshotTries) + " tries");
}

Result<Page::TickReport> Page::AwaitTick(int64_t expected) {
  {
    MutexLock lock(&shared_->mu);
    const Clock::time_point deadline = Clock::now() + kReportWait;
    while (shared_->reports < expected && !shared_->leaving) {
      if (!shared_->cv.WaitUntil(&shared_->mu, deadline)) break;
    }
    if (shared_->reports >= expected || shared_->leaving) {
      return TickReport{shared_->reports, shared_->last_report_ms, shared_->leaving};
    }
  }
  // No report yet. The page itself knows whether its animation frame ran (the report may
  // only be late): the evaluation runs after any animation frame in progress. A document
  // that is going away may not answer, or a new one may (counting from 0): both read as
  // "did not run".
  Result<cdp::Message> reply = Evaluate("window.__pagereel.ticks()");
  Result<std::string> counted =
      reply.ok() ? cdp::GetString(*reply, {"result", "result", "value"}) : reply.status();
  if (!counted.ok()) {
    PR_RETURN_IF_ERROR(session_->Check());
    return TickReport{-1, -1, true};
  }
  TickReport tick;
  char* end = nullptr;
  tick.count = std::strtoll(counted->c_str(), &end, 10);
  tick.ms = *end == ':' ? std::atoll(end + 1) : -1;
  return tick;
}

Status Page::NavigatedAway(int64_t index) const {
  int64_t at = index;
  {
    MutexLock lock(&shared_->mu);
    if (shared_->leaving_at >= 0) at = shared_->leaving_at;
  }
  return FailedPreconditionError("the page " + name_ + " navigated away at frame " +
                                 std::to_string(at) +
                                 "; pages must stay on one document while they render");
}

Status Page::StepFrame(int64_t index, Draw draw, EncodedFrame* screenshot) {
  if (film_ended_) {
    return InternalError("the page " + name_ + " was asked for frame " + std::to_string(index) +
                         " after its film ended (its sound was rendered past its last frame); "
                         "this is a fault in pagereel, please report it");
  }
  PR_RETURN_IF_ERROR(session_->Check());
  {
    MutexLock lock(&shared_->mu);
    shared_->frame = index;
  }
  const int64_t frame_ms = FrameTimeMillis(index, options_.fps);
  if (index > 0 && frame_ms - last_tick_ms_ > kMaxTickGapMs) {
    const int64_t gap = frame_ms - last_tick_ms_;
    const int64_t parts = (gap + kMaxTickGapMs - 1) / kMaxTickGapMs;
    const int64_t from = last_tick_ms_;
    for (int64_t k = 1; k < parts; ++k) {
      PR_RETURN_IF_ERROR(BeginFrame(from + gap * k / parts, Draw::kNo, nullptr, index));
    }
  }
  PR_RETURN_IF_ERROR(AdvanceTo(origin_us_ + frame_ms * 1000));
  if (has_seek_) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.6f", static_cast<double>(frame_ms) / 1000.0);
    PR_RETURN_IF_ERROR(
        Evaluate(std::string("window.pagereel.seek(") + seconds + ")", /*await_promise=*/true)
            .status());
  }
  PR_RETURN_IF_ERROR(SyncVideos());
  return BeginFrame(frame_ms, draw, screenshot, index);
}

Status Page::SyncVideos() { return SyncDocuments("window.__pagereel.syncVideos()"); }

Status Page::SyncDocuments(const std::string& expression) {
  std::set<int64_t> contexts;
  {
    MutexLock lock(&shared_->mu);
    contexts = shared_->video_contexts;
  }
  if (contexts.empty()) return Status::Ok();
  std::vector<int64_t> behind;  // Documents with a video whose picture has not come yet.
  // Seeking is answered by media events, which wait while virtual time is paused: let the
  // page's tasks run, with virtual time held at the frame by the fence the budget left.
  PR_RETURN_IF_ERROR(
      Call("Emulation.setVirtualTimePolicy", Dump({{"policy", "pauseIfNetworkFetchesPending"}}))
          .status());
  for (int64_t context : contexts) {
    Result<cdp::Message> reply = Call("Runtime.evaluate", Dump({{"expression", expression},
                                                                {"awaitPromise", true},
                                                                {"returnByValue", true},
                                                                {"contextId", context}}));
    if (!reply.ok() && reply.status().code() == StatusCode::kDeadlineExceeded) {
      // The page names a render of an AudioContext still under way and what it waits for.
      Result<cdp::Message> asked =
          session_->Call("Runtime.evaluate",
                         Dump({{"expression", "window.__pagereel.audioWaits()"},
                               {"returnByValue", true},
                               {"contextId", context}}),
                         std::chrono::seconds(1));
      Result<std::string> waits =
          asked.ok() ? cdp::GetString(*asked, {"result", "result", "value"}) : asked.status();
      if (waits.ok() && !waits->empty()) {
        return DeadlineExceededError("the page " + name_ +
                                     " did not bring its Web Audio to the frame's time " + Where() +
                                     ": " + *waits + " after " + SecondsText(options_.timeout) +
                                     "; this is a fault in pagereel, please report it");
      }
      return DeadlineExceededError("the page " + name_ + " did not bring its videos and Web Audio " +
                                   "to the frame's time " + Where() + ": seeking a video or "
                                   "rendering an AudioContext took longer than " +
                                   SecondsText(options_.timeout));
    }
    if (!reply.ok() || cdp::Has(*reply, {"result", "exceptionDetails"})) {
      // The document went away (or replaced pagereel's script); forget it.
      MutexLock lock(&shared_->mu);
      shared_->video_contexts.erase(context);
      continue;
    }
    // "N:fault": how many videos do not show their picture yet, and why an AudioContext
    // could not be rendered to the frame's time ('' when all were).
    Result<std::string> answer = cdp::GetString(*reply, {"result", "result", "value"});
    if (!answer.ok()) continue;
    const size_t colon = answer->find(':');
    const std::string fault = colon == std::string::npos ? *answer : answer->substr(colon + 1);
    if (!fault.empty()) {
      return InternalError("the page " + name_ + "'s Web Audio could not follow the film " +
                           Where() + ": " + fault +
                           "; this is a fault in pagereel, please report it");
    }
    if (colon != std::string::npos && colon > 0 && answer->compare(0, colon, "0") != 0) {
      behind.push_back(context);
    }
  }
  return AwaitVideoPictures(std::move(behind));
}

// A seek has landed (seeked) but what drawImage(video) reads can still be the picture before
// it: the decoded frame reaches it on another thread, which a loaded machine runs late. The
// page counts its videos whose picture does not hold their time (page_script.js,
// videosBehind); this asks again, a couple of milliseconds apart, until none is. The picture
// normally follows within milliseconds. A video whose pictures never match the time it was
// sought to (timestamps pagereel misreads) would slow every frame by the wait: after
// kVideoPictureWait once, the render stops waiting and names the videos in its summary.
Status Page::AwaitVideoPictures(std::vector<int64_t> contexts) {
  if (contexts.empty() || gave_up_on_video_pictures_) return Status::Ok();
  const Clock::time_point deadline = Clock::now() + kVideoPictureWait;
  while (!contexts.empty()) {
    if (Clock::now() >= deadline) {
      // The page names the videos in the render's summary (TakeMessages).
      gave_up_on_video_pictures_ = true;
      for (int64_t context : contexts) {
        PR_RETURN_IF_ERROR(Call("Runtime.evaluate",
                                Dump({{"expression", "window.__pagereel.videosLate()"},
                                      {"contextId", context}}))
                               .status());
      }
      return Status::Ok();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::vector<int64_t> still;
    for (int64_t context : contexts) {
      Result<cdp::Message> reply =
          Call("Runtime.evaluate", Dump({{"expression", "window.__pagereel.videosBehind()"},
                                         {"returnByValue", true},
                                         {"contextId", context}}));
      if (!reply.ok() && reply.status().code() == StatusCode::kDeadlineExceeded) {
        return reply.status();
      }
      if (!reply.ok()) continue;  // The document went away.
      Result<double> behind = cdp::GetNumber(*reply, {"result", "result", "value"});
      if (behind.ok() && *behind > 0) still.push_back(context);
    }
    contexts = std::move(still);
  }
  return Status::Ok();
}

Status Page::PreRoll(int64_t index) {
  while (next_frame_ < index) {
    if (Stopped()) {
      return CancelledError("pre-roll stopped: the render is ending");
    }
    // Every frame is drawn, only its screenshot is left out: what Chromium's compositor
    // does on the frames it draws is then what it does in a page that drew every frame.
    // Frames run with noDisplayUpdates (animate only) left out enough to change films
    // (headless-shell 156, bench/RESULTS.md "frame truth"): animated GIF and WebP images
    // advance on drawn frames and came out one image frame early; a View Transition
    // captures its old state in a drawn frame and restarted at the lane's first frame; a
    // page whose first frame is not drawn never starts its requestAnimationFrame loop; a
    // scaled layer's raster scale comes from the frame drawn last.
    PR_RETURN_IF_ERROR(StepFrame(next_frame_, Draw::kYes, nullptr));
    ++next_frame_;
  }
  return Status::Ok();
}

Status Page::JumpTo(int64_t index) {
  if (next_frame_ >= index) return Status::Ok();
  if (Stopped()) return CancelledError("pre-roll stopped: the render is ending");
  jumped_ = true;
  // Frame 0 is drawn, as in PreRoll, so the page's requestAnimationFrame loop starts.
  if (next_frame_ == 0) {
    PR_RETURN_IF_ERROR(StepFrame(0, Draw::kYes, nullptr));
    next_frame_ = 1;
  }
  // StepFrame runs the gap before the frame as animation frames at most kMaxTickGapMs
  // apart, without display updates; the frame before `index` is drawn, as in PreRoll.
  if (next_frame_ < index) {
    PR_RETURN_IF_ERROR(StepFrame(index - 1, Draw::kYes, nullptr));
    next_frame_ = index;
  }
  return Status::Ok();
}

std::vector<std::string> Page::requested_urls() const {
  MutexLock lock(&shared_->mu);
  return {shared_->requested.begin(), shared_->requested.end()};
}

Result<EncodedFrame> Page::Capture(int64_t index) {
  PR_RETURN_IF_ERROR(PreRoll(index));
  EncodedFrame frame;
  PR_RETURN_IF_ERROR(StepFrame(index, Draw::kYes, &frame));
  next_frame_ = index + 1;
  return frame;
}

std::vector<PageMessage> Page::TakeMessages() {
  std::vector<std::pair<int64_t, std::shared_ptr<const cdp::Message>>> raw;
  {
    MutexLock lock(&shared_->mu);
    raw.swap(shared_->messages);
  }
  std::vector<PageMessage> out;
  for (const auto& [frame, message] : raw) {
    json m = json::parse(message->json.c_str(), nullptr, /*allow_exceptions=*/false);
    if (!m.is_object()) continue;
    const json& params = m.value("params", json::object());
    std::string method = m.value("method", "");
    PageMessage pm;
    pm.frame = frame;
    auto where = [](const std::string& url, int64_t line) {
      if (url.empty()) return std::string();
      return line >= 0 ? url + ":" + std::to_string(line + 1) : url;
    };
    if (method == "Runtime.exceptionThrown") {
      const json& d = params.value("exceptionDetails", json::object());
      pm.kind = PageMessage::Kind::kException;
      const json& e = d.value("exception", json::object());
      pm.text = e.is_object() && e.contains("description") && e["description"].is_string()
                    ? e["description"].get<std::string>()
                    : d.value("text", std::string("an exception"));
      pm.source = where(d.value("url", std::string()), d.value("lineNumber", int64_t{-1}));
    } else if (method == "Runtime.bindingCalled" &&
               params.value("payload", std::string()).starts_with("dialog:")) {
      json d = json::parse(params.value("payload", std::string()).substr(7), nullptr, false);
      if (!d.is_object()) continue;
      pm.kind = PageMessage::Kind::kDialog;
      pm.text = DialogText(d.value("type", std::string("alert")), d.value("message", std::string()));
      // The frame whose time the page was at: the first whose time is not before it (what
      // runs between two frames shows in the second). The frame the engine was at when the
      // signal came may be a later one: the renderer's events and the browser's answer to
      // beginFrame come on separate ways.
      if (d.contains("t") && d["t"].is_number_integer()) {
        pm.frame = FrameAtOrAfter(d["t"].get<int64_t>(), options_.fps);
      }
    } else if (method == "Runtime.bindingCalled" &&
               params.value("payload", std::string()).starts_with("socket-unanswered:")) {
      json d = json::parse(params.value("payload", std::string()).substr(18), nullptr, false);
      if (!d.is_object()) continue;
      pm.kind = PageMessage::Kind::kWebSocket;
      pm.text = "the WebSocket to " + d.value("url", std::string("?")) +
                (d.value("answer", true) ? " did not answer a message within "
                                         : " did not connect within ") +
                d.value("waited", std::string("?")) +
                ": page time went on, and what it sends from now on arrives on the wall "
                "clock, in whichever frame is being made";
    } else if (method == "Page.javascriptDialogOpening") {
      pm.kind = PageMessage::Kind::kDialog;
      pm.text = DialogText(params.value("type", std::string("alert")),
                           params.value("message", std::string()));
      pm.source = params.value("url", std::string());
    } else if (method == "Runtime.bindingCalled" &&
               params.value("payload", std::string()).starts_with("video-late:")) {
      pm.kind = PageMessage::Kind::kVideo;
      pm.text = "the video " + params.value("payload", std::string()).substr(11) +
                " did not show the picture for the time it was sought to within " +
                SecondsText(kVideoPictureWait) +
                " (its frames' timestamps do not match its times?): from here on, "
                "drawImage(video) copies may show the picture before the frame's";
    } else if (method == "Runtime.bindingCalled") {
      pm.kind = PageMessage::Kind::kVideo;
      pm.text = "the video " + params.value("payload", std::string()).substr(11) +
                " cannot seek, so it does not follow the film's time: its server does not answer "
                "HTTP Range requests (serve it from a file or a server that does)";
    } else if (method == "Runtime.consoleAPICalled") {
      pm.kind = PageMessage::Kind::kConsoleError;
      for (const json& arg : params.value("args", json::array())) {
        std::string piece = arg.contains("value") ? (arg["value"].is_string()
                                                         ? arg["value"].get<std::string>()
                                                         : arg["value"].dump())
                                                  : arg.value("description", std::string());
        if (!pm.text.empty()) pm.text += ' ';
        pm.text += piece;
      }
      const json& frames = params.value("stackTrace", json::object()).value("callFrames", json::array());
      if (!frames.empty()) {
        pm.source = where(frames[0].value("url", std::string()), frames[0].value("lineNumber", int64_t{-1}));
      }
    } else {
      const json& entry = params.value("entry", json::object());
      pm.kind = entry.value("source", "") == "network" ? PageMessage::Kind::kLoadError
                                                      : PageMessage::Kind::kConsoleError;
      pm.text = entry.value("text", std::string());
      pm.source = where(entry.value("url", std::string()), entry.value("lineNumber", int64_t{-1}));
    }
    // First line only: a stack trace belongs in the browser's console, not a summary.
    if (size_t nl = pm.text.find('\n'); nl != std::string::npos) pm.text.resize(nl);
    out.push_back(std::move(pm));
  }
  return out;
}

Result<audio::Timeline> Page::Sound(const audio::MediaStore& media, SoundEnd end) {
  if (end == SoundEnd::kFilmEnds && !film_ended_) {
    // The last frame's sound: what the page's AudioContexts play from its time to the
    // film's end, which a frame that is not drawn would otherwise have rendered.
    film_ended_ = true;
    PR_RETURN_IF_ERROR(SyncDocuments("window.__pagereel.endAudio(" +
                                     std::to_string(FrameTimeMillis(next_frame_, options_.fps)) +
                                     ")"));
  }
  // A round trip behind every message the page sent in the frames it ran (the page's own
  // animation frame callbacks run after pagereel's report of the frame).
  PR_RETURN_IF_ERROR(Call("Runtime.evaluate", Dump({{"expression", "0"}})).status());
  std::vector<std::string> messages;
  std::string frame_id;
  std::set<int64_t> contexts;
  {
    MutexLock lock(&shared_->mu);
    messages = shared_->sound_messages;
    frame_id = shared_->main_frame_id;
    contexts = shared_->video_contexts;
  }
  // What each document's AudioContexts rendered since the last call (page_script.js, "Web
  // Audio"; documents with one signalled 'video'), 10 s of sound (5 MB of text) at a time.
  for (int64_t context : contexts) {
    for (;;) {
      Result<cdp::Message> reply =
          Call("Runtime.evaluate", Dump({{"expression", "window.__pagereel.takeWebAudio(480000)"},
                                         {"returnByValue", true},
                                         {"contextId", context}}));
      if (!reply.ok() || cdp::Has(*reply, {"result", "exceptionDetails"})) break;  // Gone.
      Result<std::string> taken = cdp::GetString(*reply, {"result", "result", "value"});
      if (!taken.ok() || *taken == "[]") break;
      PR_RETURN_IF_ERROR(web_audio_.Add(*taken));
    }
  }
  for (const std::string& url : SoundUrls(messages)) {
    if (media_.sha256.count(url) || media_.failed.count(url)) continue;
    // What the page script names in place of a URL: sound that has no media to fetch.
    if (url.starts_with("srcobject:")) {
      media_.failed[url] = "its srcObject is a " + url.substr(10) +
                           " (a camera, WebRTC, a canvas or Web Audio capture): live sound, no "
                           "media to make the film's from";
      continue;
    }
    if (url == "speech:") {
      media_.failed[url] = "speech synthesis is made by the system's voices, not media pagereel "
                           "can fetch; record the speech to a file and play that";
      continue;
    }
    const int64_t cap = options_.max_media_bytes;
    Result<std::string> bytes =
        cap > 0 && media_bytes_ >= cap
            ? Result<std::string>(ResourceExhaustedError("nothing is left"))
            : FetchMedia(*session_, frame_id, url,
                         cap > 0 ? std::min(cap - media_bytes_, kMaxMediaBytes) : kMaxMediaBytes);
    if (cap > 0 && bytes.status().code() == StatusCode::kResourceExhausted) {
      media_.failed[url] = "could not fetch " + url + ": the page's media would pass " +
                           MiBText(cap) + ", the most this capture fetches for its sound (" +
                           MiBText(media_bytes_) + " before it)";
      continue;
    }
    Result<std::string> stored = bytes.ok() ? media.Put(*bytes) : Result<std::string>(bytes.status());
    if (stored.ok()) {
      media_.sha256[url] = *stored;
      media_bytes_ += static_cast<int64_t>(bytes->size());
    } else if (url.starts_with("blob:")) {
      media_.failed[url] = "a blob: URL (an MSE player's MediaSource, or a Blob the page made) "
                           "cannot be fetched from outside the page (" +
                           std::string(stored.status().message()) + "); play the media's own URL";
    } else {
      media_.failed[url] = std::string(stored.status().message());
    }
  }
  const Rational until = Rational::Make(next_frame_ * options_.fps.den, options_.fps.num);
  PR_ASSIGN_OR_RETURN(audio::Timeline timeline, SoundTimeline(messages, options_.fps, until, media_));
  PR_ASSIGN_OR_RETURN(std::vector<audio::Sound> made, web_audio_.Sounds(media, until));
  for (audio::Sound& s : made) timeline.sounds.push_back(std::move(s));
  return timeline;
}

}  // namespace pagereel::capture
