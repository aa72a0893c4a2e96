#include "probe/probe_run.h"

#include <algorithm>
#include <cmath>

#include "probe/sampler.h"
#include "probe/stats.h"

namespace pagereel::probe {
namespace {

Summary Summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.p50 = Quantile(values, 0.50);
  s.p95 = Quantile(values, 0.95);
  s.p99 = Quantile(values, 0.99);
  s.max = values.back();
  return s;
}

}  // namespace

int CountOnlineCpus(const HostFiles& files) {
  if (auto text = files.Read("/sys/devices/system/cpu/online"); text.ok()) {
    if (auto cpus = ParseCpuList(*text); cpus.ok() && !cpus->empty()) return static_cast<int>(cpus->size());
  }
  if (auto text = files.Read("/proc/cpuinfo"); text.ok()) {
    const int n = ParseCpuInfo(*text).logical_cpus;
    if (n > 0) return n;
  }
  return 1;
}

Status ValidateProbeOptions(const ProbeOptions& options, const HostFiles& files) {
  if (!(options.rate_hz > 0) || !std::isfinite(options.rate_hz)) {
    return InvalidArgumentError("--rate must be a positive number of samples per second");
  }
  if (options.rate_hz > 100000) {
    return InvalidArgumentError("--rate above 100000 samples per second would measure the sampler itself");
  }
  if (options.duration.count() <= 0) return InvalidArgumentError("--duration must be greater than zero");
  if (options.period_ns.num <= 0 || options.period_ns.den <= 0) {
    return InvalidArgumentError("the fold period must be greater than zero");
  }
  if (options.fold_bins < 4 || options.fold_bins > 4096) {
    return InvalidArgumentError("--bins must be between 4 and 4096");
  }
  for (int pid : options.pids) {
    if (pid <= 0 || !files.Exists("/proc/" + std::to_string(pid))) {
      return NotFoundError("--pid " + std::to_string(pid) + ": no such process");
    }
  }
  return Status::Ok();
}

ProbeReport Analyze(const ProbeOptions& options, int cpus, const SampleSeries& series) {
  ProbeReport r;
  r.options = options;
  r.cpus = cpus;
  r.elapsed_s = static_cast<double>(series.end_ns - series.start_ns) * 1e-9;
  r.samples = static_cast<int64_t>(series.samples.size());
  r.sampler_cpu_s = static_cast<double>(series.cpu_time_ns) * 1e-9;

  std::vector<double> runnable, delays;
  runnable.reserve(series.samples.size());
  delays.reserve(series.samples.size());
  int64_t above = 0;
  for (const Sample& s : series.samples) {
    runnable.push_back(s.runnable);
    delays.push_back(s.wake_delay_ns * 1e-3);
    if (s.runnable > cpus) ++above;
    ++r.runnable_histogram[s.runnable];
  }
  r.runnable = Summarize(std::move(runnable));
  r.wake_delay_us = Summarize(std::move(delays));
  r.above_cpus_share = series.samples.empty() ? 0 : static_cast<double>(above) / static_cast<double>(series.samples.size());
  if (!series.samples.empty()) {
    auto [lo, hi] = std::minmax_element(series.samples.begin(), series.samples.end(),
                                        [](const Sample& a, const Sample& b) { return a.load1 < b.load1; });
    r.load1_min = static_cast<double>(lo->load1);
    r.load1_max = static_cast<double>(hi->load1);
    r.load1_start = static_cast<double>(series.samples.front().load1);
    r.load1_end = static_cast<double>(series.samples.back().load1);
  }
  r.fold = Fold(series.samples, options.period_ns, options.fold_bins);
  r.periodogram = ComputePeriodogram(series.samples, PeriodogramOptions{});
  if (r.samples < 100) {
    r.notes.push_back("only " + std::to_string(r.samples) +
                      " samples: raise --duration or --rate for a fold and periodogram worth reading");
  }
  return r;
}

Result<ProbeReport> RunProbe(const ProbeOptions& options, const HostFiles& files) {
  PR_RETURN_IF_ERROR(ValidateProbeOptions(options, files));
  const int cpus = CountOnlineCpus(files);

  std::optional<Pressure> psi_start;
  std::string psi_note;
  if (auto text = files.Read("/proc/pressure/cpu"); !text.ok()) {
    psi_note = "no CPU pressure (PSI): /proc/pressure/cpu is missing; the kernel needs "
               "CONFIG_PSI=y (and psi=1 on the command line where it is off by default)";
  } else if (auto parsed = ParsePressure(*text); !parsed.ok()) {
    psi_note = "CPU pressure (PSI) unreadable: " + std::string(parsed.status().message());
  } else {
    psi_start = *parsed;
  }

  PR_ASSIGN_OR_RETURN(SchedSnapshot sched_start, TakeSchedSnapshot(files, options.pids));
  const int64_t sched_start_ns = MonotonicNowNs();

  PR_ASSIGN_OR_RETURN(LoadAvgSource source, OpenLoadAvgSource(files.Resolve("/proc/loadavg")));
  SamplerOptions sampler{options.rate_hz, options.duration, options.seed, options.stop};
  PR_ASSIGN_OR_RETURN(SampleSeries series, RunSampler(sampler, source));

  const int64_t sched_end_ns = MonotonicNowNs();
  auto sched_end = TakeSchedSnapshot(files, options.pids);

  ProbeReport r = Analyze(options, cpus, series);
  r.psi_start = psi_start;
  r.psi_note = psi_note;
  if (psi_start) {
    auto text = files.Read("/proc/pressure/cpu");
    auto parsed = text.ok() ? ParsePressure(*text) : Result<Pressure>(text.status());
    if (parsed.ok()) r.psi_end = *parsed;
  }
  if (!sched_end.ok()) {
    r.schedstat_note = "schedstat at the end of the run: " + std::string(sched_end.status().message());
  } else {
    r.processes = DiffSnapshots(sched_start, *sched_end, sched_end_ns - sched_start_ns);
    r.migrations_visible = sched_start.migrations_visible;
    if (!r.migrations_visible) {
      r.schedstat_note = "per-thread migrations are not visible: /proc/PID/task/TID/sched needs CONFIG_SCHED_DEBUG";
    }
    if (options.pids.empty() && r.processes.size() > static_cast<size_t>(options.top_processes)) {
      r.processes.resize(static_cast<size_t>(options.top_processes));
    }
  }
  return r;
}

}  // namespace pagereel::probe
