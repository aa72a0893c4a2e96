// `pagereel probe clock`: a frame clock like a playout engine's, measured. One thread wakes
// at every frame instant with absolute sleeps on CLOCK_MONOTONIC, optionally pinned to a CPU
// and SCHED_FIFO, and records how late each wake-up was (the clock phase). Meanwhile the
// calling thread reads /proc/timer_list to see which CPU the sleeping thread's timer is
// armed on, where the kernel lets it.
//
// RunClockProbe blocks the calling thread; the hooks run on the clock thread.
#ifndef PAGEREEL_PROBE_CLOCK_PROBE_H_
#define PAGEREEL_PROBE_CLOCK_PROBE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "probe/host_files.h"
#include "probe/proc_readers.h"
#include "probe/stats.h"
#include "base/tick_clock.h"

namespace pagereel::probe {

enum class TimerWatch { kOn, kOff };

struct ClockOptions {
  Rational fps = Rational::Make(60, 1);
  std::chrono::nanoseconds duration{std::chrono::seconds(10)};
  std::chrono::nanoseconds threshold{std::chrono::microseconds(500)};  // Late above this.
  std::optional<int> cpu;            // Pin the clock thread.
  std::optional<int> fifo_priority;  // SCHED_FIFO priority, 1..99.
  TimerWatch timer_watch = TimerWatch::kOn;
  const std::atomic<bool>* stop = nullptr;
};

// A tick that woke later than the threshold.
struct Excursion {
  int64_t tick;
  int64_t monotonic_ns;  // When it woke.
  int64_t realtime_ns;   // The same instant on the wall clock.
  int64_t late_ns;
};

struct ClockHooks {
  // The tripwire: called on the clock thread right after a late tick is recorded.
  std::function<void(const Excursion&)> on_late;
  // Fault injection for tests: runs on the clock thread just before it sleeps for `tick`.
  std::function<void(int64_t tick, int64_t deadline_ns)> before_sleep;
};

struct ClockReport {
  ClockOptions options;
  std::string scheduling;       // "SCHED_FIFO 80, pinned to CPU 2", "SCHED_OTHER, not pinned".
  int64_t ticks_expected = 0;   // Frames in the duration at the rate.
  int64_t ticks = 0;            // Ticks the thread woke for.
  int64_t ticks_missed = 0;     // Ticks skipped because a wake-up came a whole period late.
  int64_t late = 0;             // Ticks later than the threshold.
  double p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  LogHistogram histogram;
  std::vector<Excursion> excursions;  // In order; the first 100000 kept.
  std::vector<double> gaps_s;         // Between consecutive excursions.
  std::map<int, int64_t> wake_cpus;   // CPU the thread ran on after waking -> ticks.
  std::map<int, int64_t> timer_cpus;  // CPU whose timer base held the thread's timer -> sightings.
  std::string timer_cpu_note;         // Why timer_cpus is empty, when it is.
};

// Checks the options before any waiting: positive rate and duration, threshold, priority.
Status ValidateClockOptions(const ClockOptions& options);

// Runs the clock for the duration (or until *stop). kFailedPrecondition when pinning or
// SCHED_FIFO is refused, with a message that says what right is missing.
Result<ClockReport> RunClockProbe(const ClockOptions& options, const ClockHooks& hooks, TickClock& clock,
                                  const HostFiles& files);

// Sightings per CPU of timers in `timers` (from /proc/timer_list) that belong to a clock
// whose ticks are at TickDeadlineNs(start_ns, period_ns, n): a sleeping thread's
// hrtimer_wakeup on CLOCK_MONOTONIC whose soft expiry is exactly one of those deadlines.
std::map<int, int64_t> MatchClockTimers(const std::vector<HrTimer>& timers, int64_t start_ns,
                                        Rational period_ns);

// Deadline of tick n on a schedule starting at `start_ns` with period `period_ns` (ns, exact).
int64_t TickDeadlineNs(int64_t start_ns, Rational period_ns, int64_t n);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_CLOCK_PROBE_H_
