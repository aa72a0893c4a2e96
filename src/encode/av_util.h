// Internal to encode/ (and audio/, which decodes with the same helpers): ownership and
// error helpers for FFmpeg objects, and AvOutput, the codec + muxer + file part that every
// libav-based writer shares. Keeps libav* headers out of encoder.h. One thread at a time.
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "encode/srt_sender.h"
#include "encode/stream.h"

namespace pagereel::encode {

class SoundTrack;  // encode/sound_track.h

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
struct CodecParametersFree {
  void operator()(AVCodecParameters* p) const { avcodec_parameters_free(&p); }
};
struct FormatContextFree {
  void operator()(AVFormatContext* f) const;
};

using FramePtr = std::unique_ptr<AVFrame, FrameFree>;

// A muxer writing one or more streams to a sink: Create() sets up the container,
// AddStream() adds a stream for an opened encoder, Start() opens the sink and writes the
// header; Write() takes encoded packets; Finish() writes the trailer and, for a kFile sink,
// renames the partial file into place (a kMemoryFile sink is handed its bytes). Destroyed
// unfinished, a kFile sink's partial file is removed; other sinks keep what they were sent
// (a growing file stays playable as far as it got). One thread at a time.
class AvMuxer {
 public:
  explicit AvMuxer(Sink sink, std::function<bool()> should_stop = nullptr);
  ~AvMuxer();

  Status Create(const char* format_name);
  // Whether the container wants codec headers out of band (AV_CODEC_FLAG_GLOBAL_HEADER).
  bool WantsGlobalHeader() const;
  // The new stream's index. REQUIRES: Create() succeeded; the encoder is open.
  Result<int> AddStream(const AVCodecContext* encoder);
  Result<int> AddStream(const AVCodecParameters* parameters, AVRational time_base,
                        AVRational frame_rate);
  Status Start(AVDictionary** muxer_options, AVDictionary** protocol_options = nullptr);
  // Writes `packet` (timestamps in `time_base`) to stream `stream`; the packet's reference
  // is taken over and it is left blank.
  Status Write(AVPacket* packet, AVRational time_base, int stream);
  Status Finish();

  const std::string& target() const { return sink_.target; }
  // Bytes written to the sink so far; for muxers that open files of their own (HLS), the
  // bytes of the segments written so far.
  int64_t bytes_written() const;
  // For an SRT sink: where the bytes its receiver has not acknowledged begin (as
  // bytes_written() counts them); nullopt for other sinks, or when all are acknowledged.
  std::optional<int64_t> unacknowledged_from() const;
  // SRT's own figures for an SRT sink; nullopt for other sinks.
  std::optional<SrtLinkStats> link() const;

 private:
  struct MemoryFile;
  static int WriteToMemory(void* opaque, uint8_t* data, int size);
  static int WriteToSrt(void* opaque, uint8_t* data, int size);
  // srt:// through pagereel's own SRT socket (srt_sender.h), when built with libsrt.
  Status OpenSrt(AVDictionary** protocol_options);
  static int Interrupted(void* opaque);
  static int OpenCounted(AVFormatContext* s, AVIOContext** pb, const char* url, int flags,
                         AVDictionary** options);
  static int CloseCounted(AVFormatContext* s, AVIOContext* pb);
  Status OpenMemory();

  const Sink sink_;
  const std::function<bool()> should_stop_;
  const std::string write_path_;
  std::unique_ptr<AVFormatContext, FormatContextFree> format_;
  AVIOContext* memory_io_ = nullptr;  // kMemory, kMemoryFile: ours, freed after format_.
  std::unique_ptr<MemoryFile> memory_file_;  // kMemoryFile.
  std::unique_ptr<SrtSender> srt_;  // srt:// with libsrt; memory_io_ writes to it.
  Status memory_status_;  // The first error the memory sink's writer returned.
  int64_t memory_bytes_ = 0;
  int64_t closed_bytes_ = 0;  // What the file held when Finish() closed it.
  // Muxers that open their own files (HLS): libav's own io_open/io_close2, and the bytes of
  // the media files they have closed and the one open now.
  decltype(AVFormatContext::io_open) own_open_ = nullptr;
  decltype(AVFormatContext::io_close2) own_close_ = nullptr;
  int64_t segment_bytes_ = 0;
  AVIOContext* open_segment_ = nullptr;
  bool finished_ = false;
};

// An encoder of frames into packets: Open() lets `configure` fill in the codec context and
// opens the codec; Send() encodes a frame (nullptr flushes) and hands every packet that
// comes out to `each`. One thread at a time.
class AvEncoder {
 public:
  Status Open(const char* codec_name,
              const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
              bool global_header);
  Status Send(AVFrame* frame, const std::function<Status(AVPacket*)>& each);
  AVCodecContext* codec() { return codec_.get(); }
  const AVCodecContext* codec() const { return codec_.get(); }

 private:
  std::unique_ptr<AVCodecContext, CodecContextFree> codec_;
  std::unique_ptr<AVPacket, PacketFree> packet_;
};

// One encoded video stream written to a sink: an AvEncoder and an AvMuxer with one stream,
// and optionally a sound track beside it. Open() sets up the muxer, lets `configure` fill in
// the codec context, opens the codec (and the sound's) and the sink and writes the header;
// Send() encodes frames, each after the sound up to its end; Finish() flushes both and
// finishes the muxer (see AvMuxer).
class AvOutput {
 public:
  explicit AvOutput(Sink sink, std::function<bool()> should_stop = nullptr);
  ~AvOutput();

  // `sound`: pulled as frames are sent, encoded in `sound_codec` (not kAuto).
  Status Open(const char* format_name, const char* codec_name,
              const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
              AVDictionary** muxer_options, AVDictionary** protocol_options = nullptr,
              SoundSource* sound = nullptr, SoundCodec sound_codec = SoundCodec::kAuto);
  Status Send(AVFrame* frame);  // nullptr flushes.
  Status Finish();

  AVCodecContext* codec() { return encoder_.codec(); }
  const std::string& target() const { return muxer_.target(); }
  int64_t bytes_written() const { return muxer_.bytes_written(); }

 private:
  Status WriteSound(AVPacket* packet);

  AvMuxer muxer_;
  AvEncoder encoder_;
  int stream_ = 0;
  std::unique_ptr<SoundTrack> sound_;
  int sound_stream_ = -1;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_AV_UTIL_H_
