#include "probe/periodogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

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
  const Periodogram p = ComputePeriodogram(s.samples, {});
  ASSERT_FALSE(p.peaks.empty());
  EXPECT_NEAR(p.peaks[0].hz, 25, 0.01);
  EXPECT_NEAR(p.peaks[0].amplitude, expected, 0.1 * expected);
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

TEST(PeriodogramTest, CoarseSpectrumOfASineIsHighestAtItsFrequency) {
  // runnable = round(4 + 3 sin(2 pi f t)) at Poisson instants, 500 per second for 20 s. The
  // coarse spectrum alone (the FFT of the gridded samples, max-pooled) must put its highest
  // point on f, with about the sine's amplitude, and nothing comparable elsewhere.
  constexpr double kHz = 37.3, kAmplitude = 3;
  std::mt19937_64 rng(17);
  std::exponential_distribution<double> gap(500);
  std::vector<Sample> samples;
  for (double t = gap(rng); t < 20; t += gap(rng)) {
    const double value = 4 + kAmplitude * std::sin(2 * std::numbers::pi * kHz * t);
    samples.push_back(
        Sample{static_cast<int64_t>(t * 1e9), static_cast<int32_t>(std::lround(value)), 0, 0.f});
  }
  const Periodogram p = ComputePeriodogram(samples, {});
  ASSERT_GE(p.spectrum_hz.size(), 100u);
  ASSERT_EQ(p.spectrum_hz.size(), p.spectrum_amplitude.size());
  const auto top = static_cast<size_t>(
      std::max_element(p.spectrum_amplitude.begin(), p.spectrum_amplitude.end()) -
      p.spectrum_amplitude.begin());
  // A pooled point stands for the strongest bin of its pool: within one pool width of f, plus
  // the Hann main lobe.
  const double point_hz = (p.spectrum_hz.back() - p.spectrum_hz.front()) /
                          static_cast<double>(p.spectrum_hz.size() - 1);
  EXPECT_NEAR(p.spectrum_hz[top], kHz, point_hz + 2 * p.resolution_hz);
  EXPECT_NEAR(p.spectrum_amplitude[top], kAmplitude, 0.2 * kAmplitude);
  for (size_t i = 0; i < p.spectrum_hz.size(); ++i) {
    if (std::abs(p.spectrum_hz[i] - kHz) > 1) {
      EXPECT_LT(p.spectrum_amplitude[i], 0.1 * kAmplitude) << "at " << p.spectrum_hz[i] << " Hz";
    }
  }
  ASSERT_FALSE(p.peaks.empty());
  EXPECT_NEAR(p.peaks[0].hz, kHz, 0.01);
}

TEST(PeriodogramTest, TooFewSamplesGiveNoPeaks) {
  std::vector<Sample> few = {{0, 1, 0, 0.f}, {1000, 2, 0, 0.f}};
  EXPECT_TRUE(ComputePeriodogram(few, {}).peaks.empty());
}

}  // namespace
}  // namespace pagereel::probe
