// Run-queue accounting per process and per thread group, from
// /proc/PID/task/TID/schedstat (time on a CPU, time waiting for one) read at the start and
// the end of a run, and per-thread migrations from /proc/PID/task/TID/sched where the
// kernel exposes them (CONFIG_SCHED_DEBUG). Pure functions over HostFiles: safe from any
// thread.
#ifndef PAGEREEL_PROBE_SCHEDSTAT_H_
#define PAGEREEL_PROBE_SCHEDSTAT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "probe/host_files.h"
#include "probe/proc_readers.h"

namespace pagereel::probe {

struct TaskSnapshot {
  int tid = 0;
  std::string name;  // /proc/PID/task/TID/comm
  TaskSchedstat stat;
  std::optional<int64_t> migrations;
};

struct ProcessSnapshot {
  int pid = 0;
  std::string comm;
  std::vector<TaskSnapshot> tasks;
};

struct SchedSnapshot {
  std::vector<ProcessSnapshot> processes;  // By pid.
  bool migrations_visible = false;         // Some task showed se.nr_migrations.
};

// Reads the given processes, or every process when `pids` is empty. A process or thread
// that exits while it is read is skipped; a named pid that does not exist is kNotFound.
Result<SchedSnapshot> TakeSchedSnapshot(const HostFiles& files, std::span<const int> pids);

struct GroupUsage {
  std::string group;   // Thread name with digit runs folded to '#'.
  int threads = 0;
  double cores_running = 0;    // Mean CPUs in use by these threads over the run.
  double threads_waiting = 0;  // Mean threads runnable but waiting for a CPU.
  std::optional<int64_t> migrations;
};

struct ProcessUsage {
  int pid = 0;
  std::string comm;
  int threads = 0;
  double cores_running = 0;
  double threads_waiting = 0;
  std::optional<int64_t> migrations;
  std::vector<GroupUsage> groups;  // Busiest first.
};

// Usage between two snapshots `wall_ns` apart, busiest process first. Threads that appear
// only in `end` count from zero (they were born during the run); processes that are gone
// from `end` are left out.
std::vector<ProcessUsage> DiffSnapshots(const SchedSnapshot& start, const SchedSnapshot& end,
                                        int64_t wall_ns);

// "vf#0:3" -> "vf#0:#", "kworker/1:2H" -> "kworker/#:#H": each run of digits becomes '#',
// except a number right after a '#', which already names an instance (ffmpeg's filter
// graph 0 in vf#0:3) and is kept.
std::string FoldDigits(std::string_view name);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_SCHEDSTAT_H_
