// Tab: one browser context with one attached page, for tests and benchmarks that drive a
// page over the DevTools protocol themselves (the egress tests and bench). Closed with its
// context on destruction. Calls block; one thread at a time.
#ifndef PAGEREEL_TESTING_TAB_H_
#define PAGEREEL_TESTING_TAB_H_

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "browser/browser.h"
#include "browser/context.h"
#include "cdp/client.h"
#include "cdp/json_util.h"

namespace pagereel::testing {

using json = nlohmann::json;

class Tab {
 public:
  // A page in a fresh context of `browser` (browser::BrowserContext), with `context`'s
  // proxy settings.
  static Result<std::unique_ptr<Tab>> Open(browser::Browser& browser,
                                           const browser::ContextOptions& context = {}) {
    std::unique_ptr<Tab> tab(new Tab(browser.client()));
    PR_ASSIGN_OR_RETURN(tab->context_, browser::BrowserContext::Create(browser, context));
    browser::TargetOptions target;
    target.width = 800;
    target.height = 600;
    PR_ASSIGN_OR_RETURN(browser::Target attached, tab->context_->CreateTarget(target));
    tab->session_ = attached.session_id;
    return tab;
  }

  // Page.navigate's reply: {frameId, loaderId, errorText?}.
  Result<json> Navigate(const std::string& url) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply,
                        client_.Call("Page.navigate", json{{"url", url}}.dump(), session_));
    return json::parse(reply.json)["result"];
  }

  // The value of `expression` (awaited when it is a promise), or its exception as an error.
  Result<json> Evaluate(const std::string& expression,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply,
                        client_.Call("Runtime.evaluate",
                                     json{{"expression", expression},
                                          {"awaitPromise", true},
                                          {"returnByValue", true}}
                                         .dump(),
                                     session_, timeout));
    json r = json::parse(reply.json)["result"];
    if (r.contains("exceptionDetails")) return InternalError(r["exceptionDetails"].dump());
    return r["result"].value("value", json());
  }

  const std::string& session() const { return session_; }

  // Calls `method` on the page's session and returns its "result".
  Result<json> Call(const std::string& method, const json& params = json::object()) {
    PR_ASSIGN_OR_RETURN(cdp::Message reply, client_.Call(method, params.dump(), session_));
    return json::parse(reply.json)["result"];
  }

 private:
  explicit Tab(cdp::Client& client) : client_(client) {}
  cdp::Client& client_;
  std::unique_ptr<browser::BrowserContext> context_;  // Closes the target and the context.
  std::string session_;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_TAB_H_
