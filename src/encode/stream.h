// VideoStream: one encoded video stream sent to one sink, with the container, codec and
// sink all chosen by the caller (nothing is guessed from a file name here). Films, the
// capture service's clips and live outputs all write through it.
//
// The caller gives every frame its timestamp in frames (units of 1/fps), so a live output
// can number frames by the tick they belong to and leave gaps where it dropped some.
//
// Sinks: a file written under a hidden partial name and renamed by Finish() (a film is
// either whole or absent); the same file kept in memory (a capture service's clip); a file
// written in place as it grows (a live recording that stays playable if the process is
// killed: fragmented MP4, Matroska, MPEG-TS, HLS); a URL handed to libavformat's protocols
// (udp://, srt://, rtmp://); or a function that receives the muxed bytes as they come.
// Streams (everything but kFile and kMemoryFile) never get faststart, which would rewrite
// the file at the end.
//
// One thread at a time; libx264 and libvpx run their own worker threads inside.
#ifndef PAGEREEL_ENCODE_STREAM_H_
#define PAGEREEL_ENCODE_STREAM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "encode/frame.h"
#include "encode/sound.h"

namespace pagereel::encode {

enum class Container {
  kMp4,            // Finished with its index in front (faststart); files only.
  kFragmentedMp4,  // Fragments as it goes: playable up to the last fragment if cut short.
  kMov,
  kMatroska,
  kWebm,
  kMpegTs,
  kFlv,            // For RTMP.
  kHls,            // A playlist (the sink's target) and MPEG-TS segments beside it.
};

enum class Codec { kH264, kProRes, kFfv1, kVp9 };

// What a stream carries of the RGBA frames it is given (live's key and fill).
enum class Signal {
  kPicture,  // The colours, and the alpha channel where the stream has one (`alpha`).
  kFill,     // A keyer's fill: the colours un-premultiplied (straight), no alpha channel.
  kKey,      // A keyer's key: the alpha as grey luma, BT.709 limited range (Y 16 where
             // transparent, 235 where opaque); H.264 only.
};

enum class Latency {
  kFilm,  // Best compression: B-frames and lookahead.
  kLive,  // x264's zerolatency tuning: no B-frames, no lookahead, a frame out per frame in.
};

struct Sink {
  enum class Kind {
    kFile,         // Written under a hidden partial name, renamed into place by Finish().
    kGrowingFile,  // Written in place as it goes (live recordings, HLS playlists).
    kUrl,          // udp://, srt://, rtmp:// ... through libavformat's protocols.
    kMemory,       // Muxed bytes handed to `write` as they come, on the writing thread.
    kMemoryFile,   // A kFile held in memory (seekable, so the bytes are a file's): Finish()
                   // hands the whole file to `write` once.
  };
  Kind kind = Kind::kFile;
  std::string target;  // Path or URL; for kMemory only a name for messages.
  std::function<Status(std::span<const uint8_t>)> write;  // kMemory, kMemoryFile.
};

struct StreamSpec {
  Container container = Container::kMp4;
  Codec codec = Codec::kH264;
  Sink sink;
  int width = 0;
  int height = 0;
  Rational fps{30, 1};
  bool alpha = false;  // ProRes 4444, VP9 yuva420p or FFV1 BGRA; others refuse.
  Signal signal = Signal::kPicture;
  // The frames' colours are premultiplied by their alpha (live's program pictures). Streams
  // with an alpha channel and fills un-premultiply them: every alpha stream pagereel writes
  // carries straight colour, as ProRes 4444 and keyers' fills expect.
  bool premultiplied = false;
  // 1 (smallest) to 100 (best): CRF for H.264 and VP9. Ignored when bitrate_kbps is set.
  int quality = 90;
  // Constant bitrate for streams whose peers need one (H.264: maxrate = bitrate, one second
  // of buffer). 0: constant quality.
  int bitrate_kbps = 0;
  Latency latency = Latency::kFilm;
  // x264's speed preset ("ultrafast" ... "veryslow"); empty: veryfast.
  std::string preset;
  // Frames between keyframes; 0: two seconds.
  int gop_frames = 0;
  // Passed to libavformat when a URL is opened (e.g. {"timeout", "2000000"}), and to the muxer.
  std::vector<std::pair<std::string, std::string>> protocol_options;
  std::vector<std::pair<std::string, std::string>> muxer_options;
  // Polled while a URL connects or blocks; returning true abandons the call (kCancelled).
  std::function<bool()> should_stop;
  // A sound track muxed beside the pictures (nullptr: none), pulled as frames are written
  // (a frame at pts p brings the sound up to the end of frame p), in `sound_codec` (chosen
  // for the container by the caller: not kAuto). VideoStream only, not PacketEncoder.
  SoundSource* sound = nullptr;
  SoundCodec sound_codec = SoundCodec::kAuto;
};

// "MPEG-TS", "H.264": for messages.
std::string_view ContainerName(Container container);
std::string_view CodecName(Codec codec);

class VideoStream {
 public:
  // Opens the codec and the sink and writes the container's header. Errors name the sink's
  // target, and a codec the container cannot hold.
  static Result<std::unique_ptr<VideoStream>> Open(const StreamSpec& spec);
  virtual ~VideoStream() = default;  // Unfinished: a kFile sink's partial file is removed.

  // A converter from RGBA to this stream's pixel format, for any thread.
  virtual std::unique_ptr<Converter> NewConverter() const = 0;

  // Encodes a frame made by one of this stream's converters at `pts` frames from the start.
  // REQUIRES: pts greater than the previous frame's.
  virtual Status Write(std::unique_ptr<PreparedFrame> frame, int64_t pts) = 0;

  // Flushes the encoder, writes the trailer and (kFile) moves the file into place.
  virtual Status Finish() = 0;

  // Bytes the muxer has written so far.
  virtual int64_t bytes_written() const = 0;
  virtual const std::string& target() const = 0;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_STREAM_H_
