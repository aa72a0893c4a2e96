// Page: one web page in its own browser context on a begin-frame target, stepped frame by
// frame on virtual time.
//
// Frame n presents film time t(n) (FrameTimeMillis: the first whole millisecond after
// n * den / num seconds) through every clock a page can read: CSS animations and
// transitions, Web Animations, SVG animation, requestAnimationFrame timestamps,
// performance.now(), Date, document.timeline and timers, in the page and in its frames.
// Each frame runs exactly one requestAnimationFrame turn (below 3.3 frames per second,
// extra turns run between frames so no two are more than 300 ms apart). Frames are
// produced in order; frames that are skipped are still run (without a screenshot), so a
// page that reaches frame n holds the state a page that ran from frame 0 would hold.
// docs/page-contract.md says what a page may rely on.
//
// The page loads with virtual time held still, so the order in which its files arrive
// cannot move its clocks; time passes before frame 0 only while the page waits on its own
// timers to become ready.
//
// Not thread-safe: one thread drives a Page. Pages on one browser may be driven from
// several threads: Browser::BeginFrame lets one beginFrame run at a time (two in flight
// crash Chromium's GPU process).
#ifndef PAGEREEL_CAPTURE_PAGE_H_
#define PAGEREEL_CAPTURE_PAGE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audio/media_store.h"
#include "audio/timeline.h"
#include "base/rational.h"
#include "base/status.h"
#include "browser/browser.h"
#include "browser/context.h"
#include "capture/image.h"
#include "capture/page_sound.h"
#include "capture/web_audio.h"

namespace pagereel::capture {

class PageSession;

struct PageOptions {
  std::string url;  // file://, http://, https:// or data:.
  // Pixels of each frame. The page is laid out at width/scale x height/scale CSS pixels.
  int width = 1280;
  int height = 720;
  // Device pixels per CSS pixel: 0.5 draws a 1920x1080 layout into a 960x540 frame.
  double scale = 1;
  Rational fps{30, 1};
  // Transparent page background (screenshots are then PNG whatever `screenshots` says:
  // JPEG cannot carry alpha).
  bool alpha = false;
  // How the browser hands frames over: kPng is exact; kJpeg, at jpeg_quality, is quicker
  // to take and decode but not the pixels the page drew. encode::ScreenshotFormatFor says
  // which a film needs.
  encode::ImageFormat screenshots = encode::ImageFormat::kJpeg;
  int jpeg_quality = 90;
  // How long (wall clock) to wait for the page to load and be ready, and for any single
  // frame; also the most page time the page may spend getting ready.
  std::chrono::milliseconds timeout{30'000};
  // Date.now() at frame 0: fixed, so films do not depend on the day they were made.
  // 2026-01-01T00:00:00Z.
  int64_t epoch_ms = 1'767'225'600'000;
  // What the page is told about the machine it runs on, so a film does not depend on the
  // host (IANA time zone, BCP 47 locale, navigator.hardwareConcurrency and deviceMemory).
  std::string timezone = "UTC";
  std::string locale = "en-US";
  int hardware_concurrency = 4;
  int device_memory_gb = 8;
  // Polled while the page loads and between pre-roll frames; when it returns true, Open or
  // PreRoll stops with kCancelled (a long pre-roll must not hold up a render that has
  // already failed or been stopped, nor a capture whose client has left).
  std::function<bool()> should_stop;
  // Called on the page's thread for each frame the browser drew without running the page's
  // animation frame, which was drawn again (a loaded machine makes a few; the film is
  // unchanged by them, but a render says how many).
  std::function<void()> on_redrawn_frame;
  // The page's browser context (a proxy for its requests, for the capture service).
  browser::ContextOptions context;
  // What messages call the page; empty: its URL (a data: URL cut short).
  std::string name;
  // Whether the page's shared workers run on film time as its dedicated workers do.
  // kAttach sets a browser-wide auto-attach for shared workers, which stops every shared
  // worker the browser starts, of any context, until the page of its context lets it run:
  // only for a browser whose pages all ask for it (render, with a browser per lane). kLeave
  // (serve, whose browsers hold many captures) leaves them on the browser's own clocks.
  enum class SharedWorkers { kLeave, kAttach };
  SharedWorkers shared_workers = SharedWorkers::kLeave;
  // The most bytes the media of the page's sounds may have in all (Sound() fetches each URL
  // once, through the page's context): a sound whose media would pass it is left out,
  // named. 0: no total, each sound's media up to kMaxMediaBytes (render, whose media waits
  // on disk). Serve's clips set it: their sound is mixed from memory, per request.
  int64_t max_media_bytes = 0;
};

// Something the page reported that the user should hear about: an uncaught exception, a
// console error, a file that failed to load, a video that cannot follow the film, or a
// dialog it opened (alert, confirm, prompt, beforeunload: each is dismissed at once, since a
// film has nobody to answer it; `text` says which and what it said).
struct PageMessage {
  enum class Kind { kException, kConsoleError, kLoadError, kVideo, kDialog, kWebSocket };
  Kind kind = Kind::kConsoleError;
  std::string text;
  std::string source;  // "url:line", when the browser said where.
  int64_t frame = -1;  // The frame being made when it happened; -1 while loading.
};

class Page {
 public:
  // Opens `options.url` in a fresh browser context, waits for it to load, for its fonts
  // and for window.pagereel.ready. Frame 0 is next. A page that cannot be loaded (a
  // network error, an HTTP error status) fails with kFailedPrecondition; one that does not
  // load in time with kDeadlineExceeded; a browser or renderer crash with kUnavailable.
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

  // Runs and draws frames [next_frame(), index) without screenshots: afterwards the page,
  // its own rAF-driven state and the compositor's (animated images, View Transitions,
  // raster settings) are exactly as they would be had their screenshots been taken.
  Status PreRoll(int64_t index);

  // Reaches frame `index` without running every frame before it: frame 0 is drawn, then
  // the page runs animation frames at most 300 ms of film time apart up to the frame
  // before `index`, which is drawn. Clocks, timers, CSS and Web Animations arrive where a
  // page that ran every frame would be; state a page accumulates per animation frame, and
  // libraries that date things from their last tick, may not (the renderer's --preroll
  // auto checks one frame both ways before trusting it).
  Status JumpTo(int64_t index);

  // Whether JumpTo() brought this page past frames it did not run.
  bool jumped() const { return jumped_; }

  // Every URL the page (and its frames) asked for so far.
  std::vector<std::string> requested_urls() const;

  // What the page reported since the last call (at most the first 100 of them).
  std::vector<PageMessage> TakeMessages();

  // What the page did with sound from frame 0 to next_frame()'s time (audio/timeline.h),
  // the media its sounds play fetched through the page's own browser context into `media`
  // (once per URL; media that cannot be fetched leaves its sound out, in left_out).
  //
  // Its AudioContexts are rendered before each frame up to that frame's time, so the sound
  // of the last frame run is rendered by the next. kFilmEnds: no frame follows, and they are
  // first rendered to next_frame()'s time (with the graph as the page left it at its last
  // frame); the page then runs no more frames. kMoreFrames: the next frame's run renders it.
  enum class SoundEnd { kMoreFrames, kFilmEnds };
  Result<audio::Timeline> Sound(const audio::MediaStore& media, SoundEnd end);

 private:
  struct Shared;  // State the DevTools reader thread writes (events).
  enum class Draw { kNo, kYes };

  Page(browser::Browser& browser, const PageOptions& options);
  Status OpenSession();
  Status Emulate();
  Status Load();
  Status WaitUntilReady();
  Status ForgetWorkerScripts();  // Takes shared_->mu.
  // Brings the page's shared workers onto film time (PageOptions::shared_workers).
  Status AttachSharedWorkers();
  Status Start();
  Status ReadContract();
  // The injected script, knowing frame 0's whole-ms virtual time once it is known.
  std::string PageScript(std::optional<int64_t> shift_ms) const;

  // Grants the page virtual time up to `virtual_us`, its workers' timers first.
  Status AdvanceTo(int64_t virtual_us);
  Status AdvanceWorkers(int64_t virtual_us);
  // Waits, with the page's tasks running and its time held, until every response body the
  // page reads (r.json() and the like) and every WebAssembly compile it started has come.
  Status AwaitBodies();
  // Waits, likewise, until every message between the page's documents and their dedicated
  // workers has been handled (page_script.js, worker_script.js).
  Status AwaitWorkerTraffic();
  // Lets the page's tasks run with its time held until `done` (called with shared_->mu
  // held) is true; fails naming `what` after the timeout.
  // One grant of page time, to `virtual_us`, and the waits after it (AdvanceTo makes one
  // or more).
  Status AdvanceStep(int64_t virtual_us);
  // An evaluation in the page: it runs after the page's tasks in progress, so what they
  // told Page has come when it answers.
  Status RoundTrip();
  Status HoldTimeUntil(const std::function<bool()>& done, std::string_view what);
  // Waits until the page's documents have received `pictures` canvas pictures from their
  // workers in all (worker_script.js sends them at the end of each advance).
  Status AwaitWorkerPictures(int64_t pictures);
  // Seeks the page's videos to the frame's time and renders its AudioContexts up to it.
  Status SyncVideos();
  // Evaluates `expression` (a promise of "N:fault": how many videos do not show their
  // picture yet, and why an AudioContext could not be rendered, '' when all were) in each
  // document with videos or Web Audio, with the page's tasks running; then waits for the
  // pictures of the documents with N > 0 (AwaitVideoPictures).
  Status SyncDocuments(const std::string& expression);
  Status AwaitVideoPictures(std::vector<int64_t> contexts);
  Status StepFrame(int64_t index, Draw draw, EncodedFrame* screenshot);
  Status BeginFrame(int64_t film_ms, Draw draw, EncodedFrame* screenshot, int64_t index);
  // One beginFrame with `params`, retried until the browser sends the screenshot asked for.
  Status SendBeginFrame(const std::string& params, EncodedFrame* screenshot, int64_t index);
  // One beginFrame. One that got no answer while the page's script still answers is the
  // browser's hang, not the page's: kUnavailable, which a render retries on a fresh browser.
  Result<cdp::Message> BeginFrameOnce(const std::string& params, int64_t index);
  // The page's count of animation frames once it reaches `expected` (or after a wait,
  // whatever it is), and the film time of the last.
  struct TickReport {
    int64_t count = 0;
    int64_t ms = -1;
    bool leaving = false;  // The document is going away (or did not answer).
  };
  Result<TickReport> AwaitTick(int64_t expected);
  Status NavigatedAway(int64_t index) const;  // Takes shared_->mu.
  // Waits for `event` on `waiter`, noticing meanwhile a page that stopped or is no longer
  // wanted; `on_timeout` says why it did not come.
  Status WaitFor(std::string_view event, cdp::EventWaiter& waiter,
                 const std::function<Status()>& on_timeout);
  Result<cdp::Message> Call(std::string_view method, std::string_view params = "{}");
  Result<cdp::Message> Evaluate(const std::string& expression, bool await_promise = false);
  // The page's own reasons to stop (it closed itself or navigated away), which its session
  // asks after its own (a crashed renderer, a detached target).
  Status CheckDocument() const;
  bool Stopped() const { return options_.should_stop && options_.should_stop(); }
  encode::ImageFormat screenshot_format() const {
    return options_.alpha ? encode::ImageFormat::kPng : options_.screenshots;
  }
  // A file the page waits for, as messages name it (the page's own URL may be a data: URL).
  std::string FileName(const std::string& url) const;
  std::string Where() const;

  // Constant after Open().
  browser::Browser& browser_;
  const PageOptions options_;
  const std::string name_;  // For messages.
  std::unique_ptr<PageSession> session_;
  int64_t ticks_base_us_ = 0;    // virtualTimeTicksBase: monotonic time at virtual time 0.
  int64_t origin_us_ = 0;        // Virtual time of frame 0 (always a whole ms plus 500 us).
  std::optional<double> declared_duration_;
  bool has_seek_ = false;

  int64_t virtual_us_ = 0;    // Virtual time elapsed since the page was created.
  int64_t next_frame_ = 0;
  int64_t last_tick_ms_ = 0;  // Film time of the last animation frame run.
  int64_t ticks_run_ = 0;     // Animation frames run since frame 0.
  // Whether the page tells the end of each turn of animation frames (AdvanceTo); false
  // once it did not, and then a round trip to the page stands in for it.
  bool turns_told_ = true;
  bool jumped_ = false;
  bool gave_up_on_video_pictures_ = false;  // AwaitVideoPictures timed out once.
  bool film_ended_ = false;  // Sound(kFilmEnds) rendered its sound past its last frame.
  MediaFetched media_;  // The media of the page's sounds, by URL (Sound()).
  int64_t media_bytes_ = 0;  // Their bytes, in all (PageOptions::max_media_bytes).
  WebAudioTrack web_audio_;  // What its AudioContexts rendered so far (Sound()).
  std::shared_ptr<Shared> shared_;
};

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_PAGE_H_
