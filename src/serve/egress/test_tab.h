// Tab: one browser context with one attached page, for the egress integration tests
// (test-only). Closed with its context on destruction. Calls block; one thread at a time.
#ifndef PAGEREEL_SERVE_EGRESS_TEST_TAB_H_
#define PAGEREEL_SERVE_EGRESS_TEST_TAB_H_

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cdp/client.h"
#include "cdp/json_util.h"

namespace pagereel::serve::egress::testing {

using json = nlohmann::json;

class Tab {
 public:
  static Result<std::unique_ptr<Tab>> Open(cdp::Client& client, const json& context_params) {
    std::unique_ptr<Tab> tab(new Tab(client));
    PR_ASSIGN_OR_RETURN(cdp::Message context,
                        client.Call("Target.createBrowserContext", context_params.dump()));
    PR_ASSIGN_OR_RETURN(tab->context_id_, cdp::GetString(context, {"result", "browserContextId"}));
    PR_ASSIGN_OR_RETURN(cdp::Message target,
                        client.Call("Target.createTarget",
                                    json{{"url", "about:blank"},
                                         {"browserContextId", tab->context_id_}}
                                        .dump()));
    PR_ASSIGN_OR_RETURN(tab->target_id_, cdp::GetString(target, {"result", "targetId"}));
    PR_ASSIGN_OR_RETURN(
        cdp::Message attached,
        client.Call("Target.attachToTarget",
                    json{{"targetId", tab->target_id_}, {"flatten", true}}.dump()));
    PR_ASSIGN_OR_RETURN(tab->session_, cdp::GetString(attached, {"result", "sessionId"}));
    return tab;
  }

  ~Tab() {
    client_.Call("Target.closeTarget", json{{"targetId", target_id_}}.dump()).status().IgnoreError();
    client_.Call("Target.disposeBrowserContext", json{{"browserContextId", context_id_}}.dump())
        .status()
        .IgnoreError();
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
  std::string context_id_;
  std::string target_id_;
  std::string session_;
};


}  // namespace pagereel::serve::egress::testing

#endif  // PAGEREEL_SERVE_EGRESS_TEST_TAB_H_
