// Internal to encode/: a film's one sound track, encoded as its pictures are muxed. The
// owner of the muxer adds the track's stream before the header (codec()), calls
// EncodeUntil() as its pictures advance so the muxer interleaves the two with little
// buffering, and Finish() before the trailer. One thread at a time.
#ifndef PAGEREEL_ENCODE_SOUND_TRACK_H_
#define PAGEREEL_ENCODE_SOUND_TRACK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "encode/av_util.h"
#include "encode/sound.h"

struct AVAudioFifo;
struct SwrContext;

namespace pagereel::encode {

// The movie timescale (the muxer's movie_timescale) of an MP4 or QuickTime film with
// sound: the edit lists that hide AAC's priming and padding are then exact to the sample
// (at the default 1000 they are whole milliseconds, and a decoder plays up to 47 samples
// more or less than the pictures).
inline constexpr char kSoundMovieTimescale[] = "48000";

// Whether `sound` has exactly the samples `frames` frames at `fps` need (kInternal, with
// both counts, if not: the caller made the sound for another film).
Status CheckSoundLength(const SoundSource& sound, int64_t frames, Rational fps);

// Where a track's packets go: timestamps in 1/48000 s.
using SoundPacketWriter = std::function<Status(AVPacket*)>;

class SoundTrack {
 public:
  // Opens the encoder of `codec` (checked by ChooseSoundCodec; not kAuto) for `source`,
  // with its headers out of band when `global_header` (the muxer's AVFMT_GLOBALHEADER).
  static Result<std::unique_ptr<SoundTrack>> Open(SoundSource* source, SoundCodec codec,
                                                  bool global_header);
  ~SoundTrack();
  SoundTrack(const SoundTrack&) = delete;
  SoundTrack& operator=(const SoundTrack&) = delete;

  // The opened encoder, for the muxer's stream parameters.
  const AVCodecContext* codec() const { return encoder_.codec(); }

  // Encodes the sound up to sample `end` (clamped to the source's samples()).
  Status EncodeUntil(int64_t end, const SoundPacketWriter& write);
  // Encodes the rest and drains the encoder. Fails when the source gave another number of
  // samples than it promised.
  Status Finish(const SoundPacketWriter& write);

 private:
  SoundTrack(SoundSource* source) : source_(source) {}
  Status Init(SoundCodec codec, bool global_header);
  // Sends whole encoder frames from the FIFO; at the end (`last`) the short rest too.
  Status Drain(bool last, const SoundPacketWriter& write);

  SoundSource* const source_;
  AvEncoder encoder_;
  struct SwrFree {
    void operator()(SwrContext* s) const;
  };
  struct FifoFree {
    void operator()(AVAudioFifo* f) const;
  };
  std::unique_ptr<SwrContext, SwrFree> convert_;  // Interleaved float to the encoder's format.
  std::unique_ptr<AVAudioFifo, FifoFree> fifo_;   // Converted samples not yet encoded.
  FramePtr frame_;
  std::vector<float> read_;      // What the source gave, before conversion.
  int64_t read_samples_ = 0;     // Taken from the source so far.
  int64_t sent_samples_ = 0;     // Given to the encoder so far: the next frame's pts.
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_SOUND_TRACK_H_
