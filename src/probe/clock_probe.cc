#include "probe/clock_probe.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>

#include "base/thread.h"
#include "probe/fold.h"
#include "probe/proc_readers.h"

namespace pagereel::probe {
namespace {

__extension__ using Int128 = __int128;  // GCC and Clang both have it; -Wpedantic does not know.

constexpr size_t kMaxExcursions = 100000;

}  // namespace

namespace {

std::string DescribeScheduling(const ClockOptions& o) {
  std::string s = o.fifo_priority ? "SCHED_FIFO " + std::to_string(*o.fifo_priority) : "SCHED_OTHER";
  s += o.cpu ? ", pinned to CPU " + std::to_string(*o.cpu) : ", not pinned";
  return s;
}

// What the clock thread hands back when it is done.
struct ClockThreadResult {
  Status status;
  std::vector<int64_t> late_ns;
  std::vector<Excursion> excursions;
  std::map<int, int64_t> wake_cpus;
  int64_t missed = 0;
};

void ClockLoop(const ClockOptions& o, const ClockHooks& hooks, TickClock& clock, Rational period,
               int64_t expected, std::atomic<int64_t>& start_out, ClockThreadResult& out) {
  SetCurrentThreadName("pr-clock");
  out.status = ConfigureClockThread(o.cpu, o.fifo_priority);
  if (!out.status.ok()) {
    start_out.store(-1);
    return;
  }
  out.late_ns.reserve(static_cast<size_t>(expected));
  // Start two periods ahead, so the first deadline is not already behind us.
  const int64_t start = clock.MonotonicNs() + 2 * static_cast<int64_t>(period.ToDouble());
  start_out.store(start);
  const int64_t threshold = o.threshold.count();
  for (int64_t n = 0; n < expected;) {
    if (o.stop != nullptr && o.stop->load(std::memory_order_relaxed)) break;
    const int64_t deadline = TickDeadlineNs(start, period, n);
    if (hooks.before_sleep) hooks.before_sleep(n, deadline);
    clock.SleepUntil(deadline);
    const int64_t woke = clock.MonotonicNs();
    const int64_t late = std::max<int64_t>(woke - deadline, 0);
    out.late_ns.push_back(late);
    const int cpu = sched_getcpu();
    ++out.wake_cpus[cpu];
    if (late > threshold) {
      const Excursion e{n, woke, clock.RealtimeNs(), late};
      if (out.excursions.size() < kMaxExcursions) out.excursions.push_back(e);
      if (hooks.on_late) hooks.on_late(e);
    }
    // A frame clock a whole period behind drops the ticks it can no longer make: tick n is
    // dropped when the one after it is already due.
    ++n;
    while (n < expected && TickDeadlineNs(start, period, n + 1) <= woke) {
      ++n;
      ++out.missed;
    }
  }
}

// One look at /proc/timer_list: on which CPU is a timer for one of our deadlines armed?
void WatchTimers(const HostFiles& files, int64_t start, Rational period, std::map<int, int64_t>& cpus,
                 std::string& note) {
  auto text = files.Read("/proc/timer_list");
  if (!text.ok()) {
    note = "cannot see which CPU expires the clock's timer: /proc/timer_list is not readable (" +
           std::string(text.status().message()) + "); run as root to see it";
    return;
  }
  auto timers = ParseTimerList(*text);
  if (!timers.ok()) {
    note = "cannot see which CPU expires the clock's timer: " + std::string(timers.status().message());
    return;
  }
  for (const auto& [cpu, n] : MatchClockTimers(*timers, start, period)) cpus[cpu] += n;
}

}  // namespace

std::map<int, int64_t> MatchClockTimers(const std::vector<HrTimer>& timers, int64_t start_ns, Rational period_ns) {
  std::map<int, int64_t> cpus;
  for (const HrTimer& t : timers) {
    if (t.clock_base != 0 || t.function != "hrtimer_wakeup" || t.soft_expiry_ns < start_ns) continue;
    // Tick n is at start + floor(n * num / den); the nearest n is round((t - start) * den / num).
    const Int128 scaled = static_cast<Int128>(t.soft_expiry_ns - start_ns) * period_ns.den;
    const auto n = static_cast<int64_t>((scaled + period_ns.num / 2) / period_ns.num);
    if (TickDeadlineNs(start_ns, period_ns, n) == t.soft_expiry_ns) ++cpus[t.cpu];
  }
  return cpus;
}

int64_t TickDeadlineNs(int64_t start_ns, Rational period_ns, int64_t n) {
  return start_ns + static_cast<int64_t>(static_cast<Int128>(n) * period_ns.num / period_ns.den);
}

Status ValidateClockOptions(const ClockOptions& o) {
  if (o.fps.num <= 0 || o.fps.den <= 0) return InvalidArgumentError("--fps must be greater than zero");
  if (o.duration.count() <= 0) return InvalidArgumentError("--duration must be greater than zero");
  if (o.threshold.count() <= 0) return InvalidArgumentError("--threshold must be greater than zero");
  if (o.fifo_priority && (*o.fifo_priority < 1 || *o.fifo_priority > 99)) {
    return InvalidArgumentError("--fifo " + std::to_string(*o.fifo_priority) +
                                ": SCHED_FIFO priorities run from 1 to 99");
  }
  if (o.cpu && (*o.cpu < 0 || *o.cpu >= CPU_SETSIZE)) {
    return InvalidArgumentError("--cpu " + std::to_string(*o.cpu) + ": not a CPU number");
  }
  const double ticks = o.fps.ToDouble() * static_cast<double>(o.duration.count()) * 1e-9;
  if (ticks > 1e9) return InvalidArgumentError("--duration: more than a billion ticks; shorten it");
  return Status::Ok();
}

Result<ClockReport> RunClockProbe(const ClockOptions& options, const ClockHooks& hooks, TickClock& clock,
                                  const HostFiles& files) {
  PR_RETURN_IF_ERROR(ValidateClockOptions(options));
  ClockReport r;
  r.options = options;
  r.scheduling = DescribeScheduling(options);
  const Rational period = PeriodFromFrameRate(options.fps);
  r.ticks_expected = FramesInDuration(static_cast<double>(options.duration.count()) * 1e-9, options.fps);

  std::atomic<int64_t> start{0};
  std::atomic<bool> done{false};
  ClockThreadResult result;
  {
    std::jthread clock_thread([&] {
      ClockLoop(options, hooks, clock, period, r.ticks_expected, start, result);
      done.store(true);
    });
    // Watch the timers from here while the clock thread ticks.
    if (options.timer_watch == TimerWatch::kOn) {
      while (!done.load() && r.timer_cpu_note.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        const int64_t s = start.load();
        if (s > 0 && !done.load()) WatchTimers(files, s, period, r.timer_cpus, r.timer_cpu_note);
      }
    }
  }
  PR_RETURN_IF_ERROR(result.status);
  if (options.timer_watch == TimerWatch::kOff) {
    r.timer_cpu_note = "not watched";
  } else if (r.timer_cpus.empty() && r.timer_cpu_note.empty()) {
    r.timer_cpu_note = "the clock's timer was not caught in /proc/timer_list (the run was too short, or the "
                       "thread was never asleep when it was read)";
  }

  r.ticks = static_cast<int64_t>(result.late_ns.size());
  r.ticks_missed = result.missed;
  r.wake_cpus = std::move(result.wake_cpus);
  r.excursions = std::move(result.excursions);
  r.histogram = MakeLogHistogram(result.late_ns);
  for (int64_t v : result.late_ns) {
    if (v > options.threshold.count()) ++r.late;
  }
  std::vector<double> sorted(result.late_ns.begin(), result.late_ns.end());
  std::sort(sorted.begin(), sorted.end());
  r.p50_ns = Quantile(sorted, 0.5);
  r.p99_ns = Quantile(sorted, 0.99);
  r.p999_ns = Quantile(sorted, 0.999);
  r.max_ns = sorted.empty() ? 0 : sorted.back();
  for (size_t i = 1; i < r.excursions.size(); ++i) {
    r.gaps_s.push_back(static_cast<double>(r.excursions[i].monotonic_ns - r.excursions[i - 1].monotonic_ns) * 1e-9);
  }
  return r;
}

}  // namespace pagereel::probe
