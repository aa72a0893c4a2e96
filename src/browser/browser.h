// Browser: one chrome-headless-shell process tree, driven over --remote-debugging-pipe.
//
// Launch() starts the browser in its own process group with a fresh profile folder;
// the destructor kills the whole group and removes the folder. A browser that exits or
// crashes is noticed by its DevTools client (every call then fails with kUnavailable), and
// ExitDescription() says how it ended, with the last lines it wrote to stderr.
//
// Thread-safe: any thread may use a Browser, and any thread may launch one (the process
// is started from one long-lived launcher thread, since the kernel's parent-death signal
// fires when the thread that forked exits, not the process). Browsers register their
// process groups with KillAllBrowsers(), which a signal handler may call; there is no
// limit on how many are tracked.
//
// HeadlessExperimental.beginFrame must go through BeginFrame(): Chromium's GPU process
// crashes when two are in flight in one browser ("Got overlapping
// IssueExternalBeginFrame"), so BeginFrame() lets one run at a time.
#ifndef PAGEREEL_BROWSER_BROWSER_H_
#define PAGEREEL_BROWSER_BROWSER_H_

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "cdp/client.h"

namespace pagereel::browser {

// Where Debian's chromium-headless-shell package puts the real binary (the /usr/bin
// wrapper is a shell script that does not exec, so its children would escape us).
inline constexpr const char* kDefaultBrowserPath = "/usr/lib/chromium/chromium-headless-shell";

enum class FrameControl {
  // Every target draws only when sent HeadlessExperimental.beginFrame (render, live).
  kBeginFrame,
  // Each target chooses when it is created (Target.createTarget's enableBeginFrameControl):
  // begin-frame targets for animated captures beside ordinary ones that draw on
  // Chromium's own clock for Page.captureScreenshot and Page.printToPDF (serve's GIFs and
  // clips).
  kPerTarget,
  // No begin-frame control at all: every target draws on Chromium's own clock (serve's
  // screenshots and PDFs). The browser then runs without
  // --run-all-compositor-stages-before-draw, which begin-frame control needs and with which
  // about 1 in 300 to 1,200 of serve's Page.captureScreenshot calls was never answered
  // (bench/RESULTS.md, "screenshots that never came").
  kNone,
};

struct LaunchOptions {
  // Empty: $PAGEREEL_BROWSER, else kDefaultBrowserPath.
  std::string binary;
  FrameControl frame_control = FrameControl::kBeginFrame;
  // Extra command-line switches, appended after pagereel's own.
  std::vector<std::string> extra_args;
  // Added to the browser processes' niceness (0-19): the capture service runs its browsers
  // below its own HTTP thread, so a busy machine still answers requests at once, and live
  // below its clock and encoders. With a positive value no browser thread may raise itself
  // back above it (Chromium would raise its display threads to -8).
  int nice = 0;
  // Whether the browser's sound is muted (--mute-audio) or played to its sound server (live
  // captures it: live/sound.h).
  enum class Audio { kMuted, kPlayed };
  Audio audio = Audio::kMuted;
  // "NAME=value" entries added to the browser's environment (live's PULSE_SERVER and
  // PULSE_SINK, which choose the sound server and sink a browser plays to).
  std::vector<std::string> environment;
};

class Browser {
 public:
  static Result<std::unique_ptr<Browser>> Launch(const LaunchOptions& options);

  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  cdp::Client& client() { return *client_; }
  pid_t pid() const { return pid_; }
  // What the browser said it is at launch (Browser.getVersion): "HeadlessChrome/156.0...",
  // and its user agent.
  const std::string& product() const { return product_; }
  const std::string& user_agent() const { return user_agent_; }

  // Sends HeadlessExperimental.beginFrame to the target attached as `session_id`, waiting
  // first for any other beginFrame of this browser to be answered.
  Result<cdp::Message> BeginFrame(std::string_view session_id, std::string_view params_json,
                                  std::chrono::milliseconds timeout);

  // How the browser ended ("exited with status 1", "killed by signal 9 (Killed)") and
  // the tail of its stderr; "still running" while it runs.
  std::string ExitDescription();

  // Kills the process group now (for tests that simulate a crash, and for shutdown).
  void Kill();

  // How far the browser's stderr (its renderers' too) has been written; pass it to
  // OutOfMemorySince() later.
  int64_t LogPosition() const;
  // The line a renderer wrote to stderr since `position` saying it ran out of memory, if
  // one did ("V8 javascript OOM (Reached heap limit)."). Chromium crashes a renderer whose
  // JavaScript heap is full on purpose, and DevTools calls that a plain crash.
  std::optional<std::string> OutOfMemorySince(int64_t position) const;

 private:
  Browser(pid_t pid, std::filesystem::path profile_dir, std::unique_ptr<cdp::Client> client);
  bool Reap(bool block) REQUIRES(exit_mu_);

  // Constant after Launch().
  pid_t pid_;
  std::filesystem::path profile_dir_;
  std::unique_ptr<cdp::Client> client_;
  std::string product_;
  std::string user_agent_;

  Mutex exit_mu_;
  bool reaped_ GUARDED_BY(exit_mu_) = false;
  int wait_status_ GUARDED_BY(exit_mu_) = 0;

  Mutex begin_frame_mu_;  // Held while a beginFrame is in flight.
};

// Resolves which browser binary Launch would run, or a NotFound status naming the Debian
// package to install.
Result<std::string> FindBrowserBinary(const std::string& requested);

// SIGKILLs every live browser's process group. Async-signal-safe: for SIGINT handlers.
void KillAllBrowsers();

// Process groups of the browsers alive now (for memory accounting).
std::vector<pid_t> LiveBrowserGroups();

}  // namespace pagereel::browser

#endif  // PAGEREEL_BROWSER_BROWSER_H_
