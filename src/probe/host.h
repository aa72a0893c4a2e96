// `pagereel probe host`: reads the host's timing configuration and explains it. Every
// finding says what was found, what it means for a frame clock, and what to do, each in one
// line. Reads through HostFiles, so fixtures stand in for the host in tests; a file that is
// missing or malformed becomes a finding, never a failure. Safe from any thread.
#ifndef PAGEREEL_PROBE_HOST_H_
#define PAGEREEL_PROBE_HOST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/host_files.h"

namespace pagereel::probe {

struct HostFinding {
  enum class Level { kOk, kInfo, kWarn };
  Level level = Level::kInfo;
  std::string topic;    // "isolated CPUs"
  std::string value;    // "2-3,6-7"
  std::string meaning;  // What it means and what to do, one line.
};

std::string_view LevelName(HostFinding::Level level);

std::vector<HostFinding> InspectHost(const HostFiles& files);

// What the scheduler will do to a frame clock thread of a process started as this one was
// (pagereel live's clock asks for nice -10, or SCHED_FIFO with --fifo): read from
// /proc/sys/kernel/sched_autogroup_enabled, /proc/self/autogroup, /proc/self/limits
// (RLIMIT_NICE, RLIMIT_RTPRIO) and /proc/self/status (CAP_SYS_NICE in CapEff).
struct ClockScheduling {
  std::optional<bool> autogroup;  // kernel.sched_autogroup_enabled; nullopt: not built.
  std::string own_autogroup;      // "/autogroup-42 nice 0"; "" when unknown.
  bool cap_sys_nice = false;
  int64_t nice_limit = 0;    // RLIMIT_NICE: the lowest nice allowed is 20 - this.
  int64_t rtprio_limit = 0;  // RLIMIT_RTPRIO: the highest SCHED_FIFO priority allowed.
  bool nice_allowed = false;  // nice -10 may be taken.
  bool fifo_allowed = false;  // SCHED_FIFO may be taken.
};
ClockScheduling InspectClockScheduling(const HostFiles& files);

// One line for a show's start and its as-run log: what the clock will get, what the
// autogroup does to it, and what to do about it.
std::string DescribeClockScheduling(const ClockScheduling& s);

// "0-3,8" from {0,1,2,3,8}.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_HOST_H_
