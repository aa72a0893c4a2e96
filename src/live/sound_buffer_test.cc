#include "live/sound_buffer.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace pagereel::live {
namespace {

TEST(TickSamplesTest, EachTickTakesItsShareCountedFromTickZero) {
  EXPECT_EQ(TickSamples(0, Rational{25, 1}), 1920);
  EXPECT_EQ(TickSamples(12345, Rational{25, 1}), 1920);
  for (const auto& [fps, lo] : {std::pair{Rational{30000, 1001}, 1601}, std::pair{Rational{60000, 1001}, 800}}) {
    int64_t sum = 0;
    for (int64_t n = 0; n < 30000; ++n) {
      const int64_t share = TickSamples(n, fps);
      EXPECT_TRUE(share == lo || share == lo + 1) << n;
      sum += share;
    }
    // N ticks carry N * 48000 * den / num samples (30000 ticks: a whole number).
    EXPECT_EQ(sum, 30000 * 48000 * fps.den / fps.num);
  }
}

// Samples 1, 2, 3 ... on the left, their negatives on the right.
std::vector<float> Ramp(int64_t from, int64_t count) {
  std::vector<float> out;
  for (int64_t i = 0; i < count; ++i) {
    out.push_back(static_cast<float>(from + i));
    out.push_back(-static_cast<float>(from + i));
  }
  return out;
}

TEST(SoundBufferTest, TicksGetSilenceUntilTheCushionThenTheSoundInOrder) {
  SoundBuffer buffer(100, 1000);
  std::vector<float> out(2 * 60, 0);
  buffer.Put(Ramp(1, 60).data(), 60);
  buffer.Take(out.data(), 60, 1, 1);
  EXPECT_EQ(out[0], 0);  // Not started: 60 < 100 waiting.
  EXPECT_FALSE(buffer.Stats().started);
  buffer.Put(Ramp(61, 60).data(), 60);
  buffer.Take(out.data(), 60, 1, 1);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2 * 59], 60);
  std::fill(out.begin(), out.end(), 0.0f);
  buffer.Take(out.data(), 60, 1, 1);
  EXPECT_EQ(out[0], 61);
  const SoundBufferStats stats = buffer.Stats();
  EXPECT_EQ(stats.underruns, 0);
  EXPECT_EQ(stats.taken, 180);
  EXPECT_EQ(stats.level, 0);
}

TEST(SoundBufferTest, AnUnderrunPadsSilenceCountsItAndWaitsForTheCushionAgain) {
  SoundBuffer buffer(100, 1000);
  buffer.Put(Ramp(1, 130).data(), 130);
  std::vector<float> out(2 * 100, 0);
  buffer.Take(out.data(), 100, 1, 1);
  std::fill(out.begin(), out.end(), 0.0f);
  buffer.Take(out.data(), 100, 1, 1);  // 30 there, 70 padded.
  EXPECT_EQ(out[2 * 29], 130);
  EXPECT_EQ(out[2 * 30], 0);
  SoundBufferStats stats = buffer.Stats();
  EXPECT_EQ(stats.underruns, 1);
  EXPECT_EQ(stats.padded, 70);
  EXPECT_FALSE(stats.started);
  buffer.Put(Ramp(131, 50).data(), 50);
  std::fill(out.begin(), out.end(), 0.0f);
  buffer.Take(out.data(), 10, 1, 1);
  EXPECT_EQ(out[0], 0);  // 50 < 100: still gathering, not another underrun.
  EXPECT_EQ(buffer.Stats().underruns, 1);
}

TEST(SoundBufferTest, TooMuchWaitingDropsTheOldestDownToTheCushion) {
  SoundBuffer buffer(100, 300);
  buffer.Put(Ramp(1, 250).data(), 250);
  buffer.Put(Ramp(251, 100).data(), 100);  // 350 > 300: keep the newest 100.
  SoundBufferStats stats = buffer.Stats();
  EXPECT_EQ(stats.overruns, 1);
  EXPECT_EQ(stats.dropped, 250);
  EXPECT_EQ(stats.level, 100);
  std::vector<float> out(2, 0);
  buffer.Take(out.data(), 1, 1, 1);
  EXPECT_EQ(out[0], 251);
}

TEST(SoundBufferTest, GainRampsLinearlyAcrossATickAndZeroStillConsumes) {
  SoundBuffer buffer(1, 1000);
  std::vector<float> ones(2 * 200, 1.0f);
  buffer.Put(ones.data(), 200);
  std::vector<float> out(2 * 101, 0);
  buffer.Take(out.data(), 101, 0, 1);
  EXPECT_FLOAT_EQ(out[0], 0);
  EXPECT_NEAR(out[2 * 50], 0.5, 1e-5);
  EXPECT_NEAR(out[2 * 100], 1, 1e-5);
  std::fill(out.begin(), out.end(), 0.0f);
  buffer.Take(out.data(), 99, 0, 0);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(buffer.Stats().level, 0);
}


// A tone's samples (never two zeros in a row) or silence, interleaved stereo.
std::vector<float> Sound(int64_t count, bool silent) {
  std::vector<float> out;
  for (int64_t i = 0; i < count; ++i) {
    const float x = silent ? 0.0f : 0.5f + 0.25f * static_cast<float>(i % 7);
    out.push_back(x);
    out.push_back(x);
  }
  return out;
}

// The samples of gaps GapFinder found in `count` samples.
int64_t Silent(GapFinder& finder, const float* samples, int64_t count) {
  return finder.Samples(samples, count).samples;
}

constexpr char kDry[] = "(   6.056|   5.862) D: [null-sink] protocol-native.c: Implicit underrun of 'Playback'";
constexpr char kBack[] = "(   6.343|   0.287) D: [null-sink] protocol-native.c: Requesting rewind due to end of underrun.";

TEST(GapFinderTest, TheZerosAfterAStreamRanDryAreOneGap) {
  GapFinder finder;
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 0);
  finder.Line(kDry);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 0);  // Its zeros come later.
  EXPECT_EQ(Silent(finder, Sound(9000, true).data(), 9000), 0);  // Not over yet.
  finder.Line(kBack);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 9000);
  // Once: later zeros without a line are a page's own silence.
  EXPECT_EQ(Silent(finder, Sound(GapFinder::kJoin, false).data(), GapFinder::kJoin), 0);
  EXPECT_EQ(Silent(finder, Sound(480, true).data(), 480), 0);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 0);
}

TEST(GapFinderTest, ZerosWithoutALineAreNoGap) {
  GapFinder finder;
  finder.Line("(   0.191|   0.000) D: [null-sink] protocol-native.c: Requesting rewind due to end of underrun.");
  EXPECT_EQ(Silent(finder, Sound(4800, true).data(), 4800), 0);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 0);
}

TEST(GapFinderTest, ALineWhoseZerosNeverCameExpires) {
  GapFinder finder;
  finder.Line(kDry);
  finder.Line(kBack);  // The server's rewind covered it: nothing was heard.
  EXPECT_EQ(Silent(finder, Sound(GapFinder::kExpire + 10, false).data(), GapFinder::kExpire + 10), 0);
  EXPECT_EQ(Silent(finder, Sound(960, true).data(), 960), 0);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 0);
}

TEST(GapFinderTest, ZerosSoonAfterAGapAreItsLaterPart) {
  GapFinder finder;
  finder.Line(kDry);
  finder.Line(kBack);
  EXPECT_EQ(Silent(finder, Sound(480, true).data(), 480), 0);
  const GapFinder::Found first = finder.Samples(Sound(288, false).data(), 288);  // 6 ms of sound.
  EXPECT_EQ(first.gaps, 1);
  EXPECT_EQ(first.samples, 480);
  EXPECT_EQ(Silent(finder, Sound(624, true).data(), 624), 0);
  const GapFinder::Found second = finder.Samples(Sound(480, false).data(), 480);
  EXPECT_EQ(second.gaps, 0);
  EXPECT_EQ(second.samples, 624);
  // Later than kJoin: a page's own silence.
  EXPECT_EQ(Silent(finder, Sound(GapFinder::kJoin, false).data(), GapFinder::kJoin), 0);
  EXPECT_EQ(Silent(finder, Sound(480, true).data(), 480), 0);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 0);
}

TEST(GapFinderTest, ASilentPagesGapIsAsLongAsTheServerSaysAtMost) {
  GapFinder finder;
  finder.Line(kDry);
  finder.Line(kBack);  // 287 ms dry.
  EXPECT_EQ(Silent(finder, Sound(96000, true).data(), 96000), 0);
  EXPECT_EQ(Silent(finder, Sound(480, false).data(), 480), 287 * 48 + GapFinder::kSlack);
}
}  // namespace
}  // namespace pagereel::live
