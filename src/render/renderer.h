// Render(): a deterministic film of a web page, made of segments.
//
// The film is cut into segments (render/segments.h) fixed by the film alone. Each lane owns
// one browser process and one page and renders a contiguous block of segments; a segment is
// encoded on its own (a fresh encoder, so a closed GOP) into a work folder
// (render/work_dir.h) beside the output, with a record written once its file is complete.
// When every segment is there they are joined by stream copy into the output and the folder
// is removed. A render that was killed continues from the segments already finished; a
// shard (`shard_count` > 1) renders only its share and leaves the join to `JoinFilm`.
//
// A lane that starts a segment its page has not reached gets there by pre-roll:
// kExact (the default) runs and draws every frame before it without a screenshot, so the
// film is that of one lane for any page, by construction; kJump runs animation frames at
// most 300 ms apart (faster, right for clocks, CSS, Web Animations and timers, not for
// state a page builds per animation frame, timers that start animations, animated images
// or View Transitions); kAuto makes the first segment's following frame both ways, jumped
// and run, and jumps only if they are identical (a sample, not a proof: opt-in only).
//
// A lane whose browser dies relaunches it and retries from the first frame it had not
// delivered, up to max_attempts_per_segment times; then the render fails naming the segment.
// Render() blocks until the film is finished, failed or cancelled; finished segments stay in
// the work folder for the next run, and no output is left behind unless complete.
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
#include "encode/film.h"
#include "encode/sound.h"

namespace pagereel::render {

struct Progress {
  int64_t frames_done = 0;   // Including frames of segments finished by an earlier run.
  int64_t frames_total = 0;  // This run's share of the film.
  int64_t frames_resumed = 0;  // Frames that were already finished when this run began.
  std::chrono::duration<double> elapsed{0};
};

enum class PreRollMode { kExact, kJump, kAuto };

// The film's sound (audio/README.md). Each segment records what its page did with sound;
// the join mixes the film's track once from those records and the media they name.
enum class FilmSound {
  kIfAny,  // A page that played sound gets a track; a page that played none, no track.
  kNone,   // No track (--no-audio).
};
// A sound the film cannot carry (media that failed to fetch or decode, a MediaStream, an
// MSE player, a film kind without sound): listed in the stats, or the join fails (--strict).
enum class LeftOutSounds { kList, kFail };
struct SoundOptions {
  FilmSound sound = FilmSound::kIfAny;
  LeftOutSounds left_out = LeftOutSounds::kList;
  // kAuto: the film kind's own (encode::DefaultSoundCodec); GIF and image sequences carry
  // none, and any other codec for them is refused (encode::ChooseSoundCodec).
  encode::SoundCodec codec = encode::SoundCodec::kAuto;
};

struct RenderOptions {
  capture::PageOptions page;
  // Frame count; when empty, the page's window.pagereel.duration decides it.
  std::optional<int64_t> frames;
  int lanes = 1;
  // Frames per segment; 0: DefaultSegmentFrames. Part of what makes the film: the same
  // value gives the same segment files.
  int64_t segment_frames = 0;
  PreRollMode preroll = PreRollMode::kExact;
  // Stop the render when the page reports an error (an uncaught exception, a console
  // error, a file that failed to load) or opens a dialog, and fail the join when a sound
  // would be left out (sound.left_out = kFail); otherwise they are only counted in
  // RenderStats.
  bool strict = false;
  // The film: its file (or image sequence pattern), its kind (encode::FilmKindForPath of
  // it), quality 1-100 and x264 preset (empty: veryfast); size, rate and alpha are `page`'s.
  // How the browser hands frames over; empty: what the film needs
  // (encode::ScreenshotFormatFor). Render sets page.screenshots from it.
  std::optional<encode::ImageFormat> screenshots;
  std::string output;
  encode::FilmKind kind = encode::FilmKind::kMp4;
  int quality = 90;
  std::string preset;
  int max_attempts_per_segment = 3;
  SoundOptions sound;
  // Where segments are kept; empty: .NAME.pagereel beside the output.
  std::string work_dir;
  // Segments of a work folder made for another film are refused, unless this is set.
  bool restart = false;
  // Leave the segments in the work folder after joining them.
  bool keep_work_dir = false;
  // Render only shard `shard_index` of `shard_count` (contiguous shares of the segments)
  // into the work folder, without joining.
  int shard_index = 0;
  int shard_count = 1;
  browser::LaunchOptions launch;

  // Polled; set it (from a signal handler too) to stop the render.
  const std::atomic<bool>* cancel = nullptr;
  // Called after each frame is written (on an encoding thread, one at a time).
  std::function<void(const Progress&)> on_progress;
  // Notes worth telling the user (a resumed render, a retry after a browser crash).
  std::function<void(const std::string&)> on_note;
};

struct RenderStats {
  std::string output;    // Empty for a shard.
  std::string work_dir;  // Removed once the output is complete.
  int64_t frames = 0;    // In the film.
  int64_t frames_rendered = 0;  // By this run.
  int lanes = 0;
  int64_t segments = 0;          // In the film.
  int64_t segments_resumed = 0;  // Finished by an earlier run and kept.
  int64_t segments_rendered = 0;
  double wall_seconds = 0;
  double browser_seconds = 0;  // Summed over lanes: page loads, pre-roll and capture.
  double decode_seconds = 0;   // Summed over segment writers: decode and colour conversion.
  double encode_seconds = 0;   // Summed over segment writers.
  double join_seconds = 0;
  int64_t preroll_frames = 0;  // Frames run without screenshots to reach segment starts.
  double preroll_seconds = 0;  // Part of browser_seconds spent reaching segment starts.
  int64_t jumps = 0;           // Segment starts reached by jumping.
  // How segment starts were reached, for the summary: "exact", "jump", or what auto chose
  // and why.
  std::string preroll;
  // How the browser handed frames over: "PNG (exact)" or "JPEG q90".
  std::string screenshots;
  int64_t page_loads = 0;
  int retries = 0;
  // Frames the browser drew without running the page's animation frame, drawn again (a
  // loaded machine makes a few; the film does not change).
  int64_t redrawn_frames = 0;
  // What the page reported, once each (lanes load the same page, so they report the same
  // things): the first kMaxReportedMessages of them, and how many there were in all.
  std::vector<capture::PageMessage> page_messages;
  int64_t page_message_count = 0;
  // The film's sound: the sounds in it (their sources, as the page named them), and those
  // left out, each with its frame, film time and why (media that could not be fetched or
  // decoded, a MediaStream, an MSE player, a film kind that carries no sound). Empty for a
  // shard (its join mixes them).
  std::vector<std::string> sounds;
  std::vector<std::string> sounds_left_out;
};

inline constexpr size_t kMaxReportedMessages = 10;

Result<RenderStats> Render(const RenderOptions& options);

// The work folder `Render` uses for `output` when none is given: .NAME.pagereel beside it.
std::string DefaultWorkDir(const std::string& output);

struct JoinStats {
  std::string output;
  int64_t frames = 0;
  int64_t segments = 0;
  double seconds = 0;
  std::vector<std::string> sounds;           // As RenderStats has them.
  std::vector<std::string> sounds_left_out;
};

enum class AfterJoin { kKeep, kRemove };

// Joins the segments in `work_dir` into `output` (of the kind the segments were made for)
// by stream copy, then keeps or removes the work folder. Every segment must be there,
// whole, made for the same film: errors name the missing frame ranges and the files that
// are damaged. The film's sound is mixed from the segments' timelines as `sound` says; the
// timelines must agree where segments overlap (audio::Merge names the sound that does not).
// With sound.left_out = kFail, a sound that would be left out fails the join (no output;
// the work folder is kept, so the film can still be joined without it).
Result<JoinStats> JoinFilm(const std::string& work_dir, const std::string& output,
                           AfterJoin after, const SoundOptions& sound = {});

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_RENDERER_H_
