// TickSchedule: when a show's ticks fall and when each worker begins its frames, in exact
// integer arithmetic on CLOCK_MONOTONIC nanoseconds. Tick n is at start + n x den/num
// seconds (rounded down to the nanosecond from the exact rational, never accumulated), so a
// 29.97 fps show is exactly 1001 s long after 30000 ticks, however long it runs.
// Immutable: safe from any thread.
#ifndef PAGEREEL_LIVE_TICK_SCHEDULE_H_
#define PAGEREEL_LIVE_TICK_SCHEDULE_H_

#include <cstdint>

#include "base/rational.h"

namespace pagereel::live {

class TickSchedule {
 public:
  // REQUIRES: fps positive.
  TickSchedule(int64_t start_ns, Rational fps);

  int64_t start_ns() const { return start_ns_; }
  Rational period_ns() const { return period_ns_; }

  // The instant of tick n.
  int64_t TickNs(int64_t n) const;

  // `phase` (a fraction of the period, 0 <= phase < 1) in nanoseconds, rounded down.
  int64_t PhaseOffsetNs(Rational phase) const;

  // The tick a worker at `offset_ns` past each tick should begin next, having just finished
  // tick `done` at `now_ns`: done + 1 if its instant (plus the offset) is still ahead,
  // else the first one that is (the ticks between are skipped).
  int64_t NextTick(int64_t done, int64_t now_ns, int64_t offset_ns) const;

 private:
  int64_t start_ns_;
  Rational period_ns_;
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_TICK_SCHEDULE_H_
