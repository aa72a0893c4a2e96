// PageSession against the real chrome-headless-shell: how a page's end and a call's
// failure are told, and which events reach their handlers.
#include "capture/page_session.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <string>
#include <thread>

namespace pagereel::capture {
namespace {

using std::chrono::milliseconds;

class PageSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    browser::LaunchOptions options;
    options.frame_control = browser::FrameControl::kPerTarget;
    Result<std::unique_ptr<browser::Browser>> b = browser::Browser::Launch(options);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    browser_ = std::move(b).value();
  }

  static PageSessionOptions Options() {
    PageSessionOptions options;
    options.name = "the page session-test.html";
    options.target = {.width = 320, .height = 180, .begin_frame_control = false};
    options.timeout = milliseconds(10'000);
    return options;
  }

  std::unique_ptr<PageSession> Open(PageSessionOptions options = Options()) {
    Result<std::unique_ptr<PageSession>> session = PageSession::Open(*browser_, std::move(options));
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    return session.ok() ? std::move(session).value() : nullptr;
  }

  std::unique_ptr<browser::Browser> browser_;
};

bool Contains(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

TEST_F(PageSessionTest, ACallToAPageWhoseRendererCrashedFailsUnavailableNamingThePage) {
  std::unique_ptr<PageSession> session = Open();
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->Call("Runtime.evaluate", R"({"expression":"1"})").ok());
  EXPECT_TRUE(session->Check().ok());

  cdp::EventWaiter crashed = session->Expect("Inspector.targetCrashed");
  // Page.crash takes the renderer down before it can answer, and a crashed page answers no
  // call: these calls wait one second, not the session's ten.
  session->Call("Page.crash", "{}", milliseconds(1'000)).status().IgnoreError();
  ASSERT_TRUE(crashed.Wait(milliseconds(30'000)).ok());

  Status check = session->Check();
  EXPECT_EQ(check.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(check, "the page session-test.html crashed its renderer"))
      << check.ToString();
  Result<cdp::Message> reply =
      session->Call("Runtime.evaluate", R"({"expression":"1"})", milliseconds(1'000));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(reply.status(), "the page session-test.html crashed its renderer"))
      << reply.status().ToString();
}

TEST_F(PageSessionTest, ACallToABrowserThatWentAwayNamesThePageAndTheMethod) {
  std::unique_ptr<PageSession> session = Open();
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(::kill(browser_->pid(), SIGKILL), 0);
  Result<cdp::Message> reply = session->Call("Runtime.evaluate", R"({"expression":"1"})");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(reply.status(),
                       "the browser of the page session-test.html went away during "
                       "Runtime.evaluate"))
      << reply.status().ToString();
}

// Between calls too: a wait for one of the page's events asks Check(), and a browser that
// is gone sends no event to end the wait (serve waited out a capture's 30 s for a load
// event from a browser killed meanwhile, then answered 504).
TEST_F(PageSessionTest, CheckSaysWhenTheBrowserWentAway) {
  std::unique_ptr<PageSession> session = Open();
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->Check().ok());
  ASSERT_EQ(::kill(browser_->pid(), SIGKILL), 0);
  Status check;
  for (int i = 0; i < 500 && check.ok(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    check = session->Check();
  }
  EXPECT_EQ(check.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(check, "the browser of the page session-test.html went away: killed by signal 9"))
      << check.ToString();
}

TEST_F(PageSessionTest, ADetachedTargetStopsThePage) {
  std::unique_ptr<PageSession> session = Open();
  ASSERT_NE(session, nullptr);
  // Registered after the session's own watch, so it fires after the session saw it.
  cdp::EventWaiter detached = browser_->client().Expect("Target.detachedFromTarget", "");
  ASSERT_TRUE(browser_->client()
                  .Call("Target.closeTarget", R"({"targetId":")" + session->target_id() + "\"}")
                  .ok());
  ASSERT_TRUE(detached.Wait(milliseconds(30'000)).ok());
  Status check = session->Check();
  EXPECT_EQ(check.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(check, "the page session-test.html stopped: its target was detached"))
      << check.ToString();
  EXPECT_EQ(session->Call("Runtime.evaluate", R"({"expression":"1"})").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(PageSessionTest, AnUnansweredCallSaysWhereThePageWasAndWhichMethod) {
  PageSessionOptions options = Options();
  options.timeout = milliseconds(1'000);
  options.where = [] { return std::string("at frame 7"); };
  std::unique_ptr<PageSession> session = Open(std::move(options));
  ASSERT_NE(session, nullptr);
  Result<cdp::Message> reply = session->Call("Runtime.evaluate", R"({"expression":"for (;;) {}"})");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(Contains(reply.status(),
                       "the page session-test.html stopped responding at frame 7: "
                       "Runtime.evaluate got no answer within 1 s"))
      << reply.status().ToString();
}

TEST_F(PageSessionTest, TheOwnersReasonComesBeforeTheBrowsersAnswer) {
  auto left = std::make_shared<std::atomic<bool>>(false);
  PageSessionOptions options = Options();
  options.check = [left] {
    return left->load() ? FailedPreconditionError("the page session-test.html navigated away")
                        : Status::Ok();
  };
  std::unique_ptr<PageSession> session = Open(std::move(options));
  ASSERT_NE(session, nullptr);
  // A method the browser does not have: its own answer comes through while nothing is wrong.
  EXPECT_EQ(session->Call("Page.noSuchMethod").status().code(), StatusCode::kNotFound);
  left->store(true);
  Status check = session->Check();
  EXPECT_TRUE(Contains(check, "navigated away")) << check.ToString();
  Result<cdp::Message> reply = session->Call("Page.noSuchMethod");
  EXPECT_EQ(reply.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(reply.status(), "navigated away")) << reply.status().ToString();
}

// Counts the events it is given; the count lives with the test, so it outlives the state.
struct Counter {
  std::atomic<int>* count;
  void OnEvent(const cdp::Event&) { ++*count; }
};

TEST_F(PageSessionTest, EventsOfAStateThatIsGoneAreDropped) {
  std::unique_ptr<PageSession> session = Open();
  ASSERT_NE(session, nullptr);
  std::atomic<int> kept_count{0};
  std::atomic<int> dropped_count{0};
  auto kept = std::make_shared<Counter>(Counter{&kept_count});
  auto dropped = std::make_shared<Counter>(Counter{&dropped_count});
  session->Subscribe("Runtime.consoleAPICalled", kept, &Counter::OnEvent);
  session->Subscribe("Runtime.consoleAPICalled", dropped, &Counter::OnEvent);
  ASSERT_TRUE(session->Call("Runtime.enable").ok());

  auto log = [&] {
    // Subscribed after the counters, so once it has the event they have had it too.
    cdp::EventWaiter seen = session->Expect("Runtime.consoleAPICalled");
    ASSERT_TRUE(
        session->Call("Runtime.evaluate", R"js({"expression":"console.log('hi')"})js").ok());
    ASSERT_TRUE(seen.Wait(milliseconds(30'000)).ok());
  };
  log();
  EXPECT_EQ(kept_count.load(), 1);
  EXPECT_EQ(dropped_count.load(), 1);
  dropped.reset();  // Its owner is gone; the session is not.
  log();
  EXPECT_EQ(kept_count.load(), 2);
  EXPECT_EQ(dropped_count.load(), 1);
}

}  // namespace
}  // namespace pagereel::capture
