// PeriodicLoad: a synthetic frame-locked workload for tests and benchmarks. Each of its
// threads wakes at every multiple of the period (on CLOCK_MONOTONIC, plus a phase) and
// spins for a set width, yielding the CPU at every turn, so the host's runnable count
// carries a spike of known phase and frequency while other threads (the probe's sampler
// among them) still get the CPUs. The constructor starts the threads; the destructor stops
// and joins them. Not copyable; create and destroy it on one thread.
#ifndef PAGEREEL_PROBE_PERIODIC_LOAD_H_
#define PAGEREEL_PROBE_PERIODIC_LOAD_H_

#include <chrono>
#include <thread>
#include <vector>

#include "base/rational.h"

namespace pagereel::probe {

class PeriodicLoad {
 public:
  struct Options {
    Rational period_ns = Rational::Make(40'000'000, 1);
    std::chrono::nanoseconds phase{std::chrono::milliseconds(10)};  // Spike start, from phase 0.
    std::chrono::nanoseconds width{std::chrono::milliseconds(8)};   // Spin this long.
    int threads = 2;
  };

  explicit PeriodicLoad(const Options& options);
  ~PeriodicLoad();
  PeriodicLoad(const PeriodicLoad&) = delete;
  PeriodicLoad& operator=(const PeriodicLoad&) = delete;

 private:
  static void Run(std::stop_token stop, Options options);

  std::vector<std::jthread> threads_;
};

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_PERIODIC_LOAD_H_
