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
#include <string_view>
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
  int64_t gaps = 0;             // Times the browser's stream ran dry (GapFinder): heard as silence.
  int64_t gap_samples = 0;      // Silent samples those gaps put on air.
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

  // Counts what GapFinder found in the sound already Put: `gaps` gaps, `samples` of silence
  // on air.
  void CountGaps(int64_t gaps, int64_t samples);

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

// Finds the gaps in a browser's sound that no buffer of ours sees: a browser that misses its
// sound server's deadline (a starved host: measured beside two CPU hogs) has its stream run
// dry, and the server then plays silence for it, so the capture keeps its pace and carries
// the silence on air. The server logs each time a stream ran dry ("Implicit underrun of
// 'Playback'", debug level) before that silence reaches the capture, where it is a run of
// exact zeros; the gap is that run, at most as long as the server's log says the stream was
// dry plus kSlack (the server plays silence a block at a time). Zeros that begin within
// kJoin after a gap ended belong to it (the stream ran dry again before it had filled: seen
// as 10 ms of silence, 6 ms of sound, 13 ms of silence after one log line). A log line
// after which no zeros come within kExpire was covered by the server's rewind: nothing was
// heard.
//
// Threads: one (the capture's).
class GapFinder {
 public:
  struct Found {
    int64_t gaps = 0;     // Gaps that began.
    int64_t samples = 0;  // Their silent samples (and those of a gap's later part).
  };
  // One line of the sound server's log (--log-level=debug --log-time=1).
  void Line(std::string_view line);
  // The next captured samples (interleaved stereo), after the log lines written before them.
  // Returns the gaps (and parts of gaps) that ended in them.
  Found Samples(const float* samples, int64_t count);

  static constexpr int64_t kSlack = 2400;    // 50 ms.
  static constexpr int64_t kExpire = 4800;   // 100 ms.
  static constexpr int64_t kMinZeros = 16;   // A tone's zero crossing is one sample.
  static constexpr int64_t kJoin = 960;      // 20 ms.

 private:
  bool pending_ = false;       // The server said a stream ran dry; its zeros not yet seen.
  int64_t pending_age_ = 0;    // Samples captured since, before its zeros began.
  double dry_from_ms_ = 0;     // The server's time of the underrun.
  int64_t dry_samples_ = -1;   // How long the server says it lasted; -1: not over yet.
  int64_t zeros_ = 0;          // Exact-zero samples at the end of what was captured.
  int64_t since_gap_ = kJoin;  // Samples of sound since the last gap ended (kJoin: long ago).
  int64_t gap_left_ = 0;       // What the last gap may still grow by (its cap).
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_SOUND_BUFFER_H_
