// MakeClip: a short film of a page (GIF, MP4 or WebM) for the capture service, made the way
// `pagereel render` makes films: capture::Page steps the page frame by frame on virtual
// time (so the film does not depend on how busy the machine is) and encode::FilmWriter
// writes it, in memory (a GIF keeps its frames in an unnamed file of the scratch folder
// between its two passes).
//
// Runs on the calling thread (a capture worker of the service, never an I/O thread):
// decoding, colour conversion, GIF quantization and encoding included.
#ifndef PAGEREEL_SERVE_CLIP_H_
#define PAGEREEL_SERVE_CLIP_H_

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "base/rational.h"
#include "base/status.h"
#include "browser/browser.h"
#include "capture/page.h"

namespace pagereel::serve {

enum class ClipFormat { kGif, kMp4, kWebm };

struct ClipOptions {
  ClipFormat format = ClipFormat::kGif;
  Rational fps{10, 1};
  // Frames to make: given by the client (frames, or duration × fps), else the page's
  // window.pagereel.duration × fps, else `default_seconds` × fps.
  std::optional<int64_t> frames;
  double default_seconds = 2;
  int64_t max_frames = 300;        // A page's declared duration beyond this is refused.
  int64_t max_frame_pixels = 0;    // frames × width × height; 0: no bound.
  int quality = 90;                // 1-100, as for render.
  bool transparent = false;        // WebM only (VP9 with alpha).
};

struct ClipReport {
  int64_t frames = 0;
  std::chrono::milliseconds load{0};     // Page load and readiness.
  std::chrono::milliseconds frames_time{0};  // Stepping the page and taking its frames.
  std::chrono::milliseconds encode{0};   // Decoding, conversion, encoding, Finish.
};

// The film's bytes. Fails with kDeadlineExceeded when `deadline` passes first, kCancelled
// when page.should_stop says so, and as capture::Page::Open does for a page that cannot load.
Result<std::string> MakeClip(browser::Browser& browser, const capture::PageOptions& page,
                             const ClipOptions& clip, const std::filesystem::path& scratch_dir,
                             std::chrono::steady_clock::time_point deadline, ClipReport* report);

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_CLIP_H_
