// PageSession: one page's hold on a browser: a browser context of its own, one target in
// it attached as a flat session, that session's event subscriptions, and what the browser
// said about the target's end (its renderer crashed, or it was detached). Page, LivePage
// and Snapshot each drive their page through one.
//
// Every call to the page goes through Call() or BeginFrame(), and every failure is put in
// the page's terms in one place, Explain():
//   - the page's end, when there was one (Check());
//   - kUnavailable "the browser of <name> went away during <method>: <how it ended>" when
//     the DevTools connection ended (the browser exited, crashed or was killed);
//   - kDeadlineExceeded "<name> stopped responding <where>: <method> got no answer within
//     <timeout> (a script that does not end?)": the page's main thread answers every call,
//     so one that is not answered is running a script;
//   - any other error (the browser's own answer to the method) as it came.
//
// Thread-safe: any thread may call, subscribe, expect and check, and a page may be driven
// from one thread while another calls it (live's control). Event handlers run on the
// DevTools reader thread under cdp::Client's rules: quick, never blocking, never calling
// Call(). The owner destroys the session once no other thread uses it; no handler runs
// after the destructor has begun closing the target.
#ifndef PAGEREEL_CAPTURE_PAGE_SESSION_H_
#define PAGEREEL_CAPTURE_PAGE_SESSION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "browser/browser.h"
#include "browser/context.h"

namespace pagereel::capture {

struct PageSessionOptions {
  // How messages name the page, as the subject of a sentence: "the page https://a.example/",
  // "the document".
  std::string name;
  browser::ContextOptions context;
  browser::TargetOptions target;
  // How long a call waits for its answer unless it says otherwise; messages quote it.
  std::chrono::milliseconds timeout{30'000};
  // Optional: where the page is, for messages ("at frame 12", "while it loaded"). Called on
  // the thread whose call failed, without any of the session's locks held.
  std::function<std::string()> where;
  // Optional: the owner's own reasons the page cannot go on (it navigated away, its capture
  // was stopped), asked by Check() after the session's own; OK when there are none.
  // Called on the thread that checks.
  std::function<Status()> check;
};

// How messages quote a duration: "30 s", "1.5 s".
std::string SecondsText(std::chrono::milliseconds duration);

class PageSession {
 public:
  // Creates the context and the target, attaches to it and starts watching for its end.
  // Fails as browser::BrowserContext does, or as Explain() says.
  static Result<std::unique_ptr<PageSession>> Open(browser::Browser& browser,
                                                   PageSessionOptions options);

  // Ends every subscription (no handler runs afterwards), then closes the target and its
  // context (best effort: the browser may be gone).
  ~PageSession();
  PageSession(const PageSession&) = delete;
  PageSession& operator=(const PageSession&) = delete;

  // Sends `method` with `params` (a JSON object) to the page and waits for the reply, at
  // most `timeout` (zero: the session's). A failure comes back as Explain() says.
  Result<cdp::Message> Call(std::string_view method, std::string_view params = "{}",
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Sends every command to the page at once and waits for all the replies (cdp::Client::
  // CallAll: the page runs them in order), at most `timeout` in all (zero: the session's).
  // The first failure, in the order sent, comes back as Explain() says; otherwise the
  // replies in order.
  Result<std::vector<cdp::Message>> CallAll(
      const std::vector<cdp::Command>& commands,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Sends `method` with `params` to the page without waiting for the reply (dropped when
  // it comes). Safe from an event handler, unlike Call(): a dialog blocks the page until
  // it is answered, and its handler answers it.
  Status Send(std::string_view method, std::string_view params = "{}");

  // HeadlessExperimental.beginFrame with `params`, through Browser::BeginFrame (one in
  // flight per browser). The reply is handed over as it came: a screenshot in it is not
  // copied. A frame the browser still has pending (one that never completed blocks every
  // later one) fails with kDeadlineExceeded; other failures as Explain() says. Waits at
  // most `timeout` (zero: the session's).
  Result<cdp::Message> BeginFrame(std::string_view params,
                                  std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Calls `on_event` on `*state` for every `method` event of the page (empty: every
  // event), on the reader thread, until the session is destroyed. The session keeps only a
  // weak reference: once `state` is gone, its events are dropped.
  template <typename State>
  void Subscribe(std::string method, const std::shared_ptr<State>& state,
                 void (State::*on_event)(const cdp::Event&)) {
    AddSubscription(std::move(method), WeakHandler(state, on_event));
  }

  // The sessions of targets the page's own auto-attach brings (its workers), named by the
  // session id of their Target.attachedToTarget event. SendTo sends without waiting (safe
  // from an event handler); CallIn waits at most `timeout` and returns failures as they
  // came (a worker may end at any time). SubscribeTo is Subscribe for such a session, until
  // Unsubscribe(id) (safe from a handler) or the end of this session.
  Status SendTo(std::string_view session_id, std::string_view method,
                std::string_view params = "{}");
  Result<cdp::Message> CallIn(std::string_view session_id, std::string_view method,
                              std::string_view params, std::chrono::milliseconds timeout);
  template <typename State>
  uint64_t SubscribeTo(std::string session_id, const std::shared_ptr<State>& state,
                       void (State::*on_event)(const cdp::Event&)) {
    return AddSubscription("", WeakHandler(state, on_event), std::move(session_id));
  }
  void Unsubscribe(uint64_t id);

  // Subscribe for `method` events of the browser's own session (targets a browser-wide
  // auto-attach brings, such as shared workers, attach there), until the end of this
  // session. Every page of the browser sees them: the handler picks its own.
  template <typename State>
  void SubscribeToBrowser(std::string method, const std::shared_ptr<State>& state,
                          void (State::*on_event)(const cdp::Event&)) {
    AddBrowserSubscription(std::move(method), WeakHandler(state, on_event));
  }

  // The page's browser context (Target.attachedToTarget names it in targetInfo).
  const std::string& browser_context_id() const;

  // Fails every call to the page still waiting for its reply with `status`, at once; from
  // any thread. A page whose script runs on and on answers no call: this is how another
  // thread stops waiting for it.
  void FailCalls(const Status& status);

  // A one-shot wait for one `method` event of the page, registered before the command
  // that causes it.
  cdp::EventWaiter Expect(std::string method);

  // OK while the page can be driven. Otherwise why not: kResourceExhausted "<name> ran
  // out of memory <where>" when its renderer crashed saying so (the page would do it again:
  // not worth a retry), kUnavailable "<name> crashed its renderer" for another crash (worth
  // a retry on a fresh browser, like a browser crash), kFailedPrecondition "<name> stopped:
  // its target was detached", options.check's reason, or kUnavailable "the browser of
  // <name> went away: <how it ended>" once the DevTools connection has ended. Costs no lock
  // of the session's own.
  Status Check() const;

  // `failure` of `what` (a method, or "the wait for <event>") in the page's terms; see the
  // top of this file. REQUIRES: !failure.ok().
  Status Explain(std::string_view what, const Status& failure) const;

  const std::string& target_id() const { return target_id_; }

 private:
  struct Watch;  // What the reader thread learns of the target's end.

  // Check() but for the connection: the target's end, then options.check.
  Status CheckPage() const;

  PageSession(browser::Browser& browser, PageSessionOptions options);
  // Calls `on_event` on `*state` while `state` lives; drops the event once it is gone.
  template <typename State>
  static cdp::EventHandler WeakHandler(const std::shared_ptr<State>& state,
                                       void (State::*on_event)(const cdp::Event&)) {
    std::weak_ptr<State> weak = state;
    return [weak, on_event](const cdp::Event& event) {
      if (std::shared_ptr<State> alive = weak.lock()) ((*alive).*on_event)(event);
    };
  }
  Status Start();
  // On the page's session, or on `session_id` where one is given.
  uint64_t AddSubscription(std::string method, cdp::EventHandler handler,
                           std::string session_id = "");
  void AddBrowserSubscription(std::string method, cdp::EventHandler handler);
  std::string Where() const;

  // Constant after Open().
  browser::Browser& browser_;
  const PageSessionOptions options_;
  std::unique_ptr<browser::BrowserContext> context_;
  std::string target_id_;
  std::string session_id_;
  int64_t log_position_ = 0;  // The browser's stderr when the page began.
  std::shared_ptr<Watch> watch_;

  mutable Mutex mu_;
  std::vector<uint64_t> subscriptions_ GUARDED_BY(mu_);
};

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_PAGE_SESSION_H_
