#include "capture/live_page.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <string_view>

#include "base/mutex.h"
#include "capture/page_session.h"
#include "cdp/json_util.h"

namespace pagereel::capture {

using nlohmann::json;

// What the DevTools reader thread writes.
struct LivePage::Shared {
  std::atomic<bool> loaded{false};
  Mutex mu;
  LivePage::Errors errors GUARDED_BY(mu);

  void OnLoad(const cdp::Event&) { loaded = true; }
  void OnException(const cdp::Event& event) {
    json parsed = json::parse(event.message->json, nullptr, false);
    std::string text = "an exception";
    if (parsed.is_object() && parsed.contains("params") && parsed["params"].contains("exceptionDetails")) {
      const json& details = parsed["params"]["exceptionDetails"];
      if (details.contains("exception") && details["exception"].contains("description") &&
          details["exception"]["description"].is_string()) {
        text = details["exception"]["description"].get<std::string>();
      } else if (details.contains("text") && details["text"].is_string()) {
        text = details["text"].get<std::string>();
      }
      if (details.contains("lineNumber") && details["lineNumber"].is_number()) {
        text += " (line " + std::to_string(details["lineNumber"].get<int64_t>() + 1) + ")";
      }
    }
    // The first line: a stack trace is too long for a status line.
    text = text.substr(0, text.find('\n')).substr(0, 300);
    MutexLock lock(&mu);
    errors.count++;
    errors.newest.push_back(std::move(text));
    if (errors.newest.size() > 16) errors.newest.erase(errors.newest.begin());
  }
};

namespace {

// Further tries at reading back a changed frame (measured: 2-4 tries fix every failure
// after a load; a live source gives up sooner and repeats its last picture).
constexpr int kReadbackRetries = 2;

double Millis(std::chrono::nanoseconds t) { return static_cast<double>(t.count()) / 1e6; }

}  // namespace

LivePage::LivePage(browser::Browser& browser, const LivePageOptions& options)
    : browser_(browser),
      options_(options),
      name_(options.name.empty() ? options.url.substr(0, 80) : options.name),
      url_(options.url),
      shared_(std::make_shared<Shared>()) {}

LivePage::~LivePage() = default;  // The session closes the target and its context.

Result<std::unique_ptr<LivePage>> LivePage::Open(browser::Browser& browser,
                                                 const LivePageOptions& options) {
  std::unique_ptr<LivePage> page(new LivePage(browser, options));
  PR_RETURN_IF_ERROR(page->Start());
  return page;
}

Result<cdp::Message> LivePage::Call(std::string_view method, std::string_view params) {
  return session_->Call(method, params);
}

Status LivePage::Start() {
  PageSessionOptions session;
  session.name = "the page " + name_;
  session.target.width = options_.width;
  session.target.height = options_.height;
  session.target.begin_frame_control = true;
  session.timeout = options_.timeout;
  PR_ASSIGN_OR_RETURN(session_, PageSession::Open(browser_, std::move(session)));
  session_->Subscribe("Page.loadEventFired", shared_, &Shared::OnLoad);
  session_->Subscribe("Runtime.exceptionThrown", shared_, &Shared::OnException);
  PR_RETURN_IF_ERROR(Call("Page.enable").status());
  PR_RETURN_IF_ERROR(Call("Runtime.enable").status());
  if (options_.alpha) {
    PR_RETURN_IF_ERROR(Call("Emulation.setDefaultBackgroundColorOverride",
                            R"({"color":{"r":0,"g":0,"b":0,"a":0}})")
                           .status());
  }
  return Navigate(url_);
}

Status LivePage::Navigate(const std::string& url) {
  shared_->loaded = false;
  if (url.empty()) return Call("Page.reload").status();
  PR_ASSIGN_OR_RETURN(cdp::Message reply, Call("Page.navigate", json({{"url", url}}).dump()));
  Result<std::string> error = cdp::GetString(reply, {"result", "errorText"});
  if (error.ok() && !error->empty()) {
    return FailedPreconditionError("cannot load " + url + ": " + *error);
  }
  url_ = url;
  return Status::Ok();
}

bool LivePage::loaded() const { return shared_->loaded; }

Status LivePage::Ping(std::chrono::milliseconds timeout) {
  return session_->Call("Runtime.evaluate", R"({"expression":"0","returnByValue":true})", timeout).status();
}

LivePage::Errors LivePage::TakeErrors() {
  MutexLock lock(&shared_->mu);
  Errors taken = std::move(shared_->errors);
  shared_->errors = Errors{};
  return taken;
}

Result<LiveFrame> LivePage::BeginFrame(std::chrono::nanoseconds frame_time,
                                       std::chrono::nanoseconds interval, bool force_screenshot,
                                       std::chrono::milliseconds timeout) {
  if (frame_time <= last_frame_time_) {
    // Chromium does not answer a beginFrame whose time went backwards.
    return InternalError("frame times must increase (" + std::to_string(frame_time.count()) +
                         " ns after " + std::to_string(last_frame_time_.count()) + " ns)");
  }
  last_frame_time_ = frame_time;
  json params = {{"frameTimeTicks", Millis(frame_time)}, {"interval", Millis(interval)}};
  LiveFrame frame;
  // A beginFrame that asks for a screenshot redraws and reads back the whole page, changed
  // or not, so a page at rest is first drawn without one and only read back when it
  // changed (a second beginFrame at the same instant, which runs no second animation
  // frame). A page that changed at its last frame is taken to be animating: its frame is
  // drawn and read back in one beginFrame, which halves the browser's work per picture
  // (docs/live.md, "Freshness"); a picture identical to the last one ends that.
  const bool probe_first = !force_screenshot && !animating_;
  if (probe_first) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply, session_->BeginFrame(params.dump(), timeout));
    Result<bool> damage = cdp::GetBool(reply, {"result", "hasDamage"});
    frame.has_damage = damage.ok() && *damage;
    if (!frame.has_damage) return frame;
  }
  if (options_.alpha) {
    params["screenshot"] = {{"format", "png"}, {"optimizeForSpeed", true}};
  } else {
    params["screenshot"] = {{"format", "jpeg"}, {"quality", options_.jpeg_quality}};
  }
  PR_ASSIGN_OR_RETURN(cdp::Message reply, session_->BeginFrame(params.dump(), timeout));
  // Chromium sometimes cannot read the surface back: the first beginFrame after a load
  // came back without screenshotData ("Readback from surface failed") in 19 of 40 runs on
  // headless-shell 156, and the same frame time again gave the picture within 2-4 tries
  // without running another animation frame (docs/architecture.md, "Driving the browser").
  for (int retry = 0; retry < kReadbackRetries && !cdp::Has(reply, {"result", "screenshotData"}); ++retry) {
    PR_ASSIGN_OR_RETURN(reply, session_->BeginFrame(params.dump(), timeout));
  }
  if (!cdp::Has(reply, {"result", "screenshotData"})) {
    animating_ = false;
    return frame;
  }
  PR_ASSIGN_OR_RETURN(EncodedFrame encoded,
                      TakeScreenshot(std::move(reply), {"result", "screenshotData"}, 0,
                                     options_.alpha ? encode::ImageFormat::kPng : encode::ImageFormat::kJpeg));
  // The same page draws to the same bytes: a picture equal to the last one is no change.
  // (Also after a probe that saw damage: the first beginFrame after one with a screenshot
  // at a new frame time reports damage on a still page, headless-shell 156.)
  const size_t digest = std::hash<std::string_view>{}(std::string_view(encoded.base64(), encoded.length));
  const bool changed = force_screenshot || digest != last_digest_;
  last_digest_ = digest;
  animating_ = changed;
  frame.has_damage = changed;
  if (changed) frame.screenshot = std::move(encoded);
  return frame;
}

Result<std::string> LivePage::Evaluate(const std::string& expression, std::chrono::milliseconds timeout) {
  PR_ASSIGN_OR_RETURN(cdp::Message reply,
                      session_->Call("Runtime.evaluate", json({{"expression", expression},
                                                               {"awaitPromise", true},
                                                               {"returnByValue", true}})
                                                             .dump(),
                                     timeout));
  json parsed = json::parse(reply.json, nullptr, false);
  if (parsed.is_discarded()) return InternalError("an unreadable reply to Runtime.evaluate");
  const json& result = parsed["result"];
  if (result.contains("exceptionDetails")) {
    const json& details = result["exceptionDetails"];
    std::string text = details.value("text", "an exception");
    if (details.contains("exception") && details["exception"].contains("description")) {
      text = details["exception"]["description"].get<std::string>();
    }
    return FailedPreconditionError("the page " + name_ + " threw: " + text);
  }
  if (!result.contains("result") || !result["result"].contains("value")) return std::string("null");
  return result["result"]["value"].dump();
}

}  // namespace pagereel::capture
