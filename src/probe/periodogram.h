// The periodogram of an unevenly sampled series: which periodic components the runnable
// count has, at what frequency and with what amplitude.
//
// A coarse spectrum comes from an FFT of the samples placed on a fine time grid; each
// candidate peak is then refined with the exact (non-uniform) Fourier sum over the raw
// sample times, so the frequency is as precise as the run is long (60.0024 Hz is told from
// 60.000 Hz in a 60 s run). A Hann taper keeps one strong line from raising false peaks
// beside it. Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_PERIODOGRAM_H_
#define PAGEREEL_PROBE_PERIODOGRAM_H_

#include <span>
#include <vector>

#include "probe/sampler.h"

namespace pagereel::probe {

struct PeriodogramOptions {
  double min_hz = 0.5;    // Components slower than this are left out (drift, not frame clocks).
  double max_hz = 500;    // Lowered automatically for very long runs (grid size cap).
  int max_peaks = 8;
};

struct PeriodicComponent {
  double hz;
  double amplitude;  // Of the sinusoid, in runnable threads (peak, not peak-to-peak).
  // Above kSignificantRatio times the median amplitude: very unlikely to be noise (the
  // amplitudes of pure noise follow a Rayleigh law whose 1e-6 tail is at 4.4 medians).
  bool significant = false;
};

inline constexpr double kSignificantRatio = 4.5;

struct Periodogram {
  std::vector<PeriodicComponent> peaks;  // Strongest first.
  double noise_amplitude = 0;            // Median amplitude over the scanned band.
  double resolution_hz = 0;              // 1 / run length.
  double max_hz = 0;                     // Upper edge actually scanned.
  // The coarse spectrum for plotting, max-pooled to at most kSpectrumPoints points.
  std::vector<double> spectrum_hz, spectrum_amplitude;
};

inline constexpr size_t kSpectrumPoints = 2000;

Periodogram ComputePeriodogram(std::span<const Sample> samples, const PeriodogramOptions& options);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_PERIODOGRAM_H_
