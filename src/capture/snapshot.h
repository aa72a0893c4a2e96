// Snapshot: one page opened in its own browser context on an ordinary target (drawn on
// Chromium's own clock, real time), waited for, then captured once or more as an image
// or a PDF. The capture service's one-shot capture; animated captures (GIF, clips) go
// through Page instead, on virtual time.
//
// Waiting (WaitMode::kAuto): a page that signals is captured when it says so: it calls
// window.triggerCapture(), or sets window.pagereel = { ready: <promise> } and the promise
// settles. A page that says nothing is captured once it has settled: no request in flight,
// nothing left that it asked for (a timer due within the cap, an animation frame, an idle
// callback, a fetch() or XHR or the reading of its body, a scheduler task), no finite CSS
// or Web Animation running, no font loading, and no change (DOM, animation frame, a message
// to a MessagePort) for 50 ms; but at most 2.5 s after its network first went idle after
// the load event. wait_report() says which ("settled" or "cap") and, at the cap, what was
// left. A page finished at its load event is captured about 50 ms after it.
// A dialog (alert, confirm, prompt, beforeunload) is dismissed at once, as a user who
// closes it would: nobody is there to answer it, and it holds the page until answered.
//
// Not thread-safe: one thread drives a Snapshot. Many Snapshots may share a browser.
#ifndef PAGEREEL_CAPTURE_SNAPSHOT_H_
#define PAGEREEL_CAPTURE_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "browser/browser.h"
#include "browser/context.h"

namespace pagereel::capture {

class PageSession;

enum class WaitMode {
  kAuto,         // See above.
  kLoad,         // The load event.
  kNetworkIdle,  // The load event, then no request in flight for 500 ms.
  kQuiet,        // Network idle, then quiet for 200 ms, with no cap but the timeout.
  kFixed,        // The load event, then `fixed` of wall-clock time.
};

// Lets another thread stop a Snapshot at once, also while it waits for a page whose script
// holds its main thread (such a page answers no DevTools call, so polling should_stop
// between calls would wait out the call's timeout). Thread-safe.
class StopHandle {
 public:
  // Fails the capture's calls to its page now (or at once when it opens its page), so it
  // ends with kCancelled and closes its page.
  void Stop() EXCLUDES(mu_);
  bool stopped() const EXCLUDES(mu_);

 private:
  friend class Snapshot;
  // What stops the open page; nullptr once it is closing (it returns once no Stop() is
  // failing the page's calls).
  void Attach(std::function<void()> fail_calls) EXCLUDES(mu_);

  mutable Mutex mu_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::function<void()> fail_calls_ GUARDED_BY(mu_);
};

struct SnapshotOptions {
  std::string url;   // http(s), file or data. Ignored when `html` is set.
  std::string html;  // A document to capture instead of a URL.
  int width = 1280;
  int height = 720;
  double scale = 1.0;        // Device pixel ratio.
  bool transparent = false;  // No default white background (PNG and WebP keep alpha).
  WaitMode wait = WaitMode::kAuto;
  std::chrono::milliseconds fixed_wait{0};
  // The whole of opening and waiting, wall clock.
  std::chrono::milliseconds timeout{30'000};
  browser::ContextOptions context;
  // Polled while waiting; returning true stops the capture with kCancelled.
  std::function<bool()> should_stop;
  // Optional: stops the capture from another thread at once (and with kCancelled).
  std::shared_ptr<StopHandle> stop;
};

// How the wait ended, for logs: "trigger", "ready", "settled", "quiet", "cap", "load",
// "networkidle", "fixed"; and how long loading and waiting took.
struct WaitReport {
  std::string ended_by;
  std::string pending;  // At "cap": what the page still had to do ("2 timers, fonts").
  std::chrono::milliseconds load{0};
  std::chrono::milliseconds wait{0};
};

enum class ImageType { kPng, kJpeg, kWebp };

struct ScreenshotOptions {
  ImageType type = ImageType::kPng;
  int quality = 80;  // JPEG and WebP.
  bool full_page = false;
  std::string selector;  // Clip to the first element matching this CSS selector.
  // The most pixels of the image (0: no limit). A full page or an element that would make
  // more is cut at the bottom (and at the right, should one row of it be more).
  int64_t max_pixels = 0;
};

struct PdfOptions {
  double paper_width_in = 8.27;  // A4.
  double paper_height_in = 11.69;
  double margin_top_in = 0.4;
  double margin_bottom_in = 0.4;
  double margin_left_in = 0.4;
  double margin_right_in = 0.4;
  bool landscape = false;
  bool print_background = true;
  std::string header_template;  // Chromium's templates (classes date, title, url, pageNumber, totalPages).
  std::string footer_template;
  std::string page_ranges;      // "1-3, 5"; empty: all.
};

// A data: URL that holds `html` (base64, UTF-8), for pages given as a document.
std::string HtmlDataUrl(const std::string& html);

class Snapshot {
 public:
  // Opens the page in a fresh context and waits for it (see above). Fails with
  // kFailedPrecondition when the page cannot be loaded (its HTTP status or network error
  // is named), kDeadlineExceeded after `timeout`, kUnavailable when the browser or the
  // page's renderer crashed, kCancelled when should_stop said so.
  static Result<std::unique_ptr<Snapshot>> Open(browser::Browser& browser,
                                                const SnapshotOptions& options);

  ~Snapshot();  // Closes its context.
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // The image's bytes, in the asked-for type. kInvalidArgument when `selector` is not a
  // valid selector, kNotFound when it matches nothing visible. kUnavailable, with
  // screenshot_stuck() true, when Chromium answered the page's other calls but not the
  // screenshot within a few seconds: a target in that state was never seen to answer one
  // again, so the caller may take the page again in a fresh Snapshot.
  Result<std::string> Screenshot(const ScreenshotOptions& options);
  bool screenshot_stuck() const { return screenshot_stuck_; }
  // The PDF's bytes. kInvalidArgument for page ranges the document does not have.
  Result<std::string> Pdf(const PdfOptions& options);

  const WaitReport& wait_report() const { return report_; }
  // The main document's HTTP status (0 for data:, file: and documents given as html).
  int http_status() const;

 private:
  struct Shared;

  Snapshot(browser::Browser& browser, const SnapshotOptions& options);
  // Whether a page's triggerCapture() or settled ready promise ends a wait.
  enum class PageSignals { kEndTheWait, kIgnored };

  Status Prepare();
  Status Load();
  Status Wait();
  Status WaitNetworkIdle(std::chrono::steady_clock::time_point deadline,
                         std::chrono::milliseconds idle);
  Status WaitQuiet(std::chrono::milliseconds cap, std::chrono::steady_clock::time_point deadline);
  // `asked`: the page was already asked to settle (by Wait()), by then; the cap is 2.5 s
  // after that.
  Status WaitSettled(std::chrono::steady_clock::time_point deadline,
                     std::optional<std::chrono::steady_clock::time_point> asked);
  // Evaluates `expression`, which answers through the binding with "settle:<answer>", and
  // waits for the answer.
  Status AskPage(const std::string& expression, std::chrono::steady_clock::time_point deadline,
                 const std::string& waiting_for);
  Status SleepUntil(std::chrono::steady_clock::time_point until,
                    std::chrono::steady_clock::time_point deadline, const std::string& waiting_for);
  // Waits until `done` (called with shared_->mu held) or, unless `signals` says otherwise,
  // the page signalled; fails as TimedOut(waiting_for) at `deadline`.
  Status WaitFor(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline,
                 const std::string& waiting_for, PageSignals signals = PageSignals::kEndTheWait);
  // kDeadlineExceeded in the page's terms: its main thread was busy (it answers no call),
  // or the requests still in flight, or `waiting_for` and the work the page still had.
  Status TimedOut(const std::string& waiting_for);
  Result<cdp::Message> Call(std::string_view method, std::string_view params = "{}");
  // Call() for several commands sent at once (PageSession::CallAll): one round trip.
  Result<std::vector<cdp::Message>> CallAll(const std::vector<cdp::Command>& commands);
  std::string PageName() const;

  browser::Browser& browser_;
  const SnapshotOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<PageSession> session_;
  std::shared_ptr<Shared> shared_;
  WaitReport report_;
  bool screenshot_stuck_ = false;
};

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_SNAPSHOT_H_
