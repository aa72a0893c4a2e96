// `pagereel probe`, the sampler run: everything measured in one run of the Poisson sampler
// (runnable count, fold, periodogram, PSI, schedstat, the load average beside it) and the
// report that comes out. RunProbe blocks the calling thread for the duration.
#ifndef PAGEREEL_PROBE_PROBE_RUN_H_
#define PAGEREEL_PROBE_PROBE_RUN_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "probe/fold.h"
#include "probe/host_files.h"
#include "probe/periodogram.h"
#include "probe/proc_readers.h"
#include "probe/schedstat.h"

namespace pagereel::probe {

struct ProbeOptions {
  Rational period_ns = Rational::Make(1'000'000'000, 60);  // Fold period.
  std::string period_source = "default 60 fps";             // How it was chosen, for the report.
  std::chrono::nanoseconds duration{std::chrono::seconds(10)};
  double rate_hz = 100;
  std::vector<int> pids;  // Empty: every process, the busiest shown.
  int fold_bins = 32;
  int top_processes = 10;
  uint64_t seed = 0;
  const std::atomic<bool>* stop = nullptr;
};

struct Summary {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};

struct ProbeReport {
  ProbeOptions options;
  int cpus = 0;
  double elapsed_s = 0;

  // Runnable threads (excluding the sampler itself).
  Summary runnable;
  double above_cpus_share = 0;          // Share of samples (= of time) above the CPU count.
  std::map<int, int64_t> runnable_histogram;  // Runnable count -> samples.

  FoldResult fold;
  Periodogram periodogram;

  std::optional<Pressure> psi_start, psi_end;
  std::string psi_note;  // Why PSI is missing, when it is.

  std::vector<ProcessUsage> processes;  // Top ones (or the --pid ones).
  bool migrations_visible = false;
  std::string schedstat_note;

  int64_t samples = 0;
  Summary wake_delay_us;
  double sampler_cpu_s = 0;

  double load1_min = 0, load1_max = 0, load1_start = 0, load1_end = 0;

  std::vector<std::string> notes;  // Anything the reader should know (missing files ...).
};

// Checks the options (positive rate and duration, pids that exist) before any waiting.
Status ValidateProbeOptions(const ProbeOptions& options, const HostFiles& files);

Result<ProbeReport> RunProbe(const ProbeOptions& options, const HostFiles& files);

// Builds the report from samples already taken; RunProbe's second half, exposed so tests
// and benchmarks can feed synthetic series.
ProbeReport Analyze(const ProbeOptions& options, int cpus, const SampleSeries& series);

// Online CPUs from /sys/devices/system/cpu/online, falling back to /proc/cpuinfo.
int CountOnlineCpus(const HostFiles& files);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_PROBE_RUN_H_
