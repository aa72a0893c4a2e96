#include "probe/periodogram.h"

#include <cmath>

#include <gtest/gtest.h>

#include "probe/synthetic_series.h"

namespace pagereel::probe {
namespace {

TEST(PeriodogramTest, TellsSixtyPointZeroZeroTwoFourFromSixtyInSixtySeconds) {
  for (double hz : {60.0, 60.0024}) {
    SyntheticSpike spike;
    spike.hz = hz;
    spike.width_s = 0.002;
    const SampleSeries s = MakeSpikeSeries(spike, 60, 100, 11);
    const Periodogram p = ComputePeriodogram(s.samples, {});
    ASSERT_FALSE(p.peaks.empty());
    EXPECT_NEAR(p.peaks[0].hz, hz, 0.0006) << "true frequency " << hz;
    EXPECT_GT(p.peaks[0].amplitude, 5 * p.noise_amplitude);
    EXPECT_NEAR(p.resolution_hz, 1.0 / 60, 1e-3);
  }
}

TEST(PeriodogramTest, AmplitudeOfASquareWaveFundamental) {
  // A spike of height 2 with duty d has a fundamental of amplitude 2 * 2 sin(pi d) / pi.
  SyntheticSpike spike;
  spike.hz = 25;
  spike.width_s = 0.008;  // d = 0.2
  spike.noise_prob = 0;
  const SampleSeries s = MakeSpikeSeries(spike, 20, 500, 3);
  const double expected = 4 * std::sin(M_PI * 0.2) / M_PI;
  EXPECT_NEAR(AmplitudeAt(s.samples, 25), expected, 0.1 * expected);
  const Periodogram p = ComputePeriodogram(s.samples, {});
  ASSERT_FALSE(p.peaks.empty());
  EXPECT_NEAR(p.peaks[0].hz, 25, 0.01);
}

TEST(PeriodogramTest, SeesAboveHalfTheMeanRateBecauseSamplingIsRandom) {
  // 100 samples/s on average, yet a 240 Hz component is found: no Nyquist limit for
  // Poisson-timed samples.
  SyntheticSpike spike;
  spike.hz = 240;
  spike.width_s = 0.001;
  spike.noise_prob = 0;
  const Periodogram p = ComputePeriodogram(MakeSpikeSeries(spike, 30, 100, 5).samples, {});
  ASSERT_FALSE(p.peaks.empty());
  EXPECT_NEAR(p.peaks[0].hz, 240, 0.01);
}

TEST(PeriodogramTest, TooFewSamplesGiveNoPeaks) {
  std::vector<Sample> few = {{0, 1, 0, 0.f}, {1000, 2, 0, 0.f}};
  EXPECT_TRUE(ComputePeriodogram(few, {}).peaks.empty());
}

}  // namespace
}  // namespace pagereel::probe
