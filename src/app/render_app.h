// `pagereel render`: turns the command line's words into a render, shows progress, and
// prints the summary. The only place that knows both the user's terms (paths, "1280x720",
// "29.97") and the modules' types.
#ifndef PAGEREEL_APP_RENDER_APP_H_
#define PAGEREEL_APP_RENDER_APP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace pagereel::app {

enum class ProgressStyle { kAuto, kBar, kPlain, kJson, kNone };

struct RenderRequest {
  std::string input;
  std::string output;
  std::string fps = "30";
  std::optional<double> duration_seconds;
  std::optional<int64_t> frames;
  std::string size = "1280x720";
  std::optional<int> lanes;
  bool alpha = false;
  int quality = 90;
  std::string screenshots = "auto";  // auto, png or jpeg: how the browser hands frames over.
  double timeout_seconds = 30;
  ProgressStyle progress = ProgressStyle::kAuto;
  std::string browser;  // Empty: the default chrome-headless-shell.
  std::optional<int64_t> segment_frames;  // Empty: from the film's length.
  std::string preroll = "exact";           // exact, jump or auto.
  std::string work_dir;                    // Empty: .NAME.pagereel beside the output.
  std::string shard;                       // "I/N": render only shard I of N; empty: all.
  bool restart = false;                    // Discard segments made for another film.
  bool draft = false;                      // Half size, jump pre-roll, fastest encoder.
  bool keep_work_dir = false;              // Keep the segments after joining them.
  std::string timezone = "UTC";
  std::string locale = "en-US";
  bool strict = false;     // Page errors fail the render.
  bool overwrite = false;  // An image sequence may replace one already in place.
  bool no_audio = false;   // No sound track, even for a page with sound.
  std::string audio_codec = "auto";  // encode::SoundCodecNamed's names.
};

// Runs the render and returns the process exit code: 0 done, 1 the render failed,
// 2 bad input, 130 interrupted. Messages go to stderr.
int RunRender(const RenderRequest& request);

// `pagereel concat DIR -o FILM`: joins the segments shards left in a work folder.
struct ConcatRequest {
  std::string work_dir;
  std::string output;
  bool keep_work_dir = false;
  ProgressStyle progress = ProgressStyle::kAuto;
  bool no_audio = false;
  std::string audio_codec = "auto";
  bool strict = false;  // Fail, writing nothing, when a sound would be left out.
};
int RunConcat(const ConcatRequest& request);

// "I/N" -> {I, N}, with 0 <= I < N.
Result<std::pair<int, int>> ParseShard(const std::string& text);

// Pieces exposed for tests.
Result<std::string> InputToUrl(const std::string& input);
Result<std::pair<int, int>> ParseSize(const std::string& text);
// Lanes this machine can hold for a page of this size, given `cores` and `available`
// bytes of memory.
int DefaultLanes(int width, int height, int cores, int64_t available_bytes);

}  // namespace pagereel::app

#endif  // PAGEREEL_APP_RENDER_APP_H_
