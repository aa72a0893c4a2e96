// TickClock: the clocks and the absolute sleep a frame clock needs, behind an interface so
// tests can run `probe clock` on simulated time. The system one is CLOCK_MONOTONIC with
// clock_nanosleep(TIMER_ABSTIME) and CLOCK_REALTIME for wall stamps; it is stateless and
// safe from any thread. Fakes are used from one thread.
#ifndef PAGEREEL_PROBE_TICK_CLOCK_H_
#define PAGEREEL_PROBE_TICK_CLOCK_H_

#include <cstdint>

namespace pagereel::probe {

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

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_TICK_CLOCK_H_
