#include "probe/tick_clock.h"

#include <time.h>

#include <cerrno>

namespace pagereel::probe {
namespace {

int64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

class SystemClock final : public TickClock {
 public:
  int64_t MonotonicNs() override { return Now(CLOCK_MONOTONIC); }
  int64_t RealtimeNs() override { return Now(CLOCK_REALTIME); }
  void SleepUntil(int64_t monotonic_ns) override {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(monotonic_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(monotonic_ns % 1'000'000'000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
};

}  // namespace

TickClock& SystemTickClock() {
  static SystemClock clock;
  return clock;
}

}  // namespace pagereel::probe
