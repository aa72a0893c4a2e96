#include "serve/clip.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>

#include "capture/image.h"
#include "encode/encoder.h"

namespace pagereel::serve {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds Since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t);
}

// Per ClipFormat, in its order: the file's extension (which picks the encoder) and the
// answer's Content-Type.
struct FormatNames {
  const char* extension;
  const char* content_type;
};
constexpr FormatNames kFormats[] = {
    {".gif", "image/gif"}, {".mp4", "video/mp4"}, {".webm", "video/webm"}};

const FormatNames& NamesOf(ClipFormat format) { return kFormats[static_cast<int>(format)]; }

// How many frames to make, from what the client gave and what the page declared.
Result<int64_t> FrameCount(const ClipOptions& clip, const capture::Page& page, int width,
                           int height) {
  int64_t frames = 0;
  if (clip.frames) {
    frames = *clip.frames;
  } else {
    double seconds = page.declared_duration().value_or(clip.default_seconds);
    frames = FramesInDuration(seconds, clip.fps);
    if (frames > clip.max_frames) {
      return InvalidArgumentError(
          "duration: the page declares window.pagereel.duration = " + std::to_string(seconds) +
          " s, " + std::to_string(frames) + " frames at " + clip.fps.ToString() +
          " fps, more than the " + std::to_string(clip.max_frames) +
          " this service makes; give duration or frames");
    }
  }
  if (clip.max_frame_pixels > 0 &&
      static_cast<double>(frames) * width * height > static_cast<double>(clip.max_frame_pixels)) {
    return InvalidArgumentError("frames: " + std::to_string(frames) + " frames of " +
                                std::to_string(width) + "x" + std::to_string(height) +
                                " are more pixels than this service encodes in one clip (" +
                                std::to_string(clip.max_frame_pixels) +
                                "); ask for fewer frames or a smaller size");
  }
  return std::max<int64_t>(frames, 1);
}

Result<std::string> ReadAndRemove(const std::string& path) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return InternalError("cannot read the finished clip " + path);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return InternalError("cannot read the finished clip " + path);
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return bytes;
}

}  // namespace

const char* ClipContentType(ClipFormat format) { return NamesOf(format).content_type; }

Result<std::string> MakeClip(browser::Browser& browser, const capture::PageOptions& page_options,
                             const ClipOptions& clip, const std::filesystem::path& work_file,
                             Clock::time_point deadline, ClipReport* report) {
  ClipReport local;
  ClipReport& r = report != nullptr ? *report : local;
  capture::PageOptions options = page_options;
  options.fps = clip.fps;
  options.alpha = clip.transparent;

  Clock::time_point load_start = Clock::now();
  PR_ASSIGN_OR_RETURN(std::unique_ptr<capture::Page> page, capture::Page::Open(browser, options));
  r.load = Since(load_start);
  PR_ASSIGN_OR_RETURN(int64_t frames, FrameCount(clip, *page, options.width, options.height));

  std::filesystem::path path = work_file;
  path.replace_extension(NamesOf(clip.format).extension);
  encode::EncoderOptions encoder_options;
  encoder_options.path = path.string();
  encoder_options.width = options.width;
  encoder_options.height = options.height;
  encoder_options.fps = clip.fps;
  encoder_options.alpha = clip.transparent;
  encoder_options.quality = clip.quality;
  PR_ASSIGN_OR_RETURN(std::unique_ptr<encode::Encoder> encoder,
                      encode::Encoder::Open(encoder_options));

  for (int64_t i = 0; i < frames; ++i) {
    if (Clock::now() >= deadline) {
      return DeadlineExceededError(
          "the clip was not finished in time: " +
          std::to_string(i) + " of " + std::to_string(frames) +
          " frames were made; ask for fewer frames, a smaller size or a longer timeout");
    }
    if (options.should_stop && options.should_stop()) {
      return CancelledError("the clip was no longer wanted");
    }
    Clock::time_point frame_start = Clock::now();
    PR_ASSIGN_OR_RETURN(capture::EncodedFrame frame, page->Capture(i));
    Clock::time_point encode_start = Clock::now();
    r.frames_time += std::chrono::duration_cast<std::chrono::milliseconds>(encode_start - frame_start);
    PR_ASSIGN_OR_RETURN(capture::Image image, capture::DecodeFrame(frame));
    PR_RETURN_IF_ERROR(encoder->Write({.data = image.rgba.data(),
                                       .width = image.width,
                                       .height = image.height,
                                       .stride = image.width * 4}));
    r.encode += Since(encode_start);
    r.frames = i + 1;
  }
  page.reset();  // The browser context goes before the (possibly long) GIF palette pass.
  Clock::time_point finish_start = Clock::now();
  PR_RETURN_IF_ERROR(encoder->Finish());
  r.encode += Since(finish_start);
  return ReadAndRemove(encoder->final_path());
}

}  // namespace pagereel::serve
