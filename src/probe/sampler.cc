#include "probe/sampler.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <random>

#include "base/unique_fd.h"

namespace pagereel::probe {
namespace {

int64_t ToNs(const timespec& ts) { return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec; }

timespec FromNs(int64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return ts;
}

void SleepUntil(int64_t deadline_ns) {
  const timespec ts = FromNs(deadline_ns);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ToNs(ts);
}

}  // namespace

int64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ToNs(ts);
}

Result<LoadAvgSource> OpenLoadAvgSource(const std::string& path) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return ErrnoError(path, errno);
  auto fd = std::make_shared<UniqueFd>(raw);
  return LoadAvgSource([fd, path]() -> Result<LoadAvg> {
    char buffer[128];
    ssize_t n;
    do {
      n = ::pread(fd->get(), buffer, sizeof buffer - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoError(path, errno);
    return ParseLoadAvg(std::string_view(buffer, static_cast<size_t>(n)));
  });
}

Result<SampleSeries> RunSampler(const SamplerOptions& options, const LoadAvgSource& source) {
  std::mt19937_64 rng(options.seed != 0 ? options.seed : std::random_device{}());
  std::exponential_distribution<double> gap_s(options.rate_hz);
  SampleSeries series;
  series.samples.reserve(static_cast<size_t>(
      std::min(1e8, options.rate_hz * static_cast<double>(options.duration.count()) * 1.2e-9 + 16)));
  // The default 50 us timer slack would add up to 50 us to every wake-up we measure.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const int64_t cpu_start = ThreadCpuNs();
  series.start_ns = MonotonicNowNs();
  const int64_t end = series.start_ns + options.duration.count();
  // The schedule is a Poisson process of its own: a late wake-up delays one sample, not
  // the instants after it.
  int64_t next = series.start_ns;
  for (;;) {
    next += static_cast<int64_t>(gap_s(rng) * 1e9);
    if (next >= end) break;
    if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) break;
    SleepUntil(next);
    const int64_t woke = MonotonicNowNs();
    PR_ASSIGN_OR_RETURN(LoadAvg load, source());
    series.samples.push_back(Sample{
        woke, static_cast<int32_t>(std::max<int64_t>(load.running - 1, 0)),
        static_cast<int32_t>(std::min<int64_t>(woke - next, INT32_MAX)),
        static_cast<float>(load.load1)});
  }
  const bool stopped = options.stop != nullptr && options.stop->load(std::memory_order_relaxed);
  if (!stopped) SleepUntil(end);  // The run covers the whole duration, sampled or not.
  series.end_ns = std::max(MonotonicNowNs(), series.start_ns + 1);
  series.cpu_time_ns = ThreadCpuNs() - cpu_start;
  return series;
}

}  // namespace pagereel::probe
