#include "capture/live_page.h"

#include <nlohmann/json.hpp>

#include <atomic>

#include "capture/page_session.h"
#include "cdp/json_util.h"

namespace pagereel::capture {

using nlohmann::json;

// What the DevTools reader thread writes.
struct LivePage::Shared {
  std::atomic<bool> loaded{false};

  void OnLoad(const cdp::Event&) { loaded = true; }
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
  PR_RETURN_IF_ERROR(Call("Page.enable").status());
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

Result<LiveFrame> LivePage::BeginFrame(std::chrono::nanoseconds frame_time,
                                       std::chrono::nanoseconds interval, bool force_screenshot) {
  // A beginFrame that asks for a screenshot always redraws the whole page, damaged or not,
  // so the frame is first run without one; only when it changed (or a picture is wanted
  // anyway) is it drawn again at the same instant with a screenshot. Sending the same
  // frameTimeTicks again runs no second animation frame.
  if (frame_time <= last_frame_time_) {
    // Chromium does not answer a beginFrame whose time went backwards.
    return InternalError("frame times must increase (" + std::to_string(frame_time.count()) +
                         " ns after " + std::to_string(last_frame_time_.count()) + " ns)");
  }
  last_frame_time_ = frame_time;
  json params = {{"frameTimeTicks", Millis(frame_time)}, {"interval", Millis(interval)}};
  LiveFrame frame;
  if (!force_screenshot) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply, session_->BeginFrame(params.dump()));
    Result<bool> damage = cdp::GetBool(reply, {"result", "hasDamage"});
    frame.has_damage = damage.ok() && *damage;
    if (!frame.has_damage) return frame;
  }
  if (options_.alpha) {
    params["screenshot"] = {{"format", "png"}, {"optimizeForSpeed", true}};
  } else {
    params["screenshot"] = {{"format", "jpeg"}, {"quality", options_.jpeg_quality}};
  }
  PR_ASSIGN_OR_RETURN(cdp::Message reply, session_->BeginFrame(params.dump()));
  // Chromium sometimes cannot read the surface back: the first beginFrame after a load
  // came back without screenshotData ("Readback from surface failed") in 19 of 40 runs on
  // headless-shell 156, and the same frame time again gave the picture within 2-4 tries
  // without running another animation frame (docs/architecture.md, "Driving the browser").
  for (int retry = 0; retry < kReadbackRetries && !cdp::Has(reply, {"result", "screenshotData"}); ++retry) {
    PR_ASSIGN_OR_RETURN(reply, session_->BeginFrame(params.dump()));
  }
  if (force_screenshot) {
    Result<bool> damage = cdp::GetBool(reply, {"result", "hasDamage"});
    frame.has_damage = damage.ok() && *damage;
  }
  if (cdp::Has(reply, {"result", "screenshotData"})) {
    PR_ASSIGN_OR_RETURN(EncodedFrame encoded,
                        TakeScreenshot(std::move(reply), {"result", "screenshotData"}, 0,
                                       options_.alpha ? encode::ImageFormat::kPng : encode::ImageFormat::kJpeg));
    frame.screenshot = std::move(encoded);
  }
  return frame;
}

Result<std::string> LivePage::Evaluate(const std::string& expression) {
  PR_ASSIGN_OR_RETURN(cdp::Message reply,
                      Call("Runtime.evaluate", json({{"expression", expression},
                                                     {"awaitPromise", true},
                                                     {"returnByValue", true}})
                                                   .dump()));
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
