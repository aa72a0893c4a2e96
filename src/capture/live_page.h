// LivePage: a page for `pagereel live`, drawn in real time on a begin-frame target.
//
// Unlike Page there is no virtual time: the page's clocks follow the wall clock, and each
// frame is drawn when its owner calls BeginFrame with the frame's own instant on
// CLOCK_MONOTONIC (Chromium's TimeTicks on Linux), so requestAnimationFrame and CSS
// animations see the show's frame times exactly one period apart. A frame whose page did
// not change (no damage) costs no screenshot.
//
// The page is loaded in its own browser context; Open() returns once navigation has
// committed, and the page keeps loading while it is drawn, as a browser source does.
//
// One thread drives a LivePage's frames (a live worker, which begins the frames of its
// pages one after another, so one beginFrame is in flight per browser); Evaluate and
// Navigate may come from one other thread meanwhile (the show's control).
#ifndef PAGEREEL_CAPTURE_LIVE_PAGE_H_
#define PAGEREEL_CAPTURE_LIVE_PAGE_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "browser/browser.h"
#include "capture/image.h"

namespace pagereel::capture {

class PageSession;

struct LivePageOptions {
  std::string url;  // file://, http://, https:// or data:.
  int width = 1280;
  int height = 720;
  // A transparent page background and PNG screenshots (for overlays); else JPEG.
  bool alpha = false;
  int jpeg_quality = 85;
  // The longest any one call to the browser may take.
  std::chrono::milliseconds timeout{10'000};
  std::string name;  // For messages; empty: the URL.
};

struct LiveFrame {
  bool has_damage = false;
  // Present when the frame changed and the browser could read it back.
  std::optional<EncodedFrame> screenshot;
};

class LivePage {
 public:
  // Opens the page. A page that cannot be reached fails with kFailedPrecondition naming it;
  // a browser that went away with kUnavailable.
  static Result<std::unique_ptr<LivePage>> Open(browser::Browser& browser,
                                                const LivePageOptions& options);
  ~LivePage();  // Closes the target and its context (best effort).
  LivePage(const LivePage&) = delete;
  LivePage& operator=(const LivePage&) = delete;

  // Draws one frame at `frame_time` (CLOCK_MONOTONIC) with the show's `interval`, and reads
  // it back if it changed; `force_screenshot` asks for a picture even without a change (a
  // source's first). has_damage says whether the page changed (for a page that was
  // animating: whether its picture differs from the last one). kUnavailable when the browser died, kDeadlineExceeded when it hung.
  // REQUIRES: frame_time later than the last call's.
  // `timeout` (zero: the page's) bounds each beginFrame.
  Result<LiveFrame> BeginFrame(std::chrono::nanoseconds frame_time,
                               std::chrono::nanoseconds interval, bool force_screenshot = false,
                               std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Runs an empty script in the page, to learn whether its main thread still takes tasks
  // (a page stuck in a loop answers beginFrames from its compositor, but not this).
  // kDeadlineExceeded when it got no answer within `timeout`.
  Status Ping(std::chrono::milliseconds timeout);

  // The page's uncaught exceptions since the last call (at most the newest 16, with how
  // many there were in all), for the show's status and as-run log.
  struct Errors {
    std::vector<std::string> newest;
    int64_t count = 0;
  };
  Errors TakeErrors();

  // Evaluates `expression` in the page (promises awaited) and returns its value as JSON
  // text; an exception comes back as kFailedPrecondition with the page's message.
  // Waits at most `timeout` (zero: the page's).
  Result<std::string> Evaluate(const std::string& expression,
                               std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Loads `url` in place of the current document; empty: reloads it.
  Status Navigate(const std::string& url);

  // Whether the current document fired its load event.
  bool loaded() const;
  const std::string& url() const { return url_; }

 private:
  struct Shared;
  LivePage(browser::Browser& browser, const LivePageOptions& options);
  Status Start();
  Result<cdp::Message> Call(std::string_view method, std::string_view params = "{}");

  browser::Browser& browser_;
  const LivePageOptions options_;
  const std::string name_;
  std::string url_;
  std::unique_ptr<PageSession> session_;
  std::shared_ptr<Shared> shared_;
  std::chrono::nanoseconds last_frame_time_{0};
  bool animating_ = false;   // The last frame changed: draw and read back in one beginFrame.
  size_t last_digest_ = 0;   // Of the last picture read back.
};

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_LIVE_PAGE_H_
