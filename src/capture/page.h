// Page: one web page in its own browser context on a begin-frame target, stepped frame by
// frame on virtual time.
//
// Frame n presents time n * den / num seconds (to the millisecond) through every clock a
// page can read: CSS animations and transitions, Web Animations, SVG animation,
// requestAnimationFrame timestamps, performance.now(), Date.now() and timers. Each frame
// runs exactly one requestAnimationFrame turn. Frames are produced in order; frames that
// are skipped are still run (without a screenshot), so a page that reaches frame n always
// holds the state a page that ran from frame 0 would hold. docs/page-contract.md says what
// a page may rely on.
//
// Not thread-safe: one thread drives a Page. Its browser must not run another begin-frame
// target at the same time (two beginFrames in flight crash Chromium's GPU process).
#ifndef PAGEREEL_CAPTURE_PAGE_H_
#define PAGEREEL_CAPTURE_PAGE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/rational.h"
#include "base/status.h"
#include "browser/browser.h"
#include "capture/image.h"

namespace pagereel::capture {

struct PageOptions {
  std::string url;  // file://, http:// or https://.
  int width = 1280;
  int height = 720;
  Rational fps{30, 1};
  // Transparent page background and PNG screenshots (JPEG cannot carry alpha).
  bool alpha = false;
  int jpeg_quality = 90;
  // How long (wall clock) to wait for the page to load and be ready, and for any single
  // frame's virtual time to pass.
  std::chrono::milliseconds timeout{30'000};
  // Date.now() at frame 0: fixed, so films do not depend on the day they were made.
  // 2026-01-01T00:00:00Z.
  int64_t epoch_ms = 1'767'225'600'000;
  // Polled between pre-roll frames; when it returns true, PreRoll stops with kCancelled
  // (a long pre-roll must not hold up a render that has already failed or been stopped).
  std::function<bool()> should_stop;
};

class Page {
 public:
  // Opens `options.url` in a fresh browser context, waits for it to load, for its fonts
  // and for window.pagereel.ready. Frame 0 is next.
  static Result<std::unique_ptr<Page>> Open(browser::Browser& browser, const PageOptions& options);

  ~Page();  // Closes the target and its browser context.
  Page(const Page&) = delete;
  Page& operator=(const Page&) = delete;

  // window.pagereel.duration, in seconds, if the page declared one.
  std::optional<double> declared_duration() const { return declared_duration_; }

  // The frame the next Capture() or PreRoll() starts from.
  int64_t next_frame() const { return next_frame_; }

  // Runs frames [next_frame(), index) without screenshots, then frame `index` with one.
  // REQUIRES: index >= next_frame().
  Result<EncodedFrame> Capture(int64_t index);

  // Runs frames [next_frame(), index) without screenshots: afterwards the page is exactly
  // as it would be had it drawn them (its own rAF-driven state included).
  Status PreRoll(int64_t index);

  // Brings the page to frame `index` cheaply: frame 0 is drawn if it was not, then virtual
  // time jumps to frame `index`'s time in one step. Timers fire, and CSS, Web Animations,
  // SVG and every clock read the right time, but requestAnimationFrame does not run for the
  // skipped frames, so state a page accumulates per frame is not reproduced.
  Status JumpTo(int64_t index);

 private:
  struct Shared;  // State the DevTools reader thread writes (navigation, close).

  Page(browser::Browser& browser, const PageOptions& options);
  Status Load();
  Status AdvanceVirtualTimeTo(int64_t virtual_ms);
  Status WaitFor(cdp::EventWaiter& waiter, const std::function<Status()>& on_timeout);
  Result<cdp::Message> Call(std::string_view method, std::string_view params = "{}");
  Result<cdp::Message> Evaluate(const std::string& expression, bool await_promise = false);
  Status StepFrame(int64_t index, EncodedFrame* screenshot);
  Status CheckStillOurs() const;

  // Constant after Open().
  browser::Browser& browser_;
  const PageOptions options_;
  std::string context_id_;
  std::string target_id_;
  std::string session_id_;
  double ticks_base_ms_ = 0;     // virtualTimeTicksBase: monotonic ms at virtual time 0.
  int64_t origin_ms_ = 0;        // Virtual ms at frame 0 (time spent loading and waiting).
  std::optional<double> declared_duration_;
  bool has_seek_ = false;

  int64_t virtual_ms_ = 0;  // Virtual time elapsed since navigation.
  int64_t next_frame_ = 0;
  std::shared_ptr<Shared> shared_;
  uint64_t subscription_ = 0;
  uint64_t detach_subscription_ = 0;
  uint64_t signal_subscription_ = 0;
};

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_PAGE_H_
