// `pagereel probe` and its subcommands: from the command line's words to the exit status.
// Each runs the measurement on the calling thread (Ctrl-C ends it early and the report
// still comes) and prints the report on stdout. Exit codes: 0 done, 1 the measurement
// failed, 2 bad input.
#ifndef PAGEREEL_APP_PROBE_APP_H_
#define PAGEREEL_APP_PROBE_APP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pagereel::app {

// `pagereel probe`: the runnable-thread count sampled and folded on the frame period.
struct ProbeRequest {
  std::string fps, period, duration = "10", rate = "100", report;
  std::vector<std::string> pids;
  int bins = 32, top = 10;
  uint64_t seed = 0;
  bool json = false;
};
int RunProbe(const ProbeRequest& request);

// `pagereel probe clock`: a frame clock's wake-up lateness.
struct ProbeClockRequest {
  std::string fps = "60", duration = "10", threshold = "500us";
  std::optional<int> cpu, fifo;
  bool json = false;
};
int RunProbeClock(const ProbeClockRequest& request);

// `pagereel probe host`: the host's timing configuration, explained.
int RunProbeHost(bool json);

}  // namespace pagereel::app

#endif  // PAGEREEL_APP_PROBE_APP_H_
