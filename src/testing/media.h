// Test helper: decodes a written film with libavformat/libavcodec and gives back what a
// test checks: stream facts, frame timestamps, and each frame's pixels as RGB.
#ifndef PAGEREEL_TESTING_MEDIA_H_
#define PAGEREEL_TESTING_MEDIA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pagereel::testing {

struct DecodedVideo {
  std::string codec;        // "h264", "prores", "vp9", ...
  std::string pixel_format; // As the stream declares it, e.g. "yuv420p".
  std::string color_primaries;
  std::string color_space;
  int width = 0;
  int height = 0;
  int64_t rate_num = 0;     // Stream frame rate.
  int64_t rate_den = 1;
  bool has_alpha = false;   // Alpha plane decoded (VP9 alpha lives in side data; see .cc).
  std::vector<double> pts_seconds;
  std::vector<std::vector<uint8_t>> rgb;  // Packed RGB24 per frame (if asked for).
  std::vector<std::vector<uint8_t>> alpha;  // The alpha plane per frame (keep_alpha).
};

// video_stream: the nth video stream (0, 1 ...); -1: libav's best. keep_alpha: frames of a
// format with alpha are converted through RGBA and their alpha planes kept too.
Result<DecodedVideo> DecodeVideo(const std::string& path, bool keep_pixels = true,
                                 int video_stream = -1, bool keep_alpha = false);

// A film's sound: its codec, and every sample decoded (the decoder drops what the container
// says to skip: AAC priming through an MP4 edit list, Opus pre-skip), as interleaved float.
struct DecodedAudio {
  std::string codec;        // "aac", "opus", "flac", "pcm_s24le", ...
  int sample_rate = 0;
  int channels = 0;
  // The stream's length as the container states it, in samples; -1 when it states none.
  int64_t stated_samples = -1;
  std::vector<float> samples;
  int64_t length() const { return channels == 0 ? 0 : static_cast<int64_t>(samples.size()) / channels; }
};

// kNotFound when the file has no audio stream.
Result<DecodedAudio> DecodeAudio(const std::string& path);

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_MEDIA_H_
