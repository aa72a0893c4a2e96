#include "capture/page.h"

#include <nlohmann/json.hpp>

#include <mutex>
#include <thread>

#include "capture/page_script.h"
#include "cdp/json_util.h"

namespace pagereel::capture {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Virtual time granted per step while waiting for fonts and window.pagereel.ready.
constexpr int64_t kReadyStepMs = 10;
// Tries for one frame's screenshot. The first beginFrame after a load comes back without
// screenshotData about half the time ("Readback from surface failed"); repeating the same
// frameTimeTicks fixed every case within 2-4 tries in DESIGN.md's probes.
constexpr int kScreenshotTries = 10;

std::string Dump(const json& j) { return j.dump(); }

}  // namespace

struct Page::Shared {
  std::mutex mu;
  std::string main_frame_id;   // Guarded by mu.
  std::string navigated_to;    // Guarded by mu. Set when the main frame leaves our URL.
  bool detached = false;       // Guarded by mu. The target closed or crashed.
  bool renderer_crashed = false;  // Guarded by mu.
  std::string detach_reason;   // Guarded by mu.
};

Page::Page(browser::Browser& browser, const PageOptions& options)
    : browser_(browser), options_(options), shared_(std::make_shared<Shared>()) {}

Page::~Page() {
  cdp::Client& client = browser_.client();
  client.Unsubscribe(subscription_);
  client.Unsubscribe(detach_subscription_);
  client.Unsubscribe(signal_subscription_);
  if (client.connection_status().ok()) {
    // Best effort: the browser may already be gone, and nothing waits on these.
    constexpr std::chrono::milliseconds kCloseTimeout{5'000};
    if (!target_id_.empty()) {
      client.Call("Target.closeTarget", Dump({{"targetId", target_id_}}), {}, kCloseTimeout)
          .status()
          .IgnoreError();
    }
    if (!context_id_.empty()) {
      client
          .Call("Target.disposeBrowserContext", Dump({{"browserContextId", context_id_}}), {},
                kCloseTimeout)
          .status()
          .IgnoreError();
    }
  }
}

Result<cdp::Message> Page::Call(std::string_view method, std::string_view params) {
  Result<cdp::Message> reply =
      browser_.client().Call(method, params, session_id_, options_.timeout);
  if (!reply.ok()) {
    PR_RETURN_IF_ERROR(CheckStillOurs());
    if (reply.status().code() == StatusCode::kUnavailable) {
      return UnavailableError("the browser went away during " + std::string(method) + ": " +
                              browser_.ExitDescription());
    }
  }
  return reply;
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

Status Page::CheckStillOurs() const {
  std::lock_guard lock(shared_->mu);
  if (shared_->detached && shared_->renderer_crashed) {
    // Worth a retry on a fresh browser, like a browser crash (often memory).
    return UnavailableError("the page " + options_.url + " crashed its renderer");
  }
  if (shared_->detached) {
    return FailedPreconditionError("the page " + options_.url + " stopped: " +
                                   shared_->detach_reason +
                                   "; a page must stay open while it renders");
  }
  if (!shared_->navigated_to.empty()) {
    return FailedPreconditionError("the page " + options_.url + " navigated away to " +
                                   shared_->navigated_to +
                                   "; pages must stay on one document while they render");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Page>> Page::Open(browser::Browser& browser, const PageOptions& options) {
  std::unique_ptr<Page> page(new Page(browser, options));
  PR_RETURN_IF_ERROR(page->Load());
  return page;
}

Status Page::Load() {
  cdp::Client& client = browser_.client();
  // A fresh browser context: nothing (cookies, storage, cache) is shared with other pages.
  PR_ASSIGN_OR_RETURN(cdp::Message context, client.Call("Target.createBrowserContext"));
  PR_ASSIGN_OR_RETURN(context_id_, cdp::GetString(context, {"result", "browserContextId"}));
  PR_ASSIGN_OR_RETURN(
      cdp::Message target,
      client.Call("Target.createTarget", Dump({{"url", "about:blank"},
                                               {"width", options_.width},
                                               {"height", options_.height},
                                               {"browserContextId", context_id_},
                                               {"enableBeginFrameControl", true}})));
  PR_ASSIGN_OR_RETURN(target_id_, cdp::GetString(target, {"result", "targetId"}));
  PR_ASSIGN_OR_RETURN(cdp::Message attached,
                      client.Call("Target.attachToTarget",
                                  Dump({{"targetId", target_id_}, {"flatten", true}})));
  PR_ASSIGN_OR_RETURN(session_id_, cdp::GetString(attached, {"result", "sessionId"}));

  // Navigation away and closing are noticed on the reader thread, reported at the next step.
  std::weak_ptr<Shared> weak = shared_;
  subscription_ = client.Subscribe("Page.frameNavigated", session_id_, [weak](const cdp::Event& e) {
    auto shared = weak.lock();
    if (!shared) return;
    Result<std::string> frame_id = cdp::GetString(*e.message, {"params", "frame", "id"});
    Result<std::string> url = cdp::GetString(*e.message, {"params", "frame", "url"});
    if (!frame_id.ok() || cdp::Has(*e.message, {"params", "frame", "parentId"})) return;
    std::lock_guard lock(shared->mu);
    if (shared->main_frame_id.empty()) return;  // Still loading our own URL.
    if (*frame_id == shared->main_frame_id) shared->navigated_to = url.ok() ? *url : "?";
  });
  std::string target_id = target_id_;
  detach_subscription_ =
      client.Subscribe("Target.detachedFromTarget", "", [weak, target_id](const cdp::Event& e) {
        auto shared = weak.lock();
        if (!shared) return;
        Result<std::string> id = cdp::GetString(*e.message, {"params", "targetId"});
        if (!id.ok() || *id != target_id) return;
        std::lock_guard lock(shared->mu);
        shared->detached = true;
        shared->detach_reason = "its target was detached";
      });

  // window.close() and a crashed renderer end the film too: the page script reports a
  // close through a binding, and the browser reports a crash.
  signal_subscription_ =
      client.Subscribe("", session_id_, [weak](const cdp::Event& e) {
        if (e.method != "Runtime.bindingCalled" && e.method != "Inspector.targetCrashed") return;
        auto shared = weak.lock();
        if (!shared) return;
        std::lock_guard lock(shared->mu);
        shared->detached = true;
        shared->renderer_crashed = e.method == "Inspector.targetCrashed";
        shared->detach_reason = e.method == "Inspector.targetCrashed"
                                    ? "its renderer crashed"
                                    : "it called window.close()";
      });
  PR_RETURN_IF_ERROR(Call("Runtime.enable").status());  // Delivers Runtime.bindingCalled.
  PR_RETURN_IF_ERROR(Call("Runtime.addBinding", Dump({{"name", "__pagereelSignal"}})).status());
  PR_RETURN_IF_ERROR(Call("Inspector.enable").status());
  PR_RETURN_IF_ERROR(Call("Page.enable").status());
  PR_RETURN_IF_ERROR(
      Call("Page.addScriptToEvaluateOnNewDocument", Dump({{"source", kPageScript}})).status());
  PR_RETURN_IF_ERROR(Call("Emulation.setFocusEmulationEnabled", Dump({{"enabled", true}})).status());
  PR_RETURN_IF_ERROR(Call("Emulation.setDeviceMetricsOverride",
                          Dump({{"width", options_.width},
                                {"height", options_.height},
                                {"deviceScaleFactor", 1},
                                {"mobile", false}}))
                         .status());
  if (options_.alpha) {
    PR_RETURN_IF_ERROR(Call("Emulation.setDefaultBackgroundColorOverride",
                            Dump({{"color", {{"r", 0}, {"g", 0}, {"b", 0}, {"a", 0}}}}))
                           .status());
  }
  PR_ASSIGN_OR_RETURN(
      cdp::Message policy,
      Call("Emulation.setVirtualTimePolicy",
           Dump({{"policy", "pause"},
                 {"initialVirtualTime", static_cast<double>(options_.epoch_ms) / 1000.0}})));
  PR_ASSIGN_OR_RETURN(ticks_base_ms_, cdp::GetNumber(policy, {"result", "virtualTimeTicksBase"}));

  // Navigate, and let the page load in one millisecond of virtual time (network fetches
  // do not consume virtual time: the policy pauses it while they are pending).
  cdp::EventWaiter loaded = client.Expect("Page.loadEventFired", session_id_);
  PR_ASSIGN_OR_RETURN(cdp::Message nav, Call("Page.navigate", Dump({{"url", options_.url}})));
  if (Result<std::string> error = cdp::GetString(nav, {"result", "errorText"}); error.ok()) {
    return UnavailableError("could not load " + options_.url + ": " + *error);
  }
  PR_RETURN_IF_ERROR(AdvanceVirtualTimeTo(1));
  PR_RETURN_IF_ERROR(WaitFor(loaded, [&] {
    return DeadlineExceededError("the page " + options_.url + " did not finish loading within " +
                                 std::to_string(options_.timeout.count() / 1000) +
                                 " s (its load event never fired); raise --timeout if it is slow");
  }));
  if (Result<std::string> frame_id = cdp::GetString(nav, {"result", "frameId"}); frame_id.ok()) {
    std::lock_guard lock(shared_->mu);
    shared_->main_frame_id = *frame_id;
  }

  // An HTTP error page is not the page the user meant to film.
  PR_ASSIGN_OR_RETURN(
      cdp::Message status,
      Evaluate("(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0"));
  if (Result<double> code = cdp::GetNumber(status, {"result", "result", "value"});
      code.ok() && *code >= 400) {
    return UnavailableError("could not load " + options_.url + ": the server answered HTTP " +
                            std::to_string(static_cast<int>(*code)));
  }

  // Wait for fonts and window.pagereel.ready, granting virtual time in small steps so
  // timers the page waits on can fire.
  Clock::time_point deadline = Clock::now() + options_.timeout;
  for (;;) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply, Evaluate("window.__pagereel.state()"));
    PR_ASSIGN_OR_RETURN(std::string text, cdp::GetString(reply, {"result", "result", "value"}));
    json state = json::parse(text, nullptr, /*allow_exceptions=*/false);
    std::string ready = state.value("ready", "none");
    if (ready == "rejected") {
      return FailedPreconditionError("the page " + options_.url +
                                     " rejected window.pagereel.ready: " +
                                     state.value("error", std::string()));
    }
    bool fonts = state.value("fonts", false);
    if (fonts && ready != "pending") break;
    if (Clock::now() > deadline) {
      std::string waiting = !fonts ? "its fonts (document.fonts.ready)"
                                   : "window.pagereel.ready to resolve";
      return DeadlineExceededError("the page " + options_.url + " was not ready within " +
                                   std::to_string(options_.timeout.count() / 1000) +
                                   " s: still waiting for " + waiting +
                                   "; fix the page or raise --timeout");
    }
    PR_RETURN_IF_ERROR(AdvanceVirtualTimeTo(virtual_ms_ + kReadyStepMs));
  }

  origin_ms_ = virtual_ms_;
  PR_RETURN_IF_ERROR(
      Evaluate("window.__pagereel.setOrigin(" + std::to_string(origin_ms_) + ")").status());
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
      return InvalidArgumentError("the page " + options_.url +
                                  " set window.pagereel.duration to something that is not a "
                                  "positive number of seconds");
    }
    declared_duration_ = c.value("d", 0.0);
  }
  has_seek_ = c.value("seek", false);
  return Status::Ok();
}

Status Page::WaitFor(cdp::EventWaiter& waiter, const std::function<Status()>& on_timeout) {
  // Short waits, so a page that navigated away or closed (which means the event will
  // never come) is reported at once rather than after the whole timeout.
  constexpr std::chrono::milliseconds kSlice{100};
  Clock::time_point deadline = Clock::now() + options_.timeout;
  for (;;) {
    Result<cdp::Event> e = waiter.Wait(kSlice);
    if (e.ok()) return Status::Ok();
    PR_RETURN_IF_ERROR(CheckStillOurs());
    if (e.status().code() != StatusCode::kDeadlineExceeded) {
      if (e.status().code() == StatusCode::kUnavailable) {
        return UnavailableError("the browser went away: " + browser_.ExitDescription());
      }
      return e.status();
    }
    if (Clock::now() >= deadline) return on_timeout();
  }
}

Status Page::AdvanceVirtualTimeTo(int64_t virtual_ms) {
  if (virtual_ms <= virtual_ms_) return Status::Ok();
  cdp::EventWaiter expired =
      browser_.client().Expect("Emulation.virtualTimeBudgetExpired", session_id_);
  PR_RETURN_IF_ERROR(Call("Emulation.setVirtualTimePolicy",
                          Dump({{"policy", "pauseIfNetworkFetchesPending"},
                                {"budget", static_cast<double>(virtual_ms - virtual_ms_)}}))
                         .status());
  PR_RETURN_IF_ERROR(WaitFor(expired, [&] {
    return DeadlineExceededError(
        "the page " + options_.url + " did not settle: virtual time stood still for " +
        std::to_string(options_.timeout.count() / 1000) +
        " s (a network request that never finishes holds it); fix the page or raise --timeout");
  }));
  virtual_ms_ = virtual_ms;
  return Status::Ok();
}

Status Page::StepFrame(int64_t index, EncodedFrame* screenshot) {
  PR_RETURN_IF_ERROR(CheckStillOurs());
  int64_t frame_ms = FrameTimeMillis(index, options_.fps);
  PR_RETURN_IF_ERROR(AdvanceVirtualTimeTo(origin_ms_ + frame_ms));
  if (has_seek_) {
    PR_RETURN_IF_ERROR(Evaluate("window.pagereel.seek(" + std::to_string(frame_ms / 1000.0) + ")",
                                /*await_promise=*/true)
                           .status());
  }
  json params = {
      {"frameTimeTicks", ticks_base_ms_ + static_cast<double>(virtual_ms_)},
      {"interval", 1000.0 * static_cast<double>(options_.fps.den) /
                       static_cast<double>(options_.fps.num)},
  };
  if (screenshot == nullptr) {
    // Frame 0 is always drawn: a page whose first frame is run without display updates
    // never starts its requestAnimationFrame loop (seen on headless-shell 156; the film
    // then differed between lane counts).
    if (index > 0) params["noDisplayUpdates"] = true;
    return Call("HeadlessExperimental.beginFrame", Dump(params)).status();
  }
  if (options_.alpha) {
    params["screenshot"] = {{"format", "png"}, {"optimizeForSpeed", true}};
  } else {
    params["screenshot"] = {{"format", "jpeg"}, {"quality", options_.jpeg_quality}};
  }
  std::string text = Dump(params);
  for (int attempt = 0; attempt < kScreenshotTries; ++attempt) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply, Call("HeadlessExperimental.beginFrame", text));
    if (!cdp::Has(reply, {"result", "screenshotData"})) continue;
    PR_ASSIGN_OR_RETURN(*screenshot, TakeScreenshot(std::move(reply), {"result", "screenshotData"},
                                                    index,
                                                    options_.alpha ? ImageFormat::kPng
                                                                   : ImageFormat::kJpeg));
    return Status::Ok();
  }
  return UnavailableError("the browser sent no screenshot for frame " + std::to_string(index) +
                          " after " + std::to_string(kScreenshotTries) + " tries");
}

Status Page::PreRoll(int64_t index) {
  while (next_frame_ < index) {
    if (options_.should_stop && options_.should_stop()) {
      return CancelledError("pre-roll stopped: the render is ending");
    }
    PR_RETURN_IF_ERROR(StepFrame(next_frame_, nullptr));
    ++next_frame_;
  }
  return Status::Ok();
}

Status Page::JumpTo(int64_t index) {
  if (next_frame_ == 0 && index > 0) {
    // Frame 0 starts the page's animations and its rAF loop (see StepFrame).
    PR_RETURN_IF_ERROR(StepFrame(0, nullptr));
    next_frame_ = 1;
  }
  if (index <= next_frame_) return Status::Ok();
  PR_RETURN_IF_ERROR(CheckStillOurs());
  PR_RETURN_IF_ERROR(AdvanceVirtualTimeTo(origin_ms_ + FrameTimeMillis(index, options_.fps)));
  next_frame_ = index;
  return Status::Ok();
}

Result<EncodedFrame> Page::Capture(int64_t index) {
  PR_RETURN_IF_ERROR(PreRoll(index));
  EncodedFrame frame;
  PR_RETURN_IF_ERROR(StepFrame(index, &frame));
  next_frame_ = index + 1;
  return frame;
}

}  // namespace pagereel::capture
