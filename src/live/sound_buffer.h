// SoundBuffer: one browser's sound between the thread that captures it and the show's
// clock, which takes exactly each tick's share of samples (TickSamples) at every tick.
//
// The sound arrives in bursts (a sound server's fragments, a capture thread that was not
// scheduled at once), so the clock starts taking only once a cushion has gathered; until
// then its ticks get silence. A tick that finds less than its share takes what there is,
// pads the rest with silence (an underrun, counted with the samples padded) and waits for
// the cushion again. When more than `max_samples` wait (the capture ran ahead of the clock,
// or the clock stalled), the oldest are dropped down to the cushion (an overrun, counted).
// Capture and clock run on the same CLOCK_MONOTONIC, so after the start the level only
// wanders by the bursts' size.
//
// Threads: Put() from the capture thread, Take() from the clock thread, Stats() and
// Restart() from any thread. A mutex is held only to copy samples.
#ifndef PAGEREEL_LIVE_SOUND_BUFFER_H_
#define PAGEREEL_LIVE_SOUND_BUFFER_H_

#include <cstdint>
#include <vector>

#include "base/mutex.h"
#include "base/rational.h"

namespace pagereel::live {

// The samples (48 kHz) tick `n` of a show at `fps` carries: SoundSamples(n + 1) -
// SoundSamples(n), counted from tick 0, so N ticks carry exactly SoundSamples(N) samples
// (1920 each at 25 fps; 1601 or 1602 at 29.97; 800 or 801 at 59.94).
int64_t TickSamples(int64_t n, Rational fps);

struct SoundBufferStats {
  int64_t received = 0;         // Samples captured.
  int64_t taken = 0;            // Samples given to ticks (silence included).
  int64_t underruns = 0;        // Ticks that found less than their share once started.
  int64_t padded = 0;           // Silent samples those ticks got.
  int64_t overruns = 0;         // Times samples were dropped for waiting too long.
  int64_t dropped = 0;          // Samples dropped.
  int64_t level = 0;            // Samples waiting now.
  bool started = false;         // The cushion gathered: ticks take the sound.
};

class SoundBuffer {
 public:
  // Interleaved stereo throughout. REQUIRES: 0 < cushion_samples < max_samples.
  SoundBuffer(int64_t cushion_samples, int64_t max_samples);
  SoundBuffer(const SoundBuffer&) = delete;
  SoundBuffer& operator=(const SoundBuffer&) = delete;

  void Put(const float* samples, int64_t count);

  // Adds the next `count` samples, times a gain going linearly from `gain_from` at the
  // first sample to `gain_to` at the last (a fade without steps), to out[0, 2 * count).
  // A gain of 0 still takes them: a hidden source's sound keeps pace with the show.
  void Take(float* out, int64_t count, float gain_from, float gain_to);

  // Forgets what waits and waits for the cushion again (the browser was replaced).
  void Restart();

  SoundBufferStats Stats() const;

 private:
  // Moves `count` waiting samples from the ring into `out` (scaled; nullptr: dropped).
  void PopLocked(float* out, int64_t count, float gain_from, float step) REQUIRES(mu_);

  const int64_t cushion_;
  const int64_t max_;
  mutable Mutex mu_;
  std::vector<float> ring_ GUARDED_BY(mu_);  // 2 * (max_ + headroom) floats.
  int64_t head_ GUARDED_BY(mu_) = 0;         // Sample index of the oldest waiting one.
  int64_t level_ GUARDED_BY(mu_) = 0;
  bool started_ GUARDED_BY(mu_) = false;
  SoundBufferStats stats_ GUARDED_BY(mu_);
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_SOUND_BUFFER_H_
