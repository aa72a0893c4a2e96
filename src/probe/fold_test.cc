#include "probe/fold.h"

#include <cmath>

#include <gtest/gtest.h>

#include "probe/synthetic_series.h"

namespace pagereel::probe {
namespace {

TEST(FoldTest, PeriodFromFrameRateIsExact) {
  EXPECT_EQ(PeriodFromFrameRate(Rational::Make(60, 1)), Rational::Make(50'000'000, 3));
  EXPECT_EQ(PeriodFromFrameRate(Rational::Make(30000, 1001)), Rational::Make(100'100'000, 3));
}

TEST(FoldTest, PhaseBinUsesMonotonicPhase) {
  const Rational period = Rational::Make(20'000'000, 1);  // 20 ms.
  EXPECT_EQ(PhaseBin(0, period, 20), 0);
  EXPECT_EQ(PhaseBin(999'999, period, 20), 0);
  EXPECT_EQ(PhaseBin(1'000'000, period, 20), 1);
  EXPECT_EQ(PhaseBin(5'019'999'999, period, 20), 19);
  // A large uptime times a rational period stays exact.
  const Rational ntsc = PeriodFromFrameRate(Rational::Make(30000, 1001));
  EXPECT_EQ(PhaseBin(int64_t{1001} * 1'000'000'000'000, ntsc, 10), 0);  // 30000*1e3 whole periods.
}

TEST(FoldTest, FindsSpikePhaseFloorAndWidth) {
  SyntheticSpike spike;
  spike.hz = 50;            // 20 ms period.
  spike.phase_s = 0.008;    // Spike from 8 ms to 12 ms.
  spike.width_s = 0.004;
  spike.height = 3;
  spike.noise_prob = 0;
  const SampleSeries s = MakeSpikeSeries(spike, 30, 400, 7);
  const FoldResult f = Fold(s.samples, Rational::Make(20'000'000, 1), 20);
  ASSERT_EQ(f.bins.size(), 20u);
  EXPECT_DOUBLE_EQ(f.floor, 1);
  EXPECT_DOUBLE_EQ(f.peak, 4);
  EXPECT_GE(f.peak_phase_ns, 8'000'000);
  EXPECT_LE(f.peak_phase_ns, 12'000'000);
  EXPECT_EQ(f.half_height_width_ns, 4'000'000);
  EXPECT_EQ(f.BinWidthNs(), 1'000'000);
}

TEST(FoldTest, SpikeAcrossPhaseZeroWraps) {
  SyntheticSpike spike;
  spike.hz = 50;
  spike.phase_s = 0.018;  // 18 ms .. 22 ms, i.e. across phase 0.
  spike.width_s = 0.004;
  spike.noise_prob = 0;
  const FoldResult f = Fold(MakeSpikeSeries(spike, 30, 400, 9).samples, Rational::Make(20'000'000, 1), 20);
  EXPECT_TRUE(f.peak_phase_ns < 2'000'000 || f.peak_phase_ns >= 18'000'000) << f.peak_phase_ns;
  EXPECT_EQ(f.half_height_width_ns, 4'000'000);
}

TEST(FoldTest, EmptyBinsAreNanAndIgnored) {
  std::vector<Sample> samples = {{1'000'000, 2, 0, 0.f}, {1'000'001, 4, 0, 0.f}};
  const FoldResult f = Fold(samples, Rational::Make(10'000'000, 1), 10);
  EXPECT_TRUE(std::isnan(f.bins[5]));
  EXPECT_DOUBLE_EQ(f.bins[1], 3);
  EXPECT_DOUBLE_EQ(f.peak, 3);
  EXPECT_DOUBLE_EQ(f.floor, 3);
  const FoldResult none = Fold({}, Rational::Make(10'000'000, 1), 10);
  EXPECT_EQ(none.peak, 0);
}

}  // namespace
}  // namespace pagereel::probe
