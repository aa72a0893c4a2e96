// What the probe's analysis costs after a run: folding and the periodogram, for the
// sample counts of 60 s runs at 100 and 1000 samples per second.
#include <benchmark/benchmark.h>

#include "probe/fold.h"
#include "probe/periodogram.h"
#include "probe/synthetic_series.h"

namespace pagereel::probe {
namespace {

SampleSeries Series(double rate_hz) {
  SyntheticSpike spike;
  spike.hz = 60.0024;
  return MakeSpikeSeries(spike, 60, rate_hz, 1);
}

void BM_Fold(benchmark::State& state) {
  const SampleSeries s = Series(static_cast<double>(state.range(0)));
  const Rational period = PeriodFromFrameRate(Rational::Make(60, 1));
  for (auto _ : state) benchmark::DoNotOptimize(Fold(s.samples, period, 32));
  state.counters["samples"] = static_cast<double>(s.samples.size());
}
BENCHMARK(BM_Fold)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_Periodogram(benchmark::State& state) {
  const SampleSeries s = Series(static_cast<double>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ComputePeriodogram(s.samples, {}));
  state.counters["samples"] = static_cast<double>(s.samples.size());
}
BENCHMARK(BM_Periodogram)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pagereel::probe
