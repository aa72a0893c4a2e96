// A VideoStream in two halves, for live: PacketEncoder turns frames into packets, and
// PacketMuxer writes packets to one sink. Outputs with the same encoder settings share one
// encoder and each mux its packets (one x264 for a file and an SRT stream of the same
// program), and one sink can carry several streams (a key and fill pair in one MPEG-TS).
//
// PacketEncoder and PacketMuxer each belong to one thread at a time. EncodedPacket is
// immutable once made: any number of threads may hold and mux the same one.
#ifndef PAGEREEL_ENCODE_PACKETS_H_
#define PAGEREEL_ENCODE_PACKETS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "encode/frame.h"
#include "encode/sound.h"
#include "encode/srt_sender.h"
#include "encode/stream.h"

struct AVCodecContext;
struct AVPacket;

namespace pagereel::encode {

// One encoded frame, shared by the muxers it goes to.
class EncodedPacket {
 public:
  explicit EncodedPacket(AVPacket* packet);  // Takes a new reference to its data.
  ~EncodedPacket();
  EncodedPacket(const EncodedPacket&) = delete;
  EncodedPacket& operator=(const EncodedPacket&) = delete;

  bool keyframe() const;
  int64_t size() const;
  const AVPacket* packet() const { return packet_; }

 private:
  AVPacket* packet_;
};
using PacketPtr = std::shared_ptr<const EncodedPacket>;

// The encoder settings of `spec` (codec, size, rate, alpha, signal, quality or bitrate,
// preset, GOP, latency) as a string: specs with the same key make the same packets, so
// their outputs may share one PacketEncoder. The container and sink are not part of it.
std::string EncoderKey(const StreamSpec& spec);

// Whether `container` wants the codec's headers out of band (MP4, QuickTime, Matroska,
// FLV); MPEG-TS and HLS take them either way (in band, or repeated by the muxer at every
// keyframe).
bool WantsGlobalHeader(Container container);

class PacketEncoder {
 public:
  // Opens the codec of `spec` (its container and sink are not looked at), with the headers
  // out of band when `global_header`. Errors as VideoStream::Open's.
  static Result<std::unique_ptr<PacketEncoder>> Open(const StreamSpec& spec, bool global_header);
  virtual ~PacketEncoder() = default;

  // A converter from RGBA to this encoder's pixel format (and signal), for any thread.
  virtual std::unique_ptr<Converter> NewConverter() const = 0;

  // Encodes a frame made by one of this encoder's converters at `pts` frames from the start,
  // as a keyframe when `keyframe`, and appends the packets that came out to *out.
  // REQUIRES: pts greater than the previous frame's.
  virtual Status Encode(std::unique_ptr<PreparedFrame> frame, int64_t pts, bool keyframe,
                        std::vector<PacketPtr>* out) = 0;
  // Drains the encoder at the end (zero-latency H.264 holds nothing back).
  virtual Status Flush(std::vector<PacketPtr>* out) = 0;
  virtual const StreamSpec& spec() const = 0;
};

// A live program's sound: interleaved stereo float at 48 kHz in, packets out (timestamps
// in samples, 1/48000 s, counted from the show's first sample), through SoundTrack's
// conversion and framing. The codec's priming is in the timestamps (the first packet's
// are negative), so the decoded sample at time t is the sample given for t.
class SoundPacketEncoder {
 public:
  // `codec`: kAac or kOpus (what live outputs carry). Headers out of band when
  // `global_header`.
  static Result<std::unique_ptr<SoundPacketEncoder>> Open(SoundCodec codec, bool global_header);
  virtual ~SoundPacketEncoder() = default;

  // Encodes `count` samples that begin at sample `first` of the show. Samples between the
  // end of the last call and `first` (ticks the encoder never got) are encoded as silence,
  // so every sample keeps its time; null `samples` are `count` samples of silence. REQUIRES: `first` at or after the last call's end.
  virtual Status Encode(const float* samples, int64_t count, int64_t first,
                        std::vector<PacketPtr>* out) = 0;
  // Encodes what is held back (a short last frame) and drains the codec.
  virtual Status Flush(std::vector<PacketPtr>* out) = 0;
  virtual SoundCodec codec() const = 0;
  // The opened codec, for a muxer's stream.
  virtual const AVCodecContext* context() const = 0;
};

class PacketMuxer {
 public:
  // Opens `spec`'s container and sink (connecting to a URL: blocks until the peer answers,
  // spec.should_stop says stop, or the protocol's timeout) with one stream per encoder, in
  // their order, and `sound`'s after them (nullptr: none), and writes the header. Each
  // encoder must have been opened with WantsGlobalHeader(spec.container) or more.
  static Result<std::unique_ptr<PacketMuxer>> Open(const StreamSpec& spec,
                                                   const std::vector<const PacketEncoder*>& encoders,
                                                   const SoundPacketEncoder* sound = nullptr);
  virtual ~PacketMuxer() = default;

  // Writes `packet`, made by the encoder of stream `stream`.
  virtual Status Write(const EncodedPacket& packet, int stream) = 0;
  virtual Status Finish() = 0;
  // Bytes written to the sink so far (HLS: the segments' bytes).
  virtual int64_t bytes_written() const = 0;
  // Where, in those bytes, what the receiver has not acknowledged begins (SRT); nullopt
  // for sinks that do not acknowledge, or when all is acknowledged.
  virtual std::optional<int64_t> unacknowledged_from() const = 0;
  // SRT's own figures on the connection (srt_sender.h); nullopt for other sinks.
  virtual std::optional<SrtLinkStats> link() const = 0;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_PACKETS_H_
