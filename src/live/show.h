// ShowSpec: everything a live show is made of, as the engine takes it: the picture format,
// the sources (pages, each on a worker browser, placed on the canvas), the outputs and the
// clock's settings. app/ builds one from a show file or from command-line flags; the
// engine checks it once more with ValidateShow before anything starts.
#ifndef PAGEREEL_LIVE_SHOW_H_
#define PAGEREEL_LIVE_SHOW_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "encode/stream.h"
#include "live/picture.h"

namespace pagereel::live {

struct SourceSpec {
  std::string id;
  std::string url;   // file://, http(s):// or data:.
  int worker = -1;   // Browser process; sources on one worker share its phase. -1: its own.
  int x = 0;         // Placement on the canvas; width/height 0: the whole canvas.
  int y = 0;
  int width = 0;
  int height = 0;
  double opacity = 1.0;
  // The gain of its page's sound (0 to kMaxVolume), times its opacity and fades.
  double volume = 1.0;
  bool visible = true;
  // A transparent page background (PNG readback) so lower layers show through; the first
  // layer is usually opaque.
  bool transparent = false;
  // The layer of the show's AMCP channel that names this source (CG 1-20 ...); -1: none.
  int amcp_layer = -1;
};

// What an output carries of the program's transparency. Every alpha that leaves pagereel
// carries straight (un-premultiplied) colour: ProRes 4444's and FFV1's alpha channels, and a
// keyer's fill.
enum class OutputAlpha {
  kAuto,        // kChannel for ProRes and FFV1 when the show's background is transparent;
                // kNone otherwise.
  kNone,        // The program as it looks over black.
  kChannel,     // An alpha channel: ProRes 4444 (yuva444p10le) or FFV1 (bgra).
  kFill,        // A keyer's fill alone: the colours, straight (H.264).
  kKey,         // A keyer's key alone: the alpha as grey luma, 16 to 235 (H.264).
  kKeyAndFill,  // Both in one container: video stream 0 the fill, stream 1 the key.
};

// The most a source's sound may be raised (12 dB).
inline constexpr double kMaxVolume = 4.0;

// What an output's sound track carries (docs/live.md, "Sound").
enum class OutputSound {
  kAuto,  // Opus in Matroska and WebM, AAC elsewhere; none when the show has no sound.
  kNone,  // No sound track.
};

struct SoundSpec {
  // The sources' sound, captured from their browsers, mixed and carried by every output;
  // off: the browsers are muted and the outputs carry pictures only.
  bool enabled = true;
};

struct OutputSpec {
  std::string id;
  encode::StreamSpec stream;  // Size, rate and timestamps are filled in by the engine.
  OutputAlpha alpha = OutputAlpha::kAuto;
  // Frames an output may hold before it drops the newest; 0: two seconds of frames.
  int queue_frames = 0;
  OutputSound sound = OutputSound::kAuto;
};

struct ClockSpec {
  std::chrono::nanoseconds late_threshold{std::chrono::microseconds(500)};
  std::optional<int> cpu;
  std::optional<int> fifo_priority;
  // What the scheduler will do to the clock thread on this host (autogroup, nice, FIFO), as
  // app/ found it; written to the as-run log at the start. Empty: not said.
  std::string scheduler_note;
  // Worker k begins its frames at phase bitreverse(k) of the period; off: all at phase 0.
  bool stagger = true;
};

struct ControlSpec {
  // HOST:PORT of the control and status server (HTTP); empty: none. Loopback by default.
  std::string listen = "127.0.0.1:8090";
  std::string token;  // When set, control commands need "Authorization: Bearer TOKEN".
};

struct AmcpSpec {
  // HOST:PORT of the AMCP server (CasparCG's protocol, amcp_server.h); empty: none.
  std::string listen;
  // When set, AMCP commands that change the show need "LOCK CHANNEL ACQUIRE TOKEN" first.
  std::string token;
  int channel = 1;        // The video channel number the show answers to.
  std::string templates;  // The folder CG ADD finds template names in; empty: URLs only.
};

struct ShowSpec {
  int width = 1280;
  int height = 720;
  Rational fps{25, 1};
  Rgba background{0, 0, 0, 255};
  std::vector<SourceSpec> sources;  // Bottom layer first.
  std::vector<OutputSpec> outputs;
  ClockSpec clock;
  ControlSpec control;
  AmcpSpec amcp;
  SoundSpec sound;
  std::string as_run_log;  // A file the as-run log is appended to; empty: none.
  // How long a source may take to load before the show starts without it.
  std::chrono::milliseconds source_timeout{15'000};
};

// Checks what the engine relies on: sizes, rate, unique ids, placements (each source at
// least partly on the program), worker numbers. Errors name the source or output and the
// setting.
Status ValidateShow(const ShowSpec& show);

// Whether `id` may name a source or an output: 1 to 64 letters, digits, '_', '-' and '.'
// (ids go into URL paths, metric labels and log lines as they are).
bool IsValidId(const std::string& id);

// The phase at which worker `worker` begins its frames, as a fraction of the period:
// `worker` with its binary digits reversed after the point (0, 1/2, 1/4, 3/4, 1/8, 5/8 ...),
// so any number of workers are spread as evenly as the first ones allow.
Rational StaggerPhase(int worker);

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_SHOW_H_
