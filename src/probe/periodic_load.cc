#include "probe/periodic_load.h"

#include <sched.h>

#include <string>

#include "base/thread.h"
#include "probe/clock_probe.h"
#include "base/tick_clock.h"

namespace pagereel::probe {

PeriodicLoad::PeriodicLoad(const Options& options) {
  for (int i = 0; i < options.threads; ++i) {
    threads_.emplace_back([options, i](std::stop_token stop) {
      SetCurrentThreadName("pr-load" + std::to_string(i));
      Run(stop, options);
    });
  }
}

PeriodicLoad::~PeriodicLoad() {
  for (auto& t : threads_) t.request_stop();
}  // The jthreads join here.

void PeriodicLoad::Run(std::stop_token stop, Options options) {
  TickClock& clock = SystemTickClock();
  const Rational p = options.period_ns;
  // The first whole period after now: tick n is at n * period on CLOCK_MONOTONIC.
  int64_t n = static_cast<int64_t>(static_cast<double>(clock.MonotonicNs()) / p.ToDouble()) + 1;
  while (!stop.stop_requested()) {
    const int64_t start = TickDeadlineNs(0, p, n) + options.phase.count();
    clock.SleepUntil(start);
    // Yielding keeps the thread runnable, which is what the probe counts, without keeping a
    // CPU from anyone else. A plain spin with more threads than CPUs starved the sampler: on
    // 2 CPUs with 4 threads it took no sample at all in the first 1.5 ms of the spike.
    while (clock.MonotonicNs() < start + options.width.count() && !stop.stop_requested()) {
      sched_yield();
    }
    ++n;
  }
}

}  // namespace pagereel::probe
