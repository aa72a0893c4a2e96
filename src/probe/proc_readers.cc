#include "probe/proc_readers.h"

#include <string>

namespace pagereel::probe {
namespace {

Status Malformed(std::string_view file, std::string_view why, std::string_view text) {
  std::string shown(Trim(text).substr(0, 80));
  return InvalidArgumentError(std::string(file) + " is malformed (" + std::string(why) +
                              "): '" + shown + "'");
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

Result<LoadAvg> ParseLoadAvg(std::string_view text) {
  const auto f = Fields(text);
  if (f.size() < 4) return Malformed("/proc/loadavg", "expected 5 fields", text);
  LoadAvg out;
  if (!ParseNumber(f[0], out.load1) || !ParseNumber(f[1], out.load5) ||
      !ParseNumber(f[2], out.load15)) {
    return Malformed("/proc/loadavg", "load averages are not numbers", text);
  }
  const size_t slash = f[3].find('/');
  if (slash == std::string_view::npos || !ParseNumber(f[3].substr(0, slash), out.running) ||
      !ParseNumber(f[3].substr(slash + 1), out.total)) {
    return Malformed("/proc/loadavg", "field 4 is not running/total", text);
  }
  return out;
}

Result<TaskSchedstat> ParseSchedstat(std::string_view text) {
  const auto f = Fields(text);
  TaskSchedstat out;
  if (f.size() != 3 || !ParseNumber(f[0], out.run_ns) || !ParseNumber(f[1], out.wait_ns) ||
      !ParseNumber(f[2], out.timeslices)) {
    return Malformed("schedstat", "expected 'run_ns wait_ns timeslices'", text);
  }
  return out;
}

std::optional<int64_t> ParseSchedMigrations(std::string_view text) {
  for (std::string_view line : Lines(text)) {
    if (!StartsWith(line, "se.nr_migrations")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    int64_t value;
    if (!ParseNumber(Trim(line.substr(colon + 1)), value)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  text = Trim(text);
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t dash = item.find('-');
    int first, last;
    if (dash == std::string_view::npos) {
      if (!ParseNumber(item, first)) return Malformed("CPU list", "not a number", item);
      last = first;
    } else if (!ParseNumber(item.substr(0, dash), first) ||
               !ParseNumber(item.substr(dash + 1), last) || last < first || first < 0) {
      return Malformed("CPU list", "bad range", item);
    }
    if (last - first > 65536) return Malformed("CPU list", "range too large", item);
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

Result<std::vector<HrTimer>> ParseTimerList(std::string_view text) {
  // Layout (kernel/time/timer_list.c):
  //   cpu: 0
  //    clock 0:
  //   active timers:
  //    #1: <0000000004ff18803>, hrtimer_wakeup, S:01
  //    # expires at 406559126316-406559176316 nsecs [in 39205225 to 39255225 nsecs]
  std::vector<HrTimer> timers;
  int cpu = -1, clock_base = -1;
  std::string function;
  bool pending = false;
  for (std::string_view raw : Lines(text)) {
    std::string_view line = Trim(raw);
    if (StartsWith(line, "cpu:")) {
      if (!ParseNumber(Trim(line.substr(4)), cpu)) return Malformed("/proc/timer_list", "bad cpu", line);
      clock_base = -1;
    } else if (StartsWith(line, "clock ") && line.back() == ':') {
      if (!ParseNumber(line.substr(6, line.size() - 7), clock_base)) {
        return Malformed("/proc/timer_list", "bad clock", line);
      }
    } else if (StartsWith(line, "# expires at ")) {
      if (!pending) continue;
      pending = false;
      const auto f = Fields(line.substr(13));
      const size_t dash = f.empty() ? std::string_view::npos : f[0].find('-');
      HrTimer timer{cpu, clock_base, function, 0, 0};
      if (dash == std::string_view::npos ||
          !ParseNumber(f[0].substr(0, dash), timer.soft_expiry_ns) ||
          !ParseNumber(f[0].substr(dash + 1), timer.hard_expiry_ns)) {
        return Malformed("/proc/timer_list", "bad expiry", line);
      }
      timers.push_back(std::move(timer));
    } else if (StartsWith(line, "#") && line.find(">, ") != std::string_view::npos) {
      std::string_view rest = line.substr(line.find(">, ") + 3);
      function = std::string(rest.substr(0, rest.find(',')));
      pending = cpu >= 0 && clock_base >= 0;
    }
  }
  if (cpu < 0) return Malformed("/proc/timer_list", "no 'cpu:' section", text);
  return timers;
}

CpuInfo ParseCpuInfo(std::string_view text) {
  CpuInfo out;
  for (std::string_view line : Lines(text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = Trim(line.substr(0, colon));
    if (key == "processor") ++out.logical_cpus;
    if (key == "model name" && out.model.empty()) out.model = std::string(Trim(line.substr(colon + 1)));
  }
  return out;
}

Result<int64_t> ParseIntegerFile(std::string_view text) {
  int64_t value;
  if (!ParseNumber(Trim(text), value)) return Malformed("integer file", "not an integer", text);
  return value;
}

}  // namespace pagereel::probe
