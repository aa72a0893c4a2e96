#include "probe/fold.h"

#include <cmath>
#include <limits>

namespace pagereel::probe {
namespace {
__extension__ using Int128 = __int128;  // GCC and Clang both have it; -Wpedantic does not know.
}  // namespace

Rational PeriodFromFrameRate(Rational fps) {
  return Rational::Make(int64_t{1'000'000'000} * fps.den, fps.num);
}

int PhaseBin(int64_t t_ns, Rational period_ns, int bins) {
  // phase / period = ((t * den) mod num) / num, all in 128-bit so hours of uptime in
  // nanoseconds times any frame-rate denominator cannot overflow.
  const Int128 scaled = static_cast<Int128>(t_ns) * period_ns.den;
  Int128 rem = scaled % period_ns.num;
  if (rem < 0) rem += period_ns.num;
  return static_cast<int>(rem * bins / period_ns.num);
}

int64_t FoldResult::BinWidthNs() const {
  if (bins.empty()) return 0;
  return static_cast<int64_t>(std::llround(period_ns.ToDouble() / static_cast<double>(bins.size())));
}

FoldResult Fold(std::span<const Sample> samples, Rational period_ns, int bins) {
  FoldResult out;
  out.period_ns = period_ns;
  std::vector<double> sums(static_cast<size_t>(bins), 0.0);
  out.counts.assign(static_cast<size_t>(bins), 0);
  for (const Sample& s : samples) {
    const auto b = static_cast<size_t>(PhaseBin(s.t_ns, period_ns, bins));
    sums[b] += s.runnable;
    ++out.counts[b];
  }
  out.bins.resize(static_cast<size_t>(bins));
  int peak_bin = -1;
  out.floor = std::numeric_limits<double>::infinity();
  for (size_t b = 0; b < sums.size(); ++b) {
    if (out.counts[b] == 0) {
      out.bins[b] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    out.bins[b] = sums[b] / static_cast<double>(out.counts[b]);
    if (peak_bin < 0 || out.bins[b] > out.peak) {
      out.peak = out.bins[b];
      peak_bin = static_cast<int>(b);
    }
    out.floor = std::min(out.floor, out.bins[b]);
  }
  if (peak_bin < 0) {
    out.floor = 0;
    return out;
  }
  const double width = out.period_ns.ToDouble() / bins;
  out.peak_phase_ns = static_cast<int64_t>(std::llround((peak_bin + 0.5) * width));
  const double level = out.floor + (out.peak - out.floor) / 2;
  auto above = [&](int b) {
    const auto i = static_cast<size_t>(((b % bins) + bins) % bins);
    return out.counts[i] > 0 && out.bins[i] >= level;
  };
  int run = 1;
  for (int d = 1; d < bins && above(peak_bin + d); ++d) ++run;
  for (int d = 1; run < bins && above(peak_bin - d); ++d) ++run;
  out.half_height_width_ns = static_cast<int64_t>(std::llround(run * width));
  return out;
}

}  // namespace pagereel::probe
