// The Poisson sampler: reads the host's runnable-thread count (the "running" field of
// /proc/loadavg) at random instants whose gaps are exponential with a chosen mean rate.
//
// Randomly spaced samples cannot alias with a frame clock the way a fixed-rate sampler can,
// and their plain average is the time average of the count (Poisson arrivals see time
// averages). RunSampler runs on the calling thread and returns when the duration has passed
// or *stop becomes true.
#ifndef PAGEREEL_PROBE_SAMPLER_H_
#define PAGEREEL_PROBE_SAMPLER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "probe/proc_readers.h"

namespace pagereel::probe {

struct Sample {
  int64_t t_ns;           // CLOCK_MONOTONIC when the count was read.
  int32_t runnable;       // Runnable threads, the sampler's own thread not counted.
  int32_t wake_delay_ns;  // How late the sampler woke for this sample (saturates at 2^31).
  float load1;            // The one-minute load average the kernel showed at that moment.
};

// Where a sample comes from; the real one reads /proc/loadavg (see OpenLoadAvgSource).
using LoadAvgSource = std::function<Result<LoadAvg>()>;

// Opens /proc/loadavg (below `root`) once and re-reads it with pread on every call.
Result<LoadAvgSource> OpenLoadAvgSource(const std::string& path = "/proc/loadavg");

struct SamplerOptions {
  double rate_hz = 100;                        // Mean samples per second. REQUIRES: > 0.
  std::chrono::nanoseconds duration{std::chrono::seconds(10)};
  uint64_t seed = 0;                           // 0 picks a random seed.
  const std::atomic<bool>* stop = nullptr;     // Optional early stop (Ctrl-C).
};

struct SampleSeries {
  std::vector<Sample> samples;
  int64_t start_ns = 0;      // CLOCK_MONOTONIC at the start and end of the run.
  int64_t end_ns = 0;
  int64_t cpu_time_ns = 0;   // CPU time the sampling thread used.
};

// Samples until the duration passes. Fails when the source fails.
Result<SampleSeries> RunSampler(const SamplerOptions& options, const LoadAvgSource& source);

// CLOCK_MONOTONIC in nanoseconds.
int64_t MonotonicNowNs();

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_SAMPLER_H_
