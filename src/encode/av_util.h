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
#include "encode/stream.h"

namespace pagereel::encode {

// Keeps libav's informational chatter (x264's settings, muxer notes) from our users' terminals;
// real errors come back as return codes and become Status messages. Any thread, any number
// of times.
void QuietenLibav();

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

// One encoded video stream written to a sink: Open() sets up the muxer, lets `configure`
// fill in the codec context, opens the codec and the sink and writes the header; Send()
// encodes frames; Finish() flushes, writes the trailer and, for a kFile sink, renames the
// partial file into place (a kMemoryFile sink is handed its bytes). Destroyed unfinished, a kFile sink's partial file is removed;
// other sinks keep what they were sent (a growing file stays playable as far as it got).
class AvOutput {
 public:
  explicit AvOutput(Sink sink, std::function<bool()> should_stop = nullptr);
  ~AvOutput();

  Status Open(const char* format_name, const char* codec_name,
              const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
              AVDictionary** muxer_options, AVDictionary** protocol_options = nullptr);
  Status Send(AVFrame* frame);  // nullptr flushes.
  Status Finish();

  AVCodecContext* codec() { return codec_.get(); }
  const std::string& target() const { return sink_.target; }
  int64_t bytes_written() const;

 private:
  struct MemoryFile;
  static int WriteToMemory(void* opaque, uint8_t* data, int size);
  static int Interrupted(void* opaque);
  Status OpenMemory();

  const Sink sink_;
  const std::function<bool()> should_stop_;
  const std::string write_path_;
  std::unique_ptr<AVFormatContext, FormatContextFree> format_;
  std::unique_ptr<AVCodecContext, CodecContextFree> codec_;
  std::unique_ptr<AVPacket, PacketFree> packet_;
  AVStream* stream_ = nullptr;  // Owned by format_.
  AVIOContext* memory_io_ = nullptr;  // kMemory, kMemoryFile: ours, freed after format_.
  std::unique_ptr<MemoryFile> memory_file_;  // kMemoryFile.
  Status memory_status_;  // The first error the memory sink's writer returned.
  int64_t memory_bytes_ = 0;
  int64_t closed_bytes_ = 0;  // What the file held when Finish() closed it.
  bool finished_ = false;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_AV_UTIL_H_
