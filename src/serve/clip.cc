#include "serve/clip.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "encode/film_writer.h"

namespace pagereel::serve {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds Since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t);
}

encode::FilmKind KindOf(ClipFormat format) {
  switch (format) {
    case ClipFormat::kGif: return encode::FilmKind::kGif;
    case ClipFormat::kMp4: return encode::FilmKind::kMp4;
    case ClipFormat::kWebm: return encode::FilmKind::kWebm;
  }
  return encode::FilmKind::kGif;
}

// How many frames to make, from what the client gave and what the page declared.
Result<int64_t> FrameCount(const ClipOptions& clip, const capture::Page& page, int width,
                           int height) {
  int64_t frames = 0;
  if (clip.frames) {
    frames = *clip.frames;
  } else {
    double seconds = page.declared_duration().value_or(clip.default_seconds);
    // Checked as a double first: a duration such as 1e300 has more frames than an int64_t
    // holds, and the conversion would make a short clip of it.
    if (!std::isfinite(seconds) ||
        seconds * clip.fps.ToDouble() > static_cast<double>(clip.max_frames) + 1) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%g", seconds);
      return InvalidArgumentError(
          "duration: the page declares window.pagereel.duration = " + std::string(shown) +
          " s, more than this service makes (at most " + std::to_string(clip.max_frames) +
          " frames at " + clip.fps.ToString() + " fps); give duration or frames");
    }
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

}  // namespace

Result<std::string> MakeClip(browser::Browser& browser, const capture::PageOptions& page_options,
                             const ClipOptions& clip, const std::filesystem::path& scratch_dir,
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

  encode::FilmWriterOptions writer_options;
  writer_options.film.kind = KindOf(clip.format);
  writer_options.film.width = options.width;
  writer_options.film.height = options.height;
  writer_options.film.fps = clip.fps;
  writer_options.film.alpha = clip.transparent;
  writer_options.film.quality = clip.quality;
  writer_options.to = encode::WriteTo::kMemory;
  writer_options.scratch_dir = scratch_dir.string();
  PR_ASSIGN_OR_RETURN(std::unique_ptr<encode::FilmWriter> writer,
                      encode::FilmWriter::Open(writer_options));

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
    PR_RETURN_IF_ERROR(writer->Write(frame.screenshot()));
    r.encode += Since(encode_start);
    r.frames = i + 1;
  }
  page.reset();  // The browser context goes before the (possibly long) GIF palette pass.
  Clock::time_point finish_start = Clock::now();
  PR_RETURN_IF_ERROR(writer->Finish());
  r.encode += Since(finish_start);
  return writer->TakeBytes();
}

}  // namespace pagereel::serve
