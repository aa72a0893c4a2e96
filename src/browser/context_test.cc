// Runs the real chrome-headless-shell: contexts, targets, and one browser used by many
// threads at once (also run under ThreadSanitizer: cmake --preset tsan).
#include "browser/context.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cdp/json_util.h"
#include "testing/http_server.h"

namespace pagereel::browser {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

std::unique_ptr<Browser> LaunchOrDie(FrameControl control = FrameControl::kPerTarget) {
  LaunchOptions options;
  options.frame_control = control;
  Result<std::unique_ptr<Browser>> browser = Browser::Launch(options);
  EXPECT_TRUE(browser.ok()) << browser.status().ToString();
  return browser.ok() ? std::move(browser).value() : nullptr;
}

// Evaluates `expression` in the target's page and returns its value as JSON.
json Eval(Browser& browser, const Target& target, const std::string& expression) {
  Result<cdp::Message> reply = browser.client().Call(
      "Runtime.evaluate",
      json{{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}}.dump(),
      target.session_id);
  if (!reply.ok()) return json{{"error", reply.status().ToString()}};
  json j = json::parse(reply->json.c_str());
  return j["result"]["result"].value("value", json());
}

Status Navigate(Browser& browser, const Target& target, const std::string& url) {
  PR_RETURN_IF_ERROR(browser.client().Call("Page.enable", "{}", target.session_id).status());
  cdp::EventWaiter loaded = browser.client().Expect("Page.loadEventFired", target.session_id);
  PR_RETURN_IF_ERROR(
      browser.client().Call("Page.navigate", json{{"url", url}}.dump(), target.session_id).status());
  return loaded.Wait(milliseconds(20'000)).status();
}

TEST(BrowserContextTest, StorageDoesNotCrossContexts) {
  testing::HttpServer server;
  server.Serve("/", "<!doctype html><title>store</title>");
  std::unique_ptr<Browser> browser = LaunchOrDie();
  ASSERT_TRUE(browser);

  auto first = BrowserContext::Create(*browser);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto a = (*first)->CreateTarget({});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(Navigate(*browser, *a, server.Url("/")).ok());
  EXPECT_EQ(Eval(*browser, *a,
                 "localStorage.setItem('k', 'v'); document.cookie = 'c=1; max-age=3600'; "
                 "localStorage.getItem('k') + document.cookie"),
            "vc=1");

  // Another context of the same browser, at the same time, and after the first is gone.
  for (int round = 0; round < 2; ++round) {
    auto second = BrowserContext::Create(*browser);
    ASSERT_TRUE(second.ok());
    auto b = (*second)->CreateTarget({});
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(Navigate(*browser, *b, server.Url("/")).ok());
    EXPECT_EQ(Eval(*browser, *b, "String(localStorage.getItem('k')) + '|' + document.cookie"),
              "null|");
    first->reset();
  }
}

TEST(BrowserContextTest, CloseDisposesTargetsAndContext) {
  std::unique_ptr<Browser> browser = LaunchOrDie();
  ASSERT_TRUE(browser);
  int64_t open_before = BrowserContext::OpenCount();
  std::string target_id;
  {
    auto context = BrowserContext::Create(*browser);
    ASSERT_TRUE(context.ok());
    EXPECT_EQ(BrowserContext::OpenCount(), open_before + 1);
    auto target = (*context)->CreateTarget({.width = 320, .height = 200, .begin_frame_control = false});
    ASSERT_TRUE(target.ok());
    target_id = target->target_id;
  }
  EXPECT_EQ(BrowserContext::OpenCount(), open_before);
  Result<cdp::Message> targets = browser->client().Call("Target.getTargets");
  ASSERT_TRUE(targets.ok());
  EXPECT_EQ(targets->json.find(target_id), std::string::npos);
  Result<cdp::Message> contexts = browser->client().Call("Target.getBrowserContexts");
  ASSERT_TRUE(contexts.ok());
  EXPECT_EQ(json::parse(contexts->json.c_str())["result"]["browserContextIds"].size(), 0u);
}

TEST(BrowserContextTest, ManyThreadsCallOnManySessions) {
  std::unique_ptr<Browser> browser = LaunchOrDie();
  ASSERT_TRUE(browser);
  constexpr int kThreads = 6;
  constexpr int kCalls = 60;
  std::vector<std::unique_ptr<BrowserContext>> contexts;
  std::vector<Target> targets;
  for (int i = 0; i < kThreads / 2; ++i) {
    auto context = BrowserContext::Create(*browser);
    ASSERT_TRUE(context.ok());
    auto target = (*context)->CreateTarget({});
    ASSERT_TRUE(target.ok());
    targets.push_back(*target);
    contexts.push_back(std::move(context).value());
  }
  // Two threads per session, each with its own sequence of values; every reply must be
  // the answer to that thread's own question.
  std::atomic<int> wrong{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Target& target = targets[t % targets.size()];
      for (int i = 0; i < kCalls; ++i) {
        int value = t * 1000 + i;
        json got = Eval(*browser, target, std::to_string(value) + " * 2");
        if (got.is_object()) {
          ++failed;
        } else if (got != value * 2) {
          ++wrong;
        }
      }
    });
  }
  // Meanwhile subscriptions come and go on another thread.
  std::thread churn([&] {
    for (int i = 0; i < 200; ++i) {
      uint64_t id = browser->client().Subscribe("", targets[0].session_id, [](const cdp::Event&) {});
      browser->client().Unsubscribe(id);
    }
  });
  for (auto& thread : threads) thread.join();
  churn.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(BrowserContextTest, BeginFramesFromTwoThreadsDoNotOverlap) {
  // Two begin-frame targets in one browser, driven from two threads: BeginFrame lets one
  // run at a time; overlapping ones crash Chromium's GPU process.
  std::unique_ptr<Browser> browser = LaunchOrDie();
  ASSERT_TRUE(browser);
  std::vector<std::unique_ptr<BrowserContext>> contexts;
  std::vector<Target> targets;
  for (int i = 0; i < 2; ++i) {
    auto context = BrowserContext::Create(*browser);
    ASSERT_TRUE(context.ok());
    auto target = (*context)->CreateTarget({.width = 320, .height = 180, .begin_frame_control = true});
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    targets.push_back(*target);
    contexts.push_back(std::move(context).value());
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        json params = {{"screenshot", {{"format", "jpeg"}, {"quality", 50}}}};
        if (!browser->BeginFrame(targets[t].session_id, params.dump(), milliseconds(20'000)).ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(browser->client().Call("Browser.getVersion").ok()) << browser->ExitDescription();
}

}  // namespace
}  // namespace pagereel::browser
