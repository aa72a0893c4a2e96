// Runs the real chrome-headless-shell.
#include "browser/browser.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cdp/json_util.h"

namespace pagereel::browser {
namespace {

// Every process whose process group is `pgid`.
int CountProcessesInGroup(pid_t pgid) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    pid_t group = 0;
    rest >> state >> ppid >> group;
    if (group == pgid && state != "Z") ++count;
  }
  return count;
}

TEST(BrowserTest, LaunchesAnswersAndCleansUp) {
  Result<std::unique_ptr<Browser>> browser = Browser::Launch({});
  ASSERT_TRUE(browser.ok()) << browser.status().ToString();
  Result<cdp::Message> version = (*browser)->client().Call("Browser.getVersion");
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_NE(cdp::GetString(*version, {"result", "product"})->find("HeadlessChrome"),
            std::string::npos);
  pid_t group = (*browser)->pid();
  EXPECT_GE(CountProcessesInGroup(group), 1);
  browser->reset();
  EXPECT_EQ(CountProcessesInGroup(group), 0);
}

TEST(BrowserTest, CrashIsReportedToCallers) {
  Result<std::unique_ptr<Browser>> browser = Browser::Launch({});
  ASSERT_TRUE(browser.ok()) << browser.status().ToString();
  ::kill((*browser)->pid(), SIGKILL);
  Result<cdp::Message> reply = (*browser)->client().Call("Browser.getVersion");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE((*browser)->ExitDescription().find("killed by signal 9"), std::string::npos);
}

TEST(BrowserTest, OutlivesTheThreadThatLaunchedIt) {
  // A service launches browsers from short-lived worker threads; the kernel's
  // parent-death signal must not kill the browser when that thread ends.
  std::unique_ptr<Browser> browser;
  std::thread([&] {
    Result<std::unique_ptr<Browser>> launched = Browser::Launch({});
    ASSERT_TRUE(launched.ok()) << launched.status().ToString();
    browser = std::move(launched).value();
  }).join();
  ASSERT_TRUE(browser);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Result<cdp::Message> version = browser->client().Call("Browser.getVersion");
  EXPECT_TRUE(version.ok()) << version.status().ToString() << "; " << browser->ExitDescription();
}

TEST(BrowserTest, ManyBrowsersAreAllTracked) {
  // Every live browser is known to KillAllBrowsers (no fixed table that could overflow).
  std::vector<std::unique_ptr<Browser>> browsers;
  for (int i = 0; i < 3; ++i) {
    Result<std::unique_ptr<Browser>> b = Browser::Launch({});
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    browsers.push_back(std::move(b).value());
  }
  std::vector<pid_t> groups = LiveBrowserGroups();
  for (const auto& b : browsers) {
    EXPECT_NE(std::find(groups.begin(), groups.end(), b->pid()), groups.end());
  }
  pid_t first = browsers[0]->pid();
  browsers[0].reset();
  groups = LiveBrowserGroups();
  EXPECT_EQ(std::find(groups.begin(), groups.end(), first), groups.end());
}

TEST(BrowserTest, MissingBinaryNamesThePackage) {
  LaunchOptions options;
  options.binary = "/nonexistent/chrome";
  Result<std::unique_ptr<Browser>> browser = Browser::Launch(options);
  ASSERT_FALSE(browser.ok());
  EXPECT_EQ(browser.status().code(), StatusCode::kNotFound);
  EXPECT_NE(browser.status().message().find("apt-get install chromium-headless-shell"),
            std::string_view::npos);
}

TEST(BrowserTest, NotABrowserFailsClearly) {
  LaunchOptions options;
  options.binary = "/bin/true";
  Result<std::unique_ptr<Browser>> browser = Browser::Launch(options);
  ASSERT_FALSE(browser.ok());
  EXPECT_NE(browser.status().message().find("did not start"), std::string_view::npos);
}

}  // namespace
}  // namespace pagereel::browser
