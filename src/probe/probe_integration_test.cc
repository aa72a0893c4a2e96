// The sampler on the real host, against a synthetic frame-locked load of known phase and
// frequency. No timing is asserted: only where the spike is and what its frequency is.
// It holds on a host with a CPU or two of other work; on one loaded far beyond its CPUs the
// load's threads cannot end their spikes on time and the fold smears, as it should.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "probe/periodic_load.h"
#include "probe/probe_run.h"

namespace pagereel::probe {
namespace {

using namespace std::chrono_literals;

TEST(ProbeIntegrationTest, FoldAndPeriodogramFindASyntheticPeriodicLoad) {
  // 25 Hz (40 ms); three threads spin from 10 ms to 16 ms of every period.
  PeriodicLoad::Options load;
  load.period_ns = Rational::Make(40'000'000, 1);
  load.phase = 10ms;
  load.width = 6ms;
  load.threads = 3;

  ProbeOptions o;
  o.period_ns = load.period_ns;
  o.period_source = "a period of 40ms";
  o.duration = 5s;
  o.rate_hz = 1000;
  o.fold_bins = 20;  // 2 ms bins.
  o.pids = {static_cast<int>(getpid())};
  Result<ProbeReport> r = InternalError("not run");
  {
    PeriodicLoad running(load);
    r = RunProbe(o, HostFiles());
  }
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  std::string seen = "fold bins:";
  for (double b : r->fold.bins) seen += " " + std::to_string(b);
  seen += "\nperiodogram:";
  for (const auto& p : r->periodogram.peaks) seen += " " + std::to_string(p.hz) + "/" + std::to_string(p.amplitude);
  SCOPED_TRACE(seen);

  // The spike covers 10..16 ms; its bin centres are 11..15 ms. Allow one bin either side,
  // and a later edge: a thread that could not get a CPU at 16 ms stays runnable until it does.
  EXPECT_GE(r->fold.peak_phase_ns, 9'000'000);
  EXPECT_LE(r->fold.peak_phase_ns, 19'000'000);
  // Three extra runnable threads during the spike, against whatever else the host runs.
  EXPECT_GT(r->fold.peak - r->fold.floor, 1.5);
  EXPECT_GE(r->fold.half_height_width_ns, 2'000'000);
  EXPECT_LE(r->fold.half_height_width_ns, 16'000'000);

  // 25 Hz among the three strongest components, within half the resolution (1 / run
  // length): the right line, not a neighbour. (Other tests on a busy host can add a slow
  // drift stronger than the spike's fundamental.)
  bool found = false;
  for (size_t i = 0; i < r->periodogram.peaks.size() && i < 3; ++i) {
    const auto& p = r->periodogram.peaks[i];
    found |= std::abs(p.hz - 25.0) <= r->periodogram.resolution_hz / 2 && p.significant;
  }
  EXPECT_TRUE(found);

  // The load's threads showed up in this process's schedstat, grouped by folded name.
  ASSERT_EQ(r->processes.size(), 1u);
  bool saw_group = false;
  for (const auto& g : r->processes[0].groups) saw_group |= g.group == "pr-load#" && g.threads == load.threads;
  EXPECT_TRUE(saw_group);
  EXPECT_GT(r->processes[0].cores_running, 0.0);
}

}  // namespace
}  // namespace pagereel::probe
