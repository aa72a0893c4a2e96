#include "capture/live_page.h"

#include <nlohmann/json.hpp>

#include <atomic>

#include "cdp/json_util.h"

namespace pagereel::capture {

using nlohmann::json;

// What the DevTools reader thread writes.
struct LivePage::Shared {
  std::atomic<bool> loaded{false};
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

LivePage::~LivePage() {
  if (subscription_ != 0) browser_.client().Unsubscribe(subscription_);
  context_.reset();
}

Result<std::unique_ptr<LivePage>> LivePage::Open(browser::Browser& browser,
                                                 const LivePageOptions& options) {
  std::unique_ptr<LivePage> page(new LivePage(browser, options));
  PR_RETURN_IF_ERROR(page->Start());
  return page;
}

Result<cdp::Message> LivePage::Call(std::string_view method, std::string_view params) {
  Result<cdp::Message> reply = browser_.client().Call(method, params, session_id_, options_.timeout);
  if (reply.ok()) return reply;
  if (reply.status().code() == StatusCode::kUnavailable) {
    return UnavailableError("the browser of " + name_ + " went away during " + std::string(method) +
                            ": " + browser_.ExitDescription());
  }
  if (reply.status().code() == StatusCode::kDeadlineExceeded) {
    return DeadlineExceededError("the page " + name_ + " did not answer " + std::string(method) +
                                 " within " + std::to_string(options_.timeout.count()) + " ms");
  }
  return reply;
}

Status LivePage::Start() {
  PR_ASSIGN_OR_RETURN(context_, browser::BrowserContext::Create(browser_));
  PR_ASSIGN_OR_RETURN(browser::Target target,
                      context_->CreateTarget({.width = options_.width,
                                              .height = options_.height,
                                              .begin_frame_control = true}));
  session_id_ = target.session_id;
  std::weak_ptr<Shared> weak = shared_;
  subscription_ = browser_.client().Subscribe("Page.loadEventFired", session_id_,
                                              [weak](const cdp::Event&) {
                                                if (auto shared = weak.lock()) shared->loaded = true;
                                              });
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

Result<cdp::Message> LivePage::SendBeginFrame(const std::string& params) {
  Result<cdp::Message> reply = browser_.BeginFrame(session_id_, params, options_.timeout);
  if (reply.ok()) return reply;
  if (reply.status().code() == StatusCode::kUnavailable) {
    return UnavailableError("the browser of " + name_ + " went away: " + browser_.ExitDescription());
  }
  if (reply.status().code() == StatusCode::kDeadlineExceeded ||
      reply.status().message().find("Another frame is pending") != std::string_view::npos) {
    // A frame that never completed (seen when one was begun while a navigation swapped
    // renderers on a busy machine) blocks every later one: the browser is as good as hung.
    return DeadlineExceededError("the page " + name_ + " did not draw a frame within " +
                                 std::to_string(options_.timeout.count()) + " ms");
  }
  return reply;
}

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
    PR_ASSIGN_OR_RETURN(cdp::Message reply, SendBeginFrame(params.dump()));
    Result<bool> damage = cdp::GetBool(reply, {"result", "hasDamage"});
    frame.has_damage = damage.ok() && *damage;
    if (!frame.has_damage) return frame;
  }
  if (options_.alpha) {
    params["screenshot"] = {{"format", "png"}, {"optimizeForSpeed", true}};
  } else {
    params["screenshot"] = {{"format", "jpeg"}, {"quality", options_.jpeg_quality}};
  }
  PR_ASSIGN_OR_RETURN(cdp::Message reply, SendBeginFrame(params.dump()));
  // Chromium sometimes cannot read the surface back: the first beginFrame after a load
  // came back without screenshotData ("Readback from surface failed") in 19 of 40 runs on
  // headless-shell 156, and the same frame time again gave the picture within 2-4 tries
  // without running another animation frame (docs/architecture.md, "Driving the browser").
  for (int retry = 0; retry < kReadbackRetries && !cdp::Has(reply, {"result", "screenshotData"}); ++retry) {
    PR_ASSIGN_OR_RETURN(reply, SendBeginFrame(params.dump()));
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
