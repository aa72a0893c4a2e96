// CaptureRequest: what a client asked of the capture service, read from the query string
// and the body of an HTTP request and checked against the service's limits. Every bad
// value is refused with a message that names the parameter and what it accepts.
#ifndef PAGEREEL_SERVE_REQUEST_H_
#define PAGEREEL_SERVE_REQUEST_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "capture/snapshot.h"
#include "serve/clip.h"

namespace pagereel::serve {

enum class Route { kScreenshot, kPdf, kGif, kClip };

// The route's name in logs and metrics: "screenshot", "pdf", "gif", "clip".
const char* RouteName(Route route);

// Upper bounds on what one request may make big; the operator may change them.
struct Limits {
  size_t max_body_bytes = 2 << 20;             // An HTML body, or a JSON object.
  int max_width = 3840;                         // Viewport CSS pixels.
  int max_height = 3840;
  double max_scale = 4;
  int64_t max_pixels = 3840LL * 2160 * 4;       // Of the image: width × height × scale².
  int max_pdf_pages = 100;
  // GIFs and clips: frames, seconds of page time, rate, and frames × width × height (720p
  // for 5 s at 30 fps; a GIF's frames wait on disk, 4 bytes a pixel, for its palette).
  int64_t max_clip_frames = 300;
  double max_clip_seconds = 60;
  int max_clip_fps = 60;
  int64_t max_clip_pixels = 1280LL * 720 * 150;
  // The most bytes of media one clip's sounds may fetch in all; a sound whose media would
  // pass it is left out of the clip, named (a clip's sound is mixed from memory).
  int64_t max_clip_media_bytes = int64_t{64} << 20;
  std::chrono::milliseconds default_timeout{30'000};
  std::chrono::milliseconds max_timeout{120'000};
};

struct CaptureRequest {
  Route route = Route::kScreenshot;
  capture::SnapshotOptions page;  // url or html, viewport, wait, timeout.
  capture::ScreenshotOptions screenshot;
  capture::PdfOptions pdf;
  ClipOptions clip;  // GIF and clip: format, rate, frames.
  // What the response's Content-Type is: "image/png", "application/pdf", "video/mp4"...
  std::string content_type;
  // For logs: the URL, or "html (N bytes)".
  std::string what;
};

// Reads a request of `route`: `target` is the request target ("/v1/screenshot?url=..."),
// `content_type` and `body` those of a POST (empty for GET). A POST body is JSON (an object
// with the same names as the query), a form, or the HTML to capture (text/html); query
// parameters and body fields may be mixed, and the body wins. kInvalidArgument names the
// bad parameter.
Result<CaptureRequest> ParseCaptureRequest(Route route, std::string_view target,
                                           std::string_view content_type, std::string_view body,
                                           const Limits& limits);

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_REQUEST_H_
