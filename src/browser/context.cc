#include "browser/context.h"

#include <nlohmann/json.hpp>

#include "cdp/json_util.h"

namespace pagereel::browser {

std::atomic<int64_t> BrowserContext::open_count_{0};

Result<std::unique_ptr<BrowserContext>> BrowserContext::Create(Browser& browser,
                                                               const ContextOptions& options) {
  nlohmann::json params = nlohmann::json::object();
  if (!options.proxy_server.empty()) params["proxyServer"] = options.proxy_server;
  if (!options.proxy_bypass_list.empty()) params["proxyBypassList"] = options.proxy_bypass_list;
  PR_ASSIGN_OR_RETURN(cdp::Message reply,
                      browser.client().Call("Target.createBrowserContext", params.dump()));
  PR_ASSIGN_OR_RETURN(std::string id, cdp::GetString(reply, {"result", "browserContextId"}));
  return std::unique_ptr<BrowserContext>(new BrowserContext(browser, std::move(id), options));
}

BrowserContext::BrowserContext(Browser& browser, std::string id, const ContextOptions& options)
    : browser_(browser), id_(std::move(id)), options_(options) {
  ++open_count_;
}

BrowserContext::~BrowserContext() { Close(); }

Result<Target> BrowserContext::CreateTarget(const TargetOptions& options) {
  {
    MutexLock lock(&mu_);
    if (closed_) return FailedPreconditionError("the browser context is closed");
  }
  cdp::Client& client = browser_.client();
  nlohmann::json params = {{"url", "about:blank"},
                           {"width", options.width},
                           {"height", options.height},
                           {"browserContextId", id_}};
  if (options.begin_frame_control) params["enableBeginFrameControl"] = true;
  PR_ASSIGN_OR_RETURN(cdp::Message created, client.Call("Target.createTarget", params.dump()));
  Target target;
  PR_ASSIGN_OR_RETURN(target.target_id, cdp::GetString(created, {"result", "targetId"}));
  {
    MutexLock lock(&mu_);
    targets_.push_back(target.target_id);
  }
  PR_ASSIGN_OR_RETURN(
      cdp::Message attached,
      client.Call("Target.attachToTarget",
                  nlohmann::json{{"targetId", target.target_id}, {"flatten", true}}.dump()));
  PR_ASSIGN_OR_RETURN(target.session_id, cdp::GetString(attached, {"result", "sessionId"}));
  return target;
}

void BrowserContext::Close() {
  std::vector<std::string> targets;
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    targets.swap(targets_);
  }
  --open_count_;
  cdp::Client& client = browser_.client();
  if (!client.connection_status().ok()) return;  // The browser is gone, and its contexts.
  // Best effort: nothing waits on these, and a browser that does not answer is replaced.
  // Sent at once: the browser closes the targets, then disposes of the context, in the
  // order sent (one round trip, not one per call).
  std::vector<cdp::Command> close;
  for (const std::string& target : targets) {
    close.push_back({"Target.closeTarget", nlohmann::json{{"targetId", target}}.dump()});
  }
  close.push_back(
      {"Target.disposeBrowserContext", nlohmann::json{{"browserContextId", id_}}.dump()});
  client.CallAll(close, {}, options_.close_timeout);
}

}  // namespace pagereel::browser
