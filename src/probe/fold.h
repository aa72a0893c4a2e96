// Folding: the runnable count averaged by phase of a period (the epoch-folding of pulsar
// astronomy). Samples are placed by their CLOCK_MONOTONIC time modulo the period, so phase 0
// is every instant t with t mod period == 0. One spike at one phase means the workload's
// frame ticks coincide; one bump per worker means they are spread.
// Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_FOLD_H_
#define PAGEREEL_PROBE_FOLD_H_

#include <cstdint>
#include <span>
#include <vector>

#include "base/rational.h"
#include "probe/sampler.h"

namespace pagereel::probe {

// A period in nanoseconds as an exact rational: 1e9 * den / num ns for a rate num/den.
Rational PeriodFromFrameRate(Rational fps);

struct FoldResult {
  Rational period_ns;
  std::vector<double> bins;     // Mean runnable count per phase bin, phase order from 0;
                                // NaN where a bin got no sample.
  std::vector<int64_t> counts;  // Samples per bin.
  double peak = 0;              // Highest bin mean.
  int64_t peak_phase_ns = 0;    // Centre of the highest bin.
  double floor = 0;             // Lowest bin mean.
  int64_t half_height_width_ns = 0;  // Width of the contiguous run of bins around the peak
                                     // at or above floor + (peak - floor) / 2.
  int64_t BinWidthNs() const;
};

// REQUIRES: period_ns > 0, bins >= 1.
FoldResult Fold(std::span<const Sample> samples, Rational period_ns, int bins);

// The bin (0..bins-1) of time t for a period; exact integer arithmetic.
int PhaseBin(int64_t t_ns, Rational period_ns, int bins);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_FOLD_H_
