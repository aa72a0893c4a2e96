// TickClock: the clocks and the absolute sleep a frame clock needs (live's show clock,
// `probe clock`), behind an interface so tests can run them on simulated time. The system one is CLOCK_MONOTONIC with
// clock_nanosleep(TIMER_ABSTIME) and CLOCK_REALTIME for wall stamps; it is stateless and
// safe from any thread. Fakes are used from one thread.
#ifndef PAGEREEL_BASE_TICK_CLOCK_H_
#define PAGEREEL_BASE_TICK_CLOCK_H_

#include <cstdint>
#include <optional>

#include "base/status.h"

namespace pagereel {

class TickClock {
 public:
  virtual ~TickClock() = default;
  virtual int64_t MonotonicNs() = 0;
  virtual int64_t RealtimeNs() = 0;
  // Returns at or after `monotonic_ns` (absolute), however late the host wakes us.
  virtual void SleepUntil(int64_t monotonic_ns) = 0;
};

// The process-wide system clock.
TickClock& SystemTickClock();

// Makes the calling thread a frame clock's: pins it to `cpu` and gives it SCHED_FIFO at
// `fifo_priority` where asked, and a 1 ns timer slack (the default 50 us would be part of
// every tick's lateness). kInvalidArgument for a CPU it cannot run on, kFailedPrecondition
// when SCHED_FIFO is not permitted (the message says which right is missing).
Status ConfigureClockThread(std::optional<int> cpu, std::optional<int> fifo_priority);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_TICK_CLOCK_H_
