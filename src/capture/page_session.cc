#include "capture/page_session.h"

#include <atomic>
#include <cstdio>
#include <optional>
#include <utility>

#include "cdp/json_util.h"

namespace pagereel::capture {

namespace {

constexpr std::string_view kBeginFrame = "HeadlessExperimental.beginFrame";

}  // namespace

std::string SecondsText(std::chrono::milliseconds duration) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(duration.count()) / 1000.0);
  return buf;
}

// Written on the reader thread, read by whoever checks: one word, so checking (once per
// frame for render) takes no lock.
struct PageSession::Watch {
  enum class End : int { kNone, kDetached, kRendererCrashed };
  std::atomic<End> end{End::kNone};

  void OnCrashed(const cdp::Event&) { end.store(End::kRendererCrashed); }
  // A crash stays the reason when the detach that follows it arrives.
  void OnDetached() {
    End none = End::kNone;
    end.compare_exchange_strong(none, End::kDetached);
  }
};

PageSession::PageSession(browser::Browser& browser, PageSessionOptions options)
    : browser_(browser), options_(std::move(options)), watch_(std::make_shared<Watch>()) {}

PageSession::~PageSession() {
  std::vector<uint64_t> subscriptions;
  {
    MutexLock lock(&mu_);
    subscriptions.swap(subscriptions_);
  }
  // Unsubscribe waits for a running handler, so none runs once this loop is done.
  for (uint64_t id : subscriptions) browser_.client().Unsubscribe(id);
  context_.reset();  // Closes the target and disposes of the context.
}

Result<std::unique_ptr<PageSession>> PageSession::Open(browser::Browser& browser,
                                                       PageSessionOptions options) {
  std::unique_ptr<PageSession> session(new PageSession(browser, std::move(options)));
  PR_RETURN_IF_ERROR(session->Start());
  return session;
}

Status PageSession::Start() {
  log_position_ = browser_.LogPosition();
  // A fresh browser context: nothing (cookies, storage, cache) is shared with other pages.
  PR_ASSIGN_OR_RETURN(context_, browser::BrowserContext::Create(browser_, options_.context));
  PR_ASSIGN_OR_RETURN(browser::Target target, context_->CreateTarget(options_.target));
  target_id_ = target.target_id;
  session_id_ = target.session_id;

  // The calls the crashed renderer was running get no answer: they fail at once, and the
  // caller asks Check() why.
  cdp::Client* client = &browser_.client();
  std::weak_ptr<Watch> crashed = watch_;
  AddSubscription("Inspector.targetCrashed",
                  [crashed, client, session_id = session_id_](const cdp::Event& e) {
                    std::shared_ptr<Watch> watch = crashed.lock();
                    if (!watch) return;
                    watch->OnCrashed(e);
                    client->FailCalls(session_id, UnavailableError("the renderer crashed"));
                  });
  // Detachment is told to the browser's own session, for every target: this one is ours.
  std::weak_ptr<Watch> weak = watch_;
  std::string target_id = target_id_;
  uint64_t subscription = browser_.client().Subscribe(
      "Target.detachedFromTarget", "", [weak, target_id](const cdp::Event& e) {
        std::shared_ptr<Watch> watch = weak.lock();
        if (!watch) return;
        Result<std::string> detached = cdp::GetString(*e.message, {"params", "targetId"});
        if (detached.ok() && *detached == target_id) watch->OnDetached();
      });
  {
    MutexLock lock(&mu_);
    subscriptions_.push_back(subscription);
  }
  // Inspector.targetCrashed comes only with the Inspector domain enabled.
  return Call("Inspector.enable").status();
}

uint64_t PageSession::AddSubscription(std::string method, cdp::EventHandler handler,
                                      std::string session_id) {
  uint64_t id = browser_.client().Subscribe(
      std::move(method), session_id.empty() ? session_id_ : std::move(session_id),
      std::move(handler));
  MutexLock lock(&mu_);
  subscriptions_.push_back(id);
  return id;
}

void PageSession::AddBrowserSubscription(std::string method, cdp::EventHandler handler) {
  uint64_t id = browser_.client().Subscribe(std::move(method), "", std::move(handler));
  MutexLock lock(&mu_);
  subscriptions_.push_back(id);
}

const std::string& PageSession::browser_context_id() const { return context_->id(); }

void PageSession::Unsubscribe(uint64_t id) {
  {
    MutexLock lock(&mu_);
    std::erase(subscriptions_, id);
  }
  browser_.client().Unsubscribe(id);
}

Status PageSession::SendTo(std::string_view session_id, std::string_view method,
                           std::string_view params) {
  return browser_.client().Send(method, params, session_id);
}

Result<cdp::Message> PageSession::CallIn(std::string_view session_id, std::string_view method,
                                         std::string_view params,
                                         std::chrono::milliseconds timeout) {
  return browser_.client().Call(method, params, session_id, timeout);
}

void PageSession::FailCalls(const Status& status) {
  browser_.client().FailCalls(session_id_, status);
}

cdp::EventWaiter PageSession::Expect(std::string method) {
  return browser_.client().Expect(std::move(method), session_id_);
}

Result<cdp::Message> PageSession::Call(std::string_view method, std::string_view params,
                                       std::chrono::milliseconds timeout) {
  Result<cdp::Message> reply = browser_.client().Call(
      method, params, session_id_, timeout.count() > 0 ? timeout : options_.timeout);
  if (reply.ok()) return reply;
  return Explain(method, reply.status());
}

Result<std::vector<cdp::Message>> PageSession::CallAll(const std::vector<cdp::Command>& commands,
                                                       std::chrono::milliseconds timeout) {
  std::vector<Result<cdp::Message>> replies = browser_.client().CallAll(
      commands, session_id_, timeout.count() > 0 ? timeout : options_.timeout);
  std::vector<cdp::Message> messages;
  messages.reserve(replies.size());
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i].ok()) return Explain(commands[i].method, replies[i].status());
    messages.push_back(std::move(replies[i]).value());
  }
  return messages;
}

Status PageSession::Send(std::string_view method, std::string_view params) {
  return browser_.client().Send(method, params, session_id_);
}

Result<cdp::Message> PageSession::BeginFrame(std::string_view params, std::chrono::milliseconds timeout) {
  Result<cdp::Message> reply =
      browser_.BeginFrame(session_id_, params, timeout.count() > 0 ? timeout : options_.timeout);
  if (reply.ok()) return reply;
  if (reply.status().message().find("Another frame is pending") != std::string_view::npos) {
    // A frame that never completed (seen when one was begun while a navigation swapped
    // renderers on a busy machine) blocks every later one: the page is as good as hung.
    PR_RETURN_IF_ERROR(Check());
    return DeadlineExceededError(options_.name + " stopped drawing" + Where() +
                                 ": a frame it was sent never completed, so it takes no more");
  }
  return Explain(kBeginFrame, reply.status());
}

Status PageSession::Check() const {
  PR_RETURN_IF_ERROR(CheckPage());
  // The browser itself gone (killed, crashed) ends no target with an event: without this, a
  // wait for one of the page's events ran out its whole timeout (serve answered a capture
  // whose browser was killed during its load 504 after 30 s, not 502).
  if (!browser_.client().connection_status().ok()) {
    return UnavailableError("the browser of " + options_.name + " went away" + Where() + ": " +
                            browser_.ExitDescription());
  }
  return Status::Ok();
}

Status PageSession::CheckPage() const {
  switch (watch_->end.load()) {
    case Watch::End::kRendererCrashed:
      // (Another page of the same browser may have run out of memory meanwhile; render
      // gives each page a browser of its own.)
      if (std::optional<std::string> oom = browser_.OutOfMemorySince(log_position_)) {
        return ResourceExhaustedError(
            options_.name + " ran out of memory" + Where() + ": its renderer stopped with \"" +
            *oom + "\" (a page's JavaScript may use about 4 GB); it would do so again, so it "
            "was not retried");
      }
      return UnavailableError(options_.name + " crashed its renderer");
    case Watch::End::kDetached:
      return FailedPreconditionError(options_.name + " stopped: its target was detached");
    case Watch::End::kNone:
      break;
  }
  return options_.check ? options_.check() : Status::Ok();
}

std::string PageSession::Where() const {
  if (!options_.where) return "";
  std::string where = options_.where();
  return where.empty() ? where : " " + where;
}

Status PageSession::Explain(std::string_view what, const Status& failure) const {
  PR_RETURN_IF_ERROR(CheckPage());
  switch (failure.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kCancelled:  // The connection was closed on purpose (Browser::Kill).
      return UnavailableError("the browser of " + options_.name + " went away during " +
                              std::string(what) + ": " + browser_.ExitDescription());
    case StatusCode::kDeadlineExceeded:
      return DeadlineExceededError(options_.name + " stopped responding" + Where() + ": " +
                                   std::string(what) + " got no answer within " +
                                   SecondsText(options_.timeout) +
                                   " (a script that does not end?)");
    default:
      return failure;
  }
}

}  // namespace pagereel::capture
