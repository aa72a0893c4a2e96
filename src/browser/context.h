// BrowserContext: one isolated browser context (Target.createBrowserContext) and the
// targets opened in it. A context shares nothing with the browser's other contexts:
// cookies, localStorage, sessionStorage, IndexedDB, Cache Storage, service workers and the
// HTTP cache are its own, and are gone once it is disposed.
//
// The destructor closes the context's targets and disposes of it (best effort: the
// browser may already be gone). Every capture gets one, so nothing a page stores reaches
// the next capture.
//
// Thread-safe.
#ifndef PAGEREEL_BROWSER_CONTEXT_H_
#define PAGEREEL_BROWSER_CONTEXT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "browser/browser.h"

namespace pagereel::browser {

struct ContextOptions {
  // A proxy for every request of the context's pages ("http://127.0.0.1:PORT"), and the
  // hosts that bypass it (Chromium's syntax; "<-loopback>" sends loopback through it too).
  std::string proxy_server;
  std::string proxy_bypass_list;
  // How long closing may take before it is abandoned (the browser may be stuck).
  std::chrono::milliseconds close_timeout{5'000};
};

struct TargetOptions {
  int width = 1280;
  int height = 720;
  // The target draws only when sent HeadlessExperimental.beginFrame (see Browser).
  // Otherwise it draws on Chromium's own clock, for Page.captureScreenshot and PDF.
  bool begin_frame_control = false;
};

// A target (a tab) opened in a context and attached in flat mode: commands for it go to
// the browser's client with `session_id`.
struct Target {
  std::string target_id;
  std::string session_id;
};

class BrowserContext {
 public:
  static Result<std::unique_ptr<BrowserContext>> Create(Browser& browser,
                                                        const ContextOptions& options = {});

  ~BrowserContext();  // Close().
  BrowserContext(const BrowserContext&) = delete;
  BrowserContext& operator=(const BrowserContext&) = delete;

  // Opens about:blank in a new target of this context and attaches to it.
  Result<Target> CreateTarget(const TargetOptions& options);

  // Closes the targets and disposes of the context now. Idempotent; later CreateTarget
  // calls fail.
  void Close();

  Browser& browser() { return browser_; }
  const std::string& id() const { return id_; }

  // Contexts open in this process now (for the service's metrics).
  static int64_t OpenCount() { return open_count_.load(); }

 private:
  BrowserContext(Browser& browser, std::string id, const ContextOptions& options);

  Browser& browser_;
  const std::string id_;
  const ContextOptions options_;

  Mutex mu_;
  std::vector<std::string> targets_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;

  static std::atomic<int64_t> open_count_;
};

}  // namespace pagereel::browser

#endif  // PAGEREEL_BROWSER_CONTEXT_H_
