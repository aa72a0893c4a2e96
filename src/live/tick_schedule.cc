#include "live/tick_schedule.h"

#include <algorithm>

namespace pagereel::live {

namespace {
__extension__ using Int128 = __int128;  // GCC and Clang both have it; -Wpedantic does not know.
}  // namespace

TickSchedule::TickSchedule(int64_t start_ns, Rational fps)
    : start_ns_(start_ns), period_ns_(Rational::Make(int64_t{1'000'000'000} * fps.den, fps.num)) {}

int64_t TickSchedule::TickNs(int64_t n) const {
  return start_ns_ + static_cast<int64_t>(static_cast<Int128>(n) * period_ns_.num / period_ns_.den);
}

int64_t TickSchedule::PhaseOffsetNs(Rational phase) const {
  return static_cast<int64_t>(static_cast<Int128>(period_ns_.num) * phase.num /
                              (static_cast<Int128>(period_ns_.den) * phase.den));
}

int64_t TickSchedule::NextTick(int64_t done, int64_t now_ns, int64_t offset_ns) const {
  // A first guess from the elapsed time, then exact steps (at most one or two).
  const Int128 elapsed = static_cast<Int128>(now_ns) - offset_ns - start_ns_;
  int64_t next = done + 1;
  if (elapsed > 0) {
    next = std::max(next, static_cast<int64_t>(elapsed * period_ns_.den / period_ns_.num) - 1);
  }
  while (TickNs(next) + offset_ns < now_ns) ++next;
  return next;
}

}  // namespace pagereel::live
