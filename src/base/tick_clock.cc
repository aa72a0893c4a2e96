#include "base/tick_clock.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace pagereel {
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

Status ConfigureClockThread(std::optional<int> cpu, std::optional<int> fifo_priority) {
  if (cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(*cpu, &set);
    if (int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0) {
      return InvalidArgumentError("--cpu " + std::to_string(*cpu) +
                                  ": cannot pin the clock thread there (" + std::strerror(err) +
                                  "); pick an online CPU this process may use (see 'pagereel probe host')");
    }
  }
  if (fifo_priority) {
    sched_param param{};
    param.sched_priority = *fifo_priority;
    if (int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); err != 0) {
      const std::string prio = std::to_string(*fifo_priority);
      if (err == EPERM) {
        return FailedPreconditionError("--fifo " + prio +
                                       ": not permitted. SCHED_FIFO needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least " +
                                       prio + ": run as root, grant the capability, or raise the limit ('ulimit -r " +
                                       prio + "')");
      }
      return FailedPreconditionError("--fifo " + prio + ": " + std::strerror(err));
    }
  }
  // The default 50 us timer slack would be part of every phase we measure.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  return Status::Ok();
}

}  // namespace pagereel
