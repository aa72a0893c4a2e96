// Mixer: a sound timeline and its media made into the film's samples, exactly as many as
// asked for, 48 kHz stereo, every span's first sample on the sample of its film time
// (audio::SampleAt). It is an encode::SoundSource: a film writer or the segment join pulls
// the samples as it muxes pictures, so a long film's sound is never all in memory.
//
// All of it is libavfilter (audio/README.md, "Mixing", has the graph): each span's media is
// decoded from memory, resampled to 48 kHz stereo, trimmed to its offset, sped up by its
// rate (atempo, keeping the pitch as media elements do by default; asetrate where the page
// turned preservesPitch off), scaled by its volume, cut to its length and delayed to its
// start; amix adds them (not normalised: a page's sounds play at their own levels, as in
// the browser) over silence of the film's length. A looping span decodes its media again
// from the start at each end.
//
// Media that is missing or cannot be decoded leaves its sound out, named in problems(); the
// rest of the film's sound is still made. One thread at a time.
#ifndef PAGEREEL_AUDIO_MIXER_H_
#define PAGEREEL_AUDIO_MIXER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audio/media_store.h"
#include "audio/timeline.h"
#include "base/status.h"
#include "encode/sound.h"

namespace pagereel::audio {

class Mixer final : public encode::SoundSource {
 public:
  // Prepares the mix of `timeline` (film time 0 on) over `samples` samples, with media
  // from `media`: opens every span's media and builds the filter graph. Fails only for
  // what no media explains (a graph libavfilter refuses).
  static Result<std::unique_ptr<Mixer>> Open(const Timeline& timeline, const MediaStore& media,
                                             int64_t samples);
  ~Mixer() override;
  Mixer(const Mixer&) = delete;
  Mixer& operator=(const Mixer&) = delete;

  int64_t samples() const override { return samples_; }
  Result<int64_t> Read(float* out, int64_t count) override;

  // The spans that are in the mix.
  int spans_mixed() const { return spans_mixed_; }
  // A sound left out or cut short: the film time of the span it happened to (so a summary
  // can name its frame) and a line naming the sound, its source and its media: "sound
  // 'media-2' (<audio src=a.mp3>), media 3f2a... was left out: it could not be decoded:
  // Invalid data found when processing input".
  struct Problem {
    Rational at;
    std::string text;
  };
  // Grows while reading (media damaged part way).
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  struct Graph;
  explicit Mixer(int64_t samples);

  const int64_t samples_;
  std::unique_ptr<Graph> graph_;
  int spans_mixed_ = 0;
  std::vector<Problem> problems_;
  int64_t produced_ = 0;
};

}  // namespace pagereel::audio

#endif  // PAGEREEL_AUDIO_MIXER_H_
