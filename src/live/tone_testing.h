// Test-only: a page that plays a tone, and how to check a decoded track for it (live's sound
// tests). Header-only, for the test binaries that share it.
#ifndef PAGEREEL_LIVE_TONE_TESTING_H_
#define PAGEREEL_LIVE_TONE_TESTING_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "encode/sound.h"
#include "live/engine.h"
#include "testing/media.h"

#include <gtest/gtest.h>

namespace pagereel::live {

// The track ends with 140 ms of silence (and one 10 ms window more for where it falls):
// each tick's sound is stamped that much earlier, when the page played it (engine.cc,
// kSoundLatencySamples).
inline constexpr size_t kSilentTailWindows = 15;
// The tone's first second, in 10 ms windows.
inline constexpr size_t kFirstSecondWindows = 100;

inline constexpr double kToneHz = 997;  // No whole number of samples per cycle: any gap shows.
inline constexpr double kToneLevel = 0.5;

inline const char kTonePage[] =
    "data:text/html,<body style='margin:0;background:rgb(0,0,120)'><script>"
    "const c=new AudioContext({sampleRate:48000});const o=c.createOscillator();"
    "o.frequency.value=997;const g=c.createGain();g.gain.value=0.5;"
    "o.connect(g).connect(c.destination);o.start();</script></body>";

// The tone in 10 ms windows of the left channel: its level and its phase against the
// window's sample index in the file, so a tone that runs on without a gap keeps one phase.
struct Window {
  double level;
  double phase;
};
inline std::vector<Window> ToneWindows(const testing::DecodedAudio& audio, int64_t window = 480) {
  const int64_t kWindow = window;
  std::vector<Window> out;
  for (int64_t start = 0; start + kWindow <= audio.length(); start += kWindow) {
    double i_sum = 0, q_sum = 0;
    for (int64_t i = start; i < start + kWindow; ++i) {
      const double x = static_cast<double>(audio.samples[static_cast<size_t>(i * audio.channels)]);
      const double angle = 2 * std::numbers::pi * kToneHz * static_cast<double>(i) / encode::kSoundRate;
      i_sum += x * std::cos(angle);
      q_sum += x * std::sin(angle);
    }
    out.push_back({2 * std::hypot(i_sum, q_sum) / kWindow, std::atan2(q_sum, i_sum)});
  }
  return out;
}

inline double PhaseDistance(double a, double b) {
  double d = std::fmod(std::abs(a - b), 2 * std::numbers::pi);
  return std::min(d, 2 * std::numbers::pi - d);
}

// A 320x180 show of the tone page alone, without outputs.
inline ShowSpec ToneShow(Rational fps) {
  ShowSpec show;
  show.width = 320;
  show.height = 180;
  show.fps = fps;
  show.sources.push_back(SourceSpec{.id = "tone", .url = kTonePage});
  return show;
}

// What CheckTone found: windows (10 ms) without the tone and windows where its phase jumped.
struct ToneCheck {
  bool started = false;  // The tone began in the first half of the track.
  int gaps = 0;
  int long_gaps = 0;     // Gaps longer than two windows (kGlitchWindows).
  int jumps = 0;
  int64_t first_bad_ms = 0;
};
// A silence the browser's renderer leaves when it misses the browser's own deadline: one
// 10 ms buffer, which the browser fills with silence itself and the sound server never sees
// (so it is not counted: docs/live.md, "Sound"); seen beside two CPU hogs about once in
// 30 s. In 10 ms windows it spans two at most.
inline constexpr int kGlitchWindows = 2;

// The tone, once it started, never stops and never jumps in phase (a browser stream that
// ran dry is a gap, counted: SoundGapTest), checked from its first second on: before, the
// browser's renderer can miss the browser's own first deadlines on a busy host, silence
// the sound server does not see (docs/live.md, "Sound"). Up to the track's silent tail
// and the window before it (the codec's padding).
inline ToneCheck CheckTone(const testing::DecodedAudio& audio) {
  const std::vector<Window> windows = ToneWindows(audio);
  ToneCheck check;
  size_t first = 0;
  while (first < windows.size() && windows[first].level < kToneLevel / 2) ++first;
  check.started = first < windows.size() / 2;
  const size_t from = first + kFirstSecondWindows;
  int run = 0;  // Gap windows in a row.
  for (size_t w = from; check.started && w + 1 + kSilentTailWindows < windows.size(); ++w) {
    const bool gap = windows[w].level < kToneLevel * 0.8;
    const bool jump = PhaseDistance(windows[w].phase, windows[from].phase) > 0.2;
    if ((gap || jump) && check.gaps + check.jumps == 0) check.first_bad_ms = static_cast<int64_t>(w) * 10;
    run = gap ? run + 1 : 0;
    check.long_gaps += run == kGlitchWindows + 1;
    check.gaps += gap;
    check.jumps += jump;
  }
  return check;
}

// The tone in `audio` has no gap (but a renderer's glitch) and no jump unless `source`
// counted one, and none that it did not count. REQUIRES: gtest (it reports through EXPECT).
inline void ExpectEveryGapCounted(const testing::DecodedAudio& audio, const SourceStatus& source) {
  const ToneCheck tone = CheckTone(audio);
  ASSERT_TRUE(tone.started) << "the tone started late or not at all";
  if (source.sound_gaps == 0) {
    EXPECT_EQ(tone.long_gaps, 0) << "first bad window at " << tone.first_bad_ms << " ms, and no gap counted";
    EXPECT_EQ(tone.jumps, 0) << "first bad window at " << tone.first_bad_ms << " ms, and no gap counted";
  } else {
    EXPECT_GT(tone.gaps, 0) << source.sound_gaps << " gaps counted, none in the file";
  }
}

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_TONE_TESTING_H_
