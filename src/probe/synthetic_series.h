// Test and benchmark helper: a sampled series of a known periodic runnable count, taken at
// Poisson instants as the real sampler takes them. Deterministic for a given seed.
#ifndef PAGEREEL_PROBE_SYNTHETIC_SERIES_H_
#define PAGEREEL_PROBE_SYNTHETIC_SERIES_H_

#include <cmath>
#include <cstdint>
#include <random>

#include "probe/sampler.h"

namespace pagereel::probe {

struct SyntheticSpike {
  double hz = 60;           // Spike frequency.
  double phase_s = 0;       // Where in the period the spike starts (monotonic phase).
  double width_s = 0.002;   // How long it lasts.
  int height = 2;           // Extra runnable threads during the spike.
  int floor = 1;            // Runnable threads otherwise.
  double noise_prob = 0.1;  // Chance that a sample sees one extra thread at random.
};

inline SampleSeries MakeSpikeSeries(const SyntheticSpike& spike, double duration_s, double rate_hz,
                                    uint64_t seed, int64_t start_ns = 1'000'000'000'000) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate_hz);
  std::bernoulli_distribution noise(spike.noise_prob);
  SampleSeries series;
  series.start_ns = start_ns;
  series.end_ns = start_ns + static_cast<int64_t>(duration_s * 1e9);
  double t = static_cast<double>(start_ns) * 1e-9;
  for (;;) {
    t += gap(rng);
    const auto t_ns = static_cast<int64_t>(t * 1e9);
    if (t_ns >= series.end_ns) break;
    const double cycles = t * spike.hz;
    const double phase = (cycles - std::floor(cycles)) / spike.hz;
    double in = phase - spike.phase_s;
    if (in < 0) in += 1 / spike.hz;
    int runnable = spike.floor + (in < spike.width_s ? spike.height : 0) + (noise(rng) ? 1 : 0);
    series.samples.push_back(Sample{t_ns, runnable, 20000, 1.0f});
  }
  return series;
}

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_SYNTHETIC_SERIES_H_
