#include "probe/periodogram.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

namespace pagereel::probe {
namespace {

using Complex = std::complex<double>;

// In-place iterative radix-2 FFT. REQUIRES: data.size() is a power of two.
//
// Written here rather than taken from libavutil's av_tx, which pagereel links already: av_tx
// (FFmpeg 5.1 on Debian 12; later sources still stop at the same size) has fast power-of-two
// codelets only up to 2^17 points and above that falls back to its naive O(n^2) DFT. This
// grid is 2^19 points for a 60 s run and up to 2^23; at the 26 ns per term measured for
// av_tx's naive DFT on the build machine, 2^19 points would take about two hours.
void Fft(std::vector<Complex>& data) {
  const size_t n = data.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const double angle = -2 * std::numbers::pi / static_cast<double>(len);
    const Complex step(std::cos(angle), std::sin(angle));
    for (size_t i = 0; i < n; i += len) {
      Complex w(1, 0);
      for (size_t k = 0; k < len / 2; ++k) {
        const Complex u = data[i + k];
        const Complex v = data[i + k + len / 2] * w;
        data[i + k] = u + v;
        data[i + k + len / 2] = u - v;
        w *= step;
      }
    }
  }
}

struct Prepared {
  std::vector<double> t_s;  // Seconds since the first sample.
  std::vector<double> x;    // Tapered, mean-removed values.
  double weight_sum = 0;
};

Prepared Prepare(std::span<const Sample> samples) {
  Prepared p;
  if (samples.size() < 2) return p;
  const int64_t t0 = samples.front().t_ns;
  const double span_s = static_cast<double>(samples.back().t_ns - t0) * 1e-9;
  double mean = 0;
  for (const Sample& s : samples) mean += s.runnable;
  mean /= static_cast<double>(samples.size());
  p.t_s.reserve(samples.size());
  p.x.reserve(samples.size());
  for (const Sample& s : samples) {
    const double t = static_cast<double>(s.t_ns - t0) * 1e-9;
    const double w = span_s > 0 ? 0.5 - 0.5 * std::cos(2 * std::numbers::pi * t / span_s) : 1;
    p.t_s.push_back(t);
    p.x.push_back(w * (s.runnable - mean));
    p.weight_sum += w;
  }
  return p;
}

double Amplitude(const Prepared& p, double hz) {
  if (p.weight_sum <= 0) return 0;
  double re = 0, im = 0;
  const double omega = 2 * std::numbers::pi * hz;
  for (size_t i = 0; i < p.t_s.size(); ++i) {
    const double phase = omega * p.t_s[i];
    re += p.x[i] * std::cos(phase);
    im -= p.x[i] * std::sin(phase);
  }
  return 2 * std::hypot(re, im) / p.weight_sum;
}

// Amplitude(p, first + k * step) for k = 0 .. count-1 in one pass: per sample, two sincos
// and then one complex multiply per frequency (the phasor steps by e^{-i 2 pi step t}).
std::vector<double> AmplitudeComb(const Prepared& p, double first_hz, double step_hz, size_t count) {
  std::vector<Complex> sums(count);
  for (size_t i = 0; i < p.t_s.size(); ++i) {
    const double t = p.t_s[i];
    Complex z = p.x[i] * std::polar(1.0, -2 * std::numbers::pi * first_hz * t);
    const Complex rotate = std::polar(1.0, -2 * std::numbers::pi * step_hz * t);
    for (size_t k = 0; k < count; ++k) {
      sums[k] += z;
      z *= rotate;
    }
  }
  std::vector<double> out(count);
  for (size_t k = 0; k < count; ++k) out[k] = p.weight_sum > 0 ? 2 * std::abs(sums[k]) / p.weight_sum : 0;
  return out;
}

}  // namespace

Periodogram ComputePeriodogram(std::span<const Sample> samples, const PeriodogramOptions& options) {
  Periodogram out;
  const Prepared p = Prepare(samples);
  if (p.t_s.size() < 16 || p.t_s.back() <= 0) return out;
  const double span_s = p.t_s.back();
  out.resolution_hz = 1 / span_s;

  // The grid is four times finer than the highest frequency needs, so a sample moved to its
  // grid point shifts a component's phase by at most pi/4; zero-padded twice over.
  constexpr size_t kMaxGrid = size_t{1} << 23;
  double max_hz = options.max_hz;
  while (max_hz > options.min_hz && span_s * max_hz * 8 * 2 > static_cast<double>(kMaxGrid)) {
    max_hz /= 2;
  }
  out.max_hz = max_hz;
  const double dt = 1 / (8 * max_hz);
  size_t n = 1;
  while (static_cast<double>(n) < 2 * (span_s / dt + 1)) n <<= 1;
  std::vector<Complex> grid(n);
  for (size_t i = 0; i < p.t_s.size(); ++i) {
    const auto k = static_cast<size_t>(std::llround(p.t_s[i] / dt));
    grid[std::min(k, n - 1)] += p.x[i];
  }
  Fft(grid);
  const double bin_hz = 1 / (dt * static_cast<double>(n));
  const auto first = static_cast<size_t>(std::max(1.0, std::ceil(options.min_hz / bin_hz)));
  const auto last = std::min(n / 2 - 1, static_cast<size_t>(max_hz / bin_hz));
  if (first + 2 >= last) return out;
  std::vector<double> amp(last + 2, 0.0);
  for (size_t k = first - 1; k <= last + 1; ++k) amp[k] = 2 * std::abs(grid[k]) / p.weight_sum;

  std::vector<double> band(amp.begin() + static_cast<long>(first), amp.begin() + static_cast<long>(last) + 1);
  std::nth_element(band.begin(), band.begin() + static_cast<long>(band.size() / 2), band.end());
  out.noise_amplitude = band[band.size() / 2];

  const size_t pool = (last - first + 1 + kSpectrumPoints - 1) / kSpectrumPoints;
  for (size_t k = first; k <= last; k += pool) {
    size_t best = k;
    for (size_t i = k; i < std::min(k + pool, last + 1); ++i) {
      if (amp[i] > amp[best]) best = i;
    }
    out.spectrum_hz.push_back(static_cast<double>(best) * bin_hz);
    out.spectrum_amplitude.push_back(amp[best]);
  }

  // Local maxima of the coarse spectrum, strongest first.
  std::vector<size_t> candidates;
  for (size_t k = first; k <= last; ++k) {
    if (amp[k] > amp[k - 1] && amp[k] >= amp[k + 1]) candidates.push_back(k);
  }
  std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) { return amp[a] > amp[b]; });
  const size_t to_refine = std::min(candidates.size(), static_cast<size_t>(options.max_peaks) * 4);

  std::vector<PeriodicComponent> refined;
  for (size_t c = 0; c < to_refine; ++c) {
    // Dense exact search over +-1 coarse bin, then a parabola through the best three points.
    const double centre = static_cast<double>(candidates[c]) * bin_hz;
    constexpr int kSteps = 10;
    const double step = bin_hz / kSteps;
    double best_hz = centre, best = -1, left = 0, right = 0;
    const std::vector<double> values = AmplitudeComb(p, centre - kSteps * step, step, 2 * kSteps + 1);
    size_t bi = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] > best) best = values[i], bi = i;
    }
    best_hz = centre + (static_cast<double>(bi) - kSteps) * step;
    if (bi > 0 && bi + 1 < values.size()) {
      left = values[bi - 1];
      right = values[bi + 1];
      const double denom = left - 2 * best + right;
      if (denom < 0) best_hz += 0.5 * (left - right) / denom * step;
    }
    if (best_hz < options.min_hz || best_hz > max_hz) continue;
    refined.push_back({best_hz, Amplitude(p, best_hz)});
  }
  std::sort(refined.begin(), refined.end(),
            [](const PeriodicComponent& a, const PeriodicComponent& b) { return a.amplitude > b.amplitude; });
  // A Hann main lobe is 4 / span wide; a second candidate inside it is the same line.
  for (const PeriodicComponent& r : refined) {
    bool duplicate = false;
    for (const PeriodicComponent& kept : out.peaks) {
      if (std::abs(kept.hz - r.hz) < 2.5 / span_s) duplicate = true;
    }
    if (duplicate) continue;
    out.peaks.push_back(r);
    out.peaks.back().significant = r.amplitude > kSignificantRatio * out.noise_amplitude;
    if (out.peaks.size() == static_cast<size_t>(options.max_peaks)) break;
  }
  return out;
}

}  // namespace pagereel::probe
