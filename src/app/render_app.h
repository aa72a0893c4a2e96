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
  double timeout_seconds = 30;
  ProgressStyle progress = ProgressStyle::kAuto;
  std::string browser;  // Empty: the default chrome-headless-shell.
  int64_t slice_frames = 60;
  std::string timezone = "UTC";
  std::string locale = "en-US";
  bool strict = false;     // Page errors fail the render.
  bool overwrite = false;  // An image sequence may replace one already in place.
};

// Runs the render and returns the process exit code: 0 done, 1 the render failed,
// 2 bad input, 130 interrupted. Messages go to stderr.
int RunRender(const RenderRequest& request);

// Pieces exposed for tests.
Result<std::string> InputToUrl(const std::string& input);
Result<std::pair<int, int>> ParseSize(const std::string& text);
// Lanes this machine can hold for a page of this size, given `cores` and `available`
// bytes of memory.
int DefaultLanes(int width, int height, int cores, int64_t available_bytes);

}  // namespace pagereel::app

#endif  // PAGEREEL_APP_RENDER_APP_H_
