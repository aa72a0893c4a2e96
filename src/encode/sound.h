// A film's sound as the writers take it: SoundSource gives 48 kHz stereo samples, pulled
// as the pictures are written, and SoundCodec says how a film of each kind carries them.
// The track is encoded once for the whole film (encoded per segment and joined, AAC
// gained 1,280 samples and a click at every join, measured in the sound issue), and is
// exactly as long as the pictures: SoundSamples(frames, fps) samples, with the codec's
// priming hidden by the container (an MP4/QuickTime edit list at a 48 kHz movie
// timescale, Opus's pre-skip in WebM and Matroska) so a decoder's first sample is the
// film's first.
//
// Pure functions; any thread. A SoundSource is read by one thread at a time.
#ifndef PAGEREEL_ENCODE_SOUND_H_
#define PAGEREEL_ENCODE_SOUND_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/rational.h"
#include "base/status.h"
#include "encode/film.h"

namespace pagereel::encode {

inline constexpr int kSoundRate = 48000;
inline constexpr int kSoundChannels = 2;

// The samples that go with `frames` frames at `fps`: frames * 48000 / fps, rounded down, as
// a live program counts its ticks' shares from tick 0 (1601, 1602, 1601, ... at 29.97), so
// a film and a live recording of the same frames have the same number of samples.
int64_t SoundSamples(int64_t frames, Rational fps);

class SoundSource {
 public:
  virtual ~SoundSource() = default;
  // How many samples the sound has, in all.
  virtual int64_t samples() const = 0;
  // The next samples, at most `count`, interleaved stereo float (-1 to 1) at 48 kHz, into
  // `out`: how many were written; 0 only when all samples() were read.
  virtual Result<int64_t> Read(float* out, int64_t count) = 0;
};

enum class SoundCodec {
  kAuto,   // The kind's own (DefaultSoundCodec).
  kAac,    // FFmpeg's AAC-LC, 192 kb/s.
  kOpus,   // libopus, 128 kb/s.
  kFlac,   // Lossless, 16-bit.
  kPcm16,  // pcm_s16le.
  kPcm24,  // pcm_s24le.
};

// "aac", "opus", "flac", "pcm_s16le", "pcm_s24le" ("auto" for kAuto), and back.
std::string_view SoundCodecName(SoundCodec codec);
std::optional<SoundCodec> SoundCodecNamed(std::string_view name);

// What a film of `kind` carries its sound in when not told: AAC in MP4, 24-bit PCM in
// QuickTime (beside ProRes, as editors expect), Opus in WebM, FLAC in Matroska (lossless
// beside lossless FFV1); none for GIF and image sequences.
std::optional<SoundCodec> DefaultSoundCodec(FilmKind kind);

// `codec` (kAuto: the default) for a film of `kind`, or an error (kInvalidArgument) naming
// the kind and the codecs it takes. Refused: any sound in GIF and image sequences, codecs
// the container does not hold, and AAC in Matroska (FFmpeg 5.1 reads it back 1,024 samples
// late, measured: Matroska has no edit list to hide AAC's priming).
Result<SoundCodec> ChooseSoundCodec(FilmKind kind, SoundCodec codec);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_SOUND_H_
