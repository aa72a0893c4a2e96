// MakeClip: a short film of a page (GIF, MP4 or WebM) for the capture service, made the way
// `pagereel render` makes films: capture::Page steps the page frame by frame on virtual
// time (so the film does not depend on how busy the machine is) and encode::FilmWriter
// writes it, in memory (a GIF keeps its frames in an unnamed file of the scratch folder
// between its two passes).
//
// An MP4 or WebM clip carries the page's sound as a film does (audio/README.md): what the
// page played is known once its last frame has run, so the pictures are written first and
// the sound is mixed and muxed beside them at a join (encode::JoinSegments, render's own
// join, with the clip as its one segment), AAC in MP4, Opus in WebM, 48 kHz stereo, exactly
// as long as the pictures. The media is fetched by the page's own browser context (so
// through the service's egress policy) into a folder of its own in the scratch folder,
// removed with the clip. A page that played no sound gets no audio track; a GIF never has
// one.
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
#include <vector>

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
  // MP4 and WebM: the page's sound, when it played any (kIfAny), or none (kNone,
  // audio=false: the media is not fetched).
  enum class Sound { kIfAny, kNone };
  Sound sound = Sound::kIfAny;
  // A sound the clip cannot carry (media refused, missing, over the cap or undecodable; a
  // MediaStream...) is listed in the report (kList), or fails the clip (kFail, strict=true).
  enum class LeftOut { kList, kFail };
  LeftOut left_out = LeftOut::kList;
  int64_t max_media_bytes = int64_t{64} << 20;  // Limits::max_clip_media_bytes.
};

struct ClipReport {
  int64_t frames = 0;
  std::chrono::milliseconds load{0};     // Page load and readiness.
  std::chrono::milliseconds frames_time{0};  // Stepping the page and taking its frames.
  std::chrono::milliseconds encode{0};   // Decoding, conversion, encoding, Finish.
  std::chrono::milliseconds sound{0};    // Fetching the media, mixing, encoding and muxing.
  // Whether the page's sound was looked for (an MP4 or WebM clip without audio=false).
  bool sound_asked = false;
  // What the clip's sound holds: "<audio src=a.wav> from frame 15 (0.500 s)", and what it
  // leaves out: "<audio src=b.wav> at frame 0 (0.000 s): could not fetch ...".
  std::vector<std::string> sounds;
  std::vector<std::string> sounds_left_out;
};

// The film's bytes. Fails with kDeadlineExceeded when `deadline` passes first, kCancelled
// when page.should_stop says so, as capture::Page::Open does for a page that cannot load, and
// with kFailedPrecondition naming the sounds a clip of LeftOut::kFail would leave out.
Result<std::string> MakeClip(browser::Browser& browser, const capture::PageOptions& page,
                             const ClipOptions& clip, const std::filesystem::path& scratch_dir,
                             std::chrono::steady_clock::time_point deadline, ClipReport* report);

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_CLIP_H_
