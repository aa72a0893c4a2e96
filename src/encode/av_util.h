// Internal to encode/: ownership and error helpers for FFmpeg objects, and AvOutput, the
// codec + muxer + file part that every libav-based writer shares. Keeps libav* headers
// out of encoder.h. One thread at a time.
#ifndef PAGEREEL_ENCODE_AV_UTIL_H_
#define PAGEREEL_ENCODE_AV_UTIL_H_

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace pagereel::encode {

// FFmpeg's error codes as a Status, converted once here (ENOSPC is kResourceExhausted).
Status AvError(std::string_view context, int err);

// A hidden temporary name beside `target`, keeping its extension (muxers check it).
std::filesystem::path PartialPath(const std::filesystem::path& target);

Status RenameIntoPlace(const std::filesystem::path& from, const std::filesystem::path& to);

// The frame's rows without padding between them (a copy, even when already packed).
std::vector<uint8_t> PackRgba(const uint8_t* data, int width, int height, int stride);

struct CodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct FormatContextFree {
  void operator()(AVFormatContext* f) const;
};

using FramePtr = std::unique_ptr<AVFrame, FrameFree>;

// One encoded video stream written to `target` through a partial file: Open() sets up the
// muxer, lets `configure` fill in the codec context, opens the codec and writes the
// header; Send() encodes frames; Finish() flushes, writes the trailer and renames the file
// into place. Destroyed unfinished, it removes the partial file.
class AvOutput {
 public:
  explicit AvOutput(std::filesystem::path target);
  ~AvOutput();

  Status Open(const char* format_name, const char* codec_name,
              const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
              AVDictionary** muxer_options);
  Status Send(AVFrame* frame);  // nullptr flushes.
  Status Finish();

  AVCodecContext* codec() { return codec_.get(); }
  const std::filesystem::path& target() const { return target_; }

 private:
  const std::filesystem::path target_;
  const std::filesystem::path partial_;
  std::unique_ptr<AVFormatContext, FormatContextFree> format_;
  std::unique_ptr<AVCodecContext, CodecContextFree> codec_;
  std::unique_ptr<AVPacket, PacketFree> packet_;
  AVStream* stream_ = nullptr;  // Owned by format_.
  bool finished_ = false;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_AV_UTIL_H_
