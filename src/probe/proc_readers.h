// Parsers for the kernel text files pagereel probe reads. Each takes the file's text (read
// through HostFiles, or a fixture in tests) and returns a value or a Status that names the
// file and what was wrong with it; none of them crashes on malformed input.
// Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_PROC_READERS_H_
#define PAGEREEL_PROBE_PROC_READERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/pressure.h"
#include "base/status.h"
#include "base/text_fields.h"  // Trim, Fields, Lines, ParseNumber, as the parsers use them.

namespace pagereel::probe {

// /proc/loadavg: "0.73 0.44 0.19 1/80 4325".
struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
  int64_t running = 0;  // Runnable scheduling entities right now (including the reader).
  int64_t total = 0;    // Threads that exist.
};
Result<LoadAvg> ParseLoadAvg(std::string_view text);

// /proc/PID/task/TID/schedstat: "run_ns wait_ns timeslices".
struct TaskSchedstat {
  int64_t run_ns = 0;   // Time on a CPU.
  int64_t wait_ns = 0;  // Time runnable but waiting for a CPU (run-queue wait).
  int64_t timeslices = 0;
};
Result<TaskSchedstat> ParseSchedstat(std::string_view text);

// se.nr_migrations from /proc/PID/task/TID/sched (present with CONFIG_SCHED_DEBUG);
// nullopt when the field is missing or unreadable.
std::optional<int64_t> ParseSchedMigrations(std::string_view text);

// A CPU list as in /sys/devices/system/cpu/isolated: "0-3,8,10-11"; "" or "\n" is empty.
Result<std::vector<int>> ParseCpuList(std::string_view text);

// One active high-resolution timer from /proc/timer_list.
struct HrTimer {
  int cpu = -1;
  int clock_base = -1;  // 0 is CLOCK_MONOTONIC.
  std::string function;  // "hrtimer_wakeup" for a sleeping thread.
  int64_t soft_expiry_ns = 0;
  int64_t hard_expiry_ns = 0;
};
Result<std::vector<HrTimer>> ParseTimerList(std::string_view text);

// /proc/cpuinfo: the logical CPU count and the first model name.
struct CpuInfo {
  int logical_cpus = 0;
  std::string model;
};
CpuInfo ParseCpuInfo(std::string_view text);

// One integer file such as /proc/sys/kernel/timer_migration.
Result<int64_t> ParseIntegerFile(std::string_view text);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_PROC_READERS_H_
