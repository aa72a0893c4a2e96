// Render(): a deterministic film of a web page.
//
// The film is cut into fixed slices (render/slices.h) that lanes take lowest first. Each
// lane owns one browser process and one page; a lane that starts ahead runs the frames it
// skips without screenshots (capture::Page::PreRoll), so every frame is produced by a page
// in exactly the state a page running from frame 0 would be in, and the film is identical
// whatever the lane count.
// Screenshots pass through a bounded reorder window (render/frame_window.h) to decode
// workers and to the encoder, which runs on the calling thread.
//
// A lane whose browser dies relaunches it and retries from the first frame it had not
// delivered, up to max_attempts_per_slice times; then the render fails naming the slice.
// Render() blocks until the film is finished, failed or cancelled; on failure or cancel no
// output is left behind.
#ifndef PAGEREEL_RENDER_RENDERER_H_
#define PAGEREEL_RENDER_RENDERER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "browser/browser.h"
#include "capture/page.h"
#include "encode/encoder.h"

namespace pagereel::render {

struct Progress {
  int64_t frames_done = 0;
  int64_t frames_total = 0;
  std::chrono::duration<double> elapsed{0};
};

struct RenderOptions {
  capture::PageOptions page;
  // Frame count; when empty, the page's window.pagereel.duration decides it.
  std::optional<int64_t> frames;
  int lanes = 1;
  int64_t slice_frames = 60;
  // Stop the render when the page reports an error (an uncaught exception, a console
  // error, a file that failed to load); otherwise they are only counted in RenderStats.
  bool strict = false;
  // Path and quality; size, rate and alpha are taken from `page`.
  encode::EncoderOptions encoder;
  int max_attempts_per_slice = 3;
  int decode_threads = 2;
  // Screenshots held between lanes and the encoder; 0 picks from lanes, slice and size.
  int64_t window_frames = 0;
  browser::LaunchOptions launch;

  // Polled; set it (from a signal handler too) to stop the render.
  const std::atomic<bool>* cancel = nullptr;
  // Called on the encoding thread after each frame is written.
  std::function<void(const Progress&)> on_progress;
  // Notes worth telling the user (a lane's retry after a browser crash).
  std::function<void(const std::string&)> on_note;
  // Test hook, called on a lane's thread after each frame it captured.
  std::function<void(int lane, int64_t frame, browser::Browser& browser)> after_frame;
};

struct RenderStats {
  std::string output;
  int64_t frames = 0;
  int lanes = 0;
  double wall_seconds = 0;
  double browser_seconds = 0;  // Summed over lanes: page loads, pre-roll and capture.
  double decode_seconds = 0;   // Summed over decode workers: decode and colour conversion.
  double encode_seconds = 0;   // The encoder thread.
  int64_t preroll_frames = 0;  // Frames run without screenshots to bring lanes forward.
  double preroll_seconds = 0;  // Part of browser_seconds spent on those frames.
  int64_t page_loads = 0;
  int retries = 0;
  int64_t peak_window_frames = 0;
  // What the page reported, once each (lanes load the same page, so they report the same
  // things): the first kMaxReportedMessages of them, and how many there were in all.
  std::vector<capture::PageMessage> page_messages;
  int64_t page_message_count = 0;
};

inline constexpr size_t kMaxReportedMessages = 10;

Result<RenderStats> Render(const RenderOptions& options);

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_RENDERER_H_
