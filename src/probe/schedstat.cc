#include "probe/schedstat.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace pagereel::probe {
namespace {

bool ParsePid(std::string_view text, int& pid) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  return ec == std::errc() && ptr == text.data() + text.size() && pid > 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads one process; nullopt when it vanished meanwhile.
std::optional<ProcessSnapshot> ReadProcess(const HostFiles& files, int pid, bool& migrations_visible) {
  const std::string dir = "/proc/" + std::to_string(pid);
  ProcessSnapshot p;
  p.pid = pid;
  auto comm = files.Read(dir + "/comm");
  if (!comm.ok()) return std::nullopt;
  p.comm = std::string(Trim(*comm));
  auto tids = files.List(dir + "/task");
  if (!tids.ok()) return std::nullopt;
  for (const std::string& tid_text : *tids) {
    TaskSnapshot t;
    if (!ParsePid(tid_text, t.tid)) continue;
    const std::string task = dir + "/task/" + tid_text;
    auto stat_text = files.Read(task + "/schedstat");
    if (!stat_text.ok()) continue;
    auto stat = ParseSchedstat(*stat_text);
    if (!stat.ok()) continue;
    t.stat = *stat;
    auto name = files.Read(task + "/comm");
    t.name = name.ok() ? std::string(Trim(*name)) : p.comm;
    if (auto sched = files.Read(task + "/sched"); sched.ok()) {
      t.migrations = ParseSchedMigrations(*sched);
      if (t.migrations) migrations_visible = true;
    }
    p.tasks.push_back(std::move(t));
  }
  return p;
}

}  // namespace

std::string FoldDigits(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (!IsDigit(name[i])) {
      out += name[i++];
      continue;
    }
    const bool keep = i > 0 && name[i - 1] == '#';
    size_t end = i;
    while (end < name.size() && IsDigit(name[end])) ++end;
    if (keep) {
      out.append(name.substr(i, end - i));
    } else {
      out += '#';
    }
    i = end;
  }
  return out;
}

Result<SchedSnapshot> TakeSchedSnapshot(const HostFiles& files, std::span<const int> pids) {
  SchedSnapshot snap;
  if (!pids.empty()) {
    for (int pid : pids) {
      auto p = ReadProcess(files, pid, snap.migrations_visible);
      if (!p) {
        return NotFoundError("--pid " + std::to_string(pid) +
                             ": no such process (or its /proc entry is not readable)");
      }
      snap.processes.push_back(std::move(*p));
    }
    return snap;
  }
  PR_ASSIGN_OR_RETURN(auto entries, files.List("/proc"));
  std::vector<int> all;
  for (const std::string& e : entries) {
    int pid;
    if (ParsePid(e, pid)) all.push_back(pid);
  }
  std::sort(all.begin(), all.end());
  for (int pid : all) {
    if (auto p = ReadProcess(files, pid, snap.migrations_visible)) snap.processes.push_back(std::move(*p));
  }
  return snap;
}

std::vector<ProcessUsage> DiffSnapshots(const SchedSnapshot& start, const SchedSnapshot& end,
                                        int64_t wall_ns) {
  std::vector<ProcessUsage> out;
  if (wall_ns <= 0) return out;
  const double wall = static_cast<double>(wall_ns);
  std::map<int, const ProcessSnapshot*> before;
  for (const auto& p : start.processes) before[p.pid] = &p;
  for (const auto& p : end.processes) {
    auto it = before.find(p.pid);
    if (it == before.end()) continue;
    std::map<int, const TaskSnapshot*> old_tasks;
    for (const auto& t : it->second->tasks) old_tasks[t.tid] = &t;
    ProcessUsage usage;
    usage.pid = p.pid;
    usage.comm = p.comm;
    std::map<std::string, GroupUsage> groups;
    for (const auto& t : p.tasks) {
      TaskSchedstat base;
      std::optional<int64_t> base_migrations = int64_t{0};
      if (auto o = old_tasks.find(t.tid); o != old_tasks.end()) {
        base = o->second->stat;
        base_migrations = o->second->migrations;
      }
      const double run = static_cast<double>(std::max<int64_t>(t.stat.run_ns - base.run_ns, 0)) / wall;
      const double wait = static_cast<double>(std::max<int64_t>(t.stat.wait_ns - base.wait_ns, 0)) / wall;
      std::optional<int64_t> moved;
      if (t.migrations && base_migrations) moved = std::max<int64_t>(*t.migrations - *base_migrations, 0);
      GroupUsage& g = groups[FoldDigits(t.name)];
      g.group = FoldDigits(t.name);
      ++g.threads;
      g.cores_running += run;
      g.threads_waiting += wait;
      if (moved) g.migrations = g.migrations.value_or(0) + *moved;
      ++usage.threads;
      usage.cores_running += run;
      usage.threads_waiting += wait;
      if (moved) usage.migrations = usage.migrations.value_or(0) + *moved;
    }
    for (auto& [name, g] : groups) usage.groups.push_back(std::move(g));
    std::sort(usage.groups.begin(), usage.groups.end(), [](const GroupUsage& a, const GroupUsage& b) {
      return a.cores_running + a.threads_waiting > b.cores_running + b.threads_waiting;
    });
    out.push_back(std::move(usage));
  }
  std::stable_sort(out.begin(), out.end(), [](const ProcessUsage& a, const ProcessUsage& b) {
    return a.cores_running + a.threads_waiting > b.cores_running + b.threads_waiting;
  });
  return out;
}

}  // namespace pagereel::probe
