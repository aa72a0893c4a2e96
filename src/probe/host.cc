#include "probe/host.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "probe/proc_readers.h"

namespace pagereel::probe {
namespace {

using Level = HostFinding::Level;

// The CPU list in `path`, or nullopt with `why` set when it is missing or malformed.
std::optional<std::vector<int>> ReadCpuList(const HostFiles& files, std::string_view path, std::string& why) {
  auto text = files.Read(path);
  if (!text.ok()) {
    why = std::string(path) + " is missing";
    return std::nullopt;
  }
  // Some kernels write "(null)" for an empty nohz_full mask.
  if (Trim(*text) == "(null)") return std::vector<int>{};
  auto cpus = ParseCpuList(*text);
  if (!cpus.ok()) {
    why = std::string(cpus.status().message());
    return std::nullopt;
  }
  return *cpus;
}

std::string KernelConfigValue(const HostFiles& files, const std::string& release, std::string_view key) {
  auto text = files.Read("/boot/config-" + release);
  if (!text.ok()) return "";
  const std::string needle = std::string(key) + "=";
  size_t at = 0;
  while ((at = text->find(needle, at)) != std::string::npos) {
    if (at == 0 || (*text)[at - 1] == '\n') {
      const size_t end = text->find('\n', at);
      return text->substr(at + needle.size(), end == std::string::npos ? std::string::npos : end - at - needle.size());
    }
    at += needle.size();
  }
  return "";
}

void CpuFindings(const HostFiles& files, std::vector<HostFinding>& out) {
  auto info = files.Read("/proc/cpuinfo");
  const CpuInfo cpu = info.ok() ? ParseCpuInfo(*info) : CpuInfo{};
  std::string why;
  auto online = ReadCpuList(files, "/sys/devices/system/cpu/online", why);
  const int count = online ? static_cast<int>(online->size()) : cpu.logical_cpus;
  out.push_back({Level::kInfo, "CPUs",
                 std::to_string(count) + " online" + (cpu.model.empty() ? "" : ", " + cpu.model),
                 count <= 2 ? "few CPUs: a frame clock shares them with everything; keep its threads few and "
                              "check 'pagereel probe' for run-queue wait"
                            : "compare with the runnable count from 'pagereel probe'"});
}

// The soft limit of `name` ("Max nice priority") in /proc/self/limits; 0 when unknown.
int64_t SoftLimit(const std::string& limits, std::string_view name) {
  for (std::string_view line : Lines(limits)) {
    if (line.substr(0, name.size()) != name) continue;
    const std::vector<std::string_view> fields = Fields(line.substr(name.size()));
    if (fields.empty()) return 0;
    if (fields[0] == "unlimited") return INT64_MAX;
    int64_t v = 0;
    std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), v);
    return v;
  }
  return 0;
}

// Whether capability `bit` is in the effective set (CapEff: hex) of /proc/self/status.
bool HasCapability(const std::string& status, int bit) {
  for (std::string_view line : Lines(status)) {
    if (line.substr(0, 7) != "CapEff:") continue;
    const std::string_view hex = Trim(line.substr(7));
    uint64_t mask = 0;
    std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
    return (mask >> bit) & 1;
  }
  return false;
}

}  // namespace

ClockScheduling InspectClockScheduling(const HostFiles& files) {
  constexpr int kCapSysNice = 23;
  ClockScheduling s;
  if (auto text = files.Read("/proc/sys/kernel/sched_autogroup_enabled"); text.ok()) {
    if (auto value = ParseIntegerFile(*text); value.ok()) s.autogroup = *value != 0;
  }
  if (auto text = files.Read("/proc/self/autogroup"); text.ok()) s.own_autogroup = std::string(Trim(*text));
  if (auto text = files.Read("/proc/self/status"); text.ok()) s.cap_sys_nice = HasCapability(*text, kCapSysNice);
  if (auto text = files.Read("/proc/self/limits"); text.ok()) {
    s.nice_limit = SoftLimit(*text, "Max nice priority");
    s.rtprio_limit = SoftLimit(*text, "Max realtime priority");
  }
  s.nice_allowed = s.cap_sys_nice || s.nice_limit >= 30;  // 20 - 30 = -10.
  s.fifo_allowed = s.cap_sys_nice || s.rtprio_limit >= 1;
  return s;
}

std::string DescribeClockScheduling(const ClockScheduling& s) {
  std::string line = std::string("nice -10 ") + (s.nice_allowed ? "allowed" : "not allowed") +
                     ", SCHED_FIFO " +
                     (s.fifo_allowed ? (s.cap_sys_nice ? std::string("allowed (CAP_SYS_NICE)")
                                                       : "allowed up to priority " + std::to_string(s.rtprio_limit) +
                                                             " (RLIMIT_RTPRIO)")
                                     : std::string("not allowed (no CAP_SYS_NICE, RLIMIT_RTPRIO 0)"));
  if (s.autogroup.value_or(false)) {
    line += "; kernel.sched_autogroup_enabled=1: nice ranks threads only within this process's "
            "autogroup" + (s.own_autogroup.empty() ? std::string() : " (" + s.own_autogroup + ")") +
            ", so other sessions' work competes with the clock as equals";
  }
  if (s.fifo_allowed) {
    line += "; for the steadiest clock run with --fifo 50";
  } else if (s.autogroup.value_or(false)) {
    line += "; to put the clock first: allow SCHED_FIFO (ulimit -r 50, LimitRTPRIO=50 in a systemd "
            "unit, or CAP_SYS_NICE) and run with --fifo 50, or sysctl kernel.sched_autogroup_enabled=0";
  } else if (!s.nice_allowed) {
    line += "; to put the clock first: allow it (ulimit -e 30 or -r 50, or CAP_SYS_NICE) and run "
            "with --fifo 50";
  }
  return line;
}

std::string_view LevelName(HostFinding::Level level) {
  switch (level) {
    case Level::kOk:
      return "ok";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
  }
  return "info";
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<HostFinding> InspectHost(const HostFiles& files) {
  std::vector<HostFinding> out;
  CpuFindings(files, out);

  std::string why;
  auto isolated = ReadCpuList(files, "/sys/devices/system/cpu/isolated", why);
  if (!isolated) {
    out.push_back({Level::kInfo, "isolated CPUs", "unknown", why + "; cannot tell whether any CPU is set aside"});
  } else if (isolated->empty()) {
    out.push_back({Level::kInfo, "isolated CPUs", "none",
                   "every CPU takes ordinary work; for the steadiest clock set CPUs aside (isolcpus= or a "
                   "cpuset) and pin the clock there (--cpu)"});
  } else {
    out.push_back({Level::kOk, "isolated CPUs", FormatCpuList(*isolated),
                   "the scheduler keeps ordinary work off these; pin frame clocks there (probe clock --cpu N)"});
  }

  auto nohz = ReadCpuList(files, "/sys/devices/system/cpu/nohz_full", why);
  if (!nohz) {
    out.push_back({Level::kInfo, "nohz_full", "not built", "the kernel has no NO_HZ_FULL: every busy CPU takes the "
                                                            "scheduler tick; nothing to do"});
  } else if (nohz->empty()) {
    out.push_back({Level::kInfo, "nohz_full", "none", "every busy CPU takes the scheduler tick; fine unless a "
                                                      "clock CPU must run one task without interruption"});
  } else {
    out.push_back({Level::kOk, "nohz_full", FormatCpuList(*nohz),
                   "these CPUs stop the tick while running one task: fewer interruptions of a pinned clock"});
  }

  const bool set_aside = (isolated && !isolated->empty()) || (nohz && !nohz->empty());
  if (auto text = files.Read("/proc/sys/kernel/timer_migration"); !text.ok()) {
    out.push_back({Level::kInfo, "kernel.timer_migration", "unknown", "/proc/sys/kernel/timer_migration is missing"});
  } else if (auto value = ParseIntegerFile(*text); !value.ok()) {
    out.push_back({Level::kInfo, "kernel.timer_migration", "unreadable", std::string(value.status().message())});
  } else if (*value == 1 && set_aside) {
    out.push_back({Level::kWarn, "kernel.timer_migration", "1",
                   "with isolated or nohz_full CPUs the kernel arms an isolated thread's sleep timer on the first "
                   "housekeeping CPU, so every wake-up needs a cross-CPU interrupt: sysctl kernel.timer_migration=0"});
  } else {
    out.push_back({Level::kOk, "kernel.timer_migration", std::to_string(*value),
                   *value == 1 ? "timers may move to busy CPUs; harmless without isolated CPUs"
                               : "timers stay on the CPU that armed them"});
  }

  std::string release;
  if (auto text = files.Read("/proc/sys/kernel/osrelease"); text.ok()) release = std::string(Trim(*text));
  const std::string hz = release.empty() ? "" : KernelConfigValue(files, release, "CONFIG_HZ");
  if (hz.empty()) {
    out.push_back({Level::kInfo, "tick rate", "unknown",
                   "no /boot/config-" + (release.empty() ? std::string("<release>") : release) +
                       " to read CONFIG_HZ from; hrtimers (clock_nanosleep) do not depend on it"});
  } else {
    out.push_back({Level::kInfo, "tick rate", hz + " Hz",
                   "the scheduler tick; absolute sleeps use hrtimers and do not wait for it, but a busy CPU's "
                   "time slices do"});
  }

  if (isolated && !isolated->empty()) {
    const std::set<int> iso(isolated->begin(), isolated->end());
    std::vector<std::string> hits;
    auto irqs = files.List("/proc/irq");
    if (irqs.ok()) {
      for (const std::string& irq : *irqs) {
        auto text = files.Read("/proc/irq/" + irq + "/smp_affinity_list");
        if (!text.ok()) continue;
        auto cpus = ParseCpuList(*text);
        if (!cpus.ok()) continue;
        if (std::any_of(cpus->begin(), cpus->end(), [&](int c) { return iso.count(c) > 0; })) hits.push_back(irq);
      }
    }
    if (hits.empty()) {
      out.push_back({Level::kOk, "IRQs on isolated CPUs", "none", "no interrupt may land on the isolated CPUs"});
    } else {
      std::string list;
      for (size_t i = 0; i < hits.size() && i < 12; ++i) list += (i ? "," : "") + hits[i];
      if (hits.size() > 12) list += ",... (" + std::to_string(hits.size()) + ")";
      out.push_back({Level::kWarn, "IRQs on isolated CPUs", list,
                     "these interrupts may run on an isolated CPU and delay its clock: write the housekeeping "
                     "CPUs to /proc/irq/N/smp_affinity_list, or boot with irqaffinity="});
    }
  }

  if (auto text = files.Read("/sys/devices/system/clocksource/clocksource0/current_clocksource"); !text.ok()) {
    out.push_back({Level::kInfo, "clocksource", "unknown", "no /sys clocksource entry"});
  } else {
    const std::string source(Trim(*text));
    if (source == "tsc") {
      out.push_back({Level::kOk, "clocksource", source, "the CPU's time-stamp counter: cheap, precise clock reads"});
    } else if (source == "hpet" || source == "acpi_pm") {
      out.push_back({Level::kWarn, "clocksource", source,
                     "slow to read (microseconds per clock_gettime) and often chosen after the TSC was found "
                     "unstable: check dmesg for 'clocksource' and the BIOS/VM TSC settings"});
    } else {
      out.push_back({Level::kInfo, "clocksource", source,
                     "a virtual machine's clock: fine to read, but the hypervisor's scheduling of this VM shows "
                     "up as late ticks that no setting here can remove"});
    }
  }

  std::map<std::string, std::vector<int>> governors;
  if (auto cpus = files.List("/sys/devices/system/cpu"); cpus.ok()) {
    for (const std::string& name : *cpus) {
      int cpu;
      if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
          std::from_chars(name.data() + 3, name.data() + name.size(), cpu).ptr != name.data() + name.size()) {
        continue;
      }
      auto text = files.Read("/sys/devices/system/cpu/" + name + "/cpufreq/scaling_governor");
      if (text.ok()) governors[std::string(Trim(*text))].push_back(cpu);
    }
  }
  if (governors.empty()) {
    out.push_back({Level::kInfo, "frequency governor", "none visible",
                   "no cpufreq: the firmware or the hypervisor sets the clock speed; nothing to set here"});
  } else {
    std::string value;
    bool slow = false;
    for (auto& [name, cpus] : governors) {
      std::sort(cpus.begin(), cpus.end());
      value += (value.empty() ? "" : ", ") + name + " (CPU " + FormatCpuList(cpus) + ")";
      if (name != "performance") slow = true;
    }
    out.push_back({slow ? Level::kWarn : Level::kOk, "frequency governor", value,
                   slow ? "a CPU that idles down ramps up after each wake-up and the first microseconds of a "
                          "tick run slow: use 'performance' on clock CPUs (cpupower frequency-set -g performance)"
                        : "CPUs stay at full speed; nothing to do"});
  }

  if (auto text = files.Read("/proc/sys/kernel/sched_rt_runtime_us"); text.ok()) {
    if (auto value = ParseIntegerFile(*text); value.ok() && *value >= 0) {
      out.push_back({Level::kInfo, "RT throttling", std::to_string(*value) + " us per second",
                     "SCHED_FIFO threads that spin past this share of each second are stopped; a clock that "
                     "sleeps between ticks never comes near it"});
    }
  }
  const ClockScheduling clock = InspectClockScheduling(files);
  if (!clock.autogroup) {
    out.push_back({Level::kInfo, "scheduler autogroup", "not built",
                   "no kernel.sched_autogroup_enabled: nice values rank threads across the whole host"});
  } else if (*clock.autogroup) {
    out.push_back({clock.fifo_allowed ? Level::kInfo : Level::kWarn, "scheduler autogroup",
                   "on" + (clock.own_autogroup.empty() ? std::string() : " (" + clock.own_autogroup + ")"),
                   "nice ranks threads only within their session's autogroup: a clock at nice -10 does not "
                   "outrank another session's busy work, which shares the CPU with this whole process as an "
                   "equal; use SCHED_FIFO (--fifo) or sysctl kernel.sched_autogroup_enabled=0"});
  } else {
    out.push_back({Level::kOk, "scheduler autogroup", "off", "nice values rank threads across the whole host"});
  }
  out.push_back({clock.fifo_allowed ? Level::kOk : (clock.nice_allowed ? Level::kInfo : Level::kWarn),
                 "clock priority",
                 std::string("nice -10 ") + (clock.nice_allowed ? "yes" : "no") + ", SCHED_FIFO " +
                     (clock.fifo_allowed ? "yes" : "no"),
                 DescribeClockScheduling(clock)});
  if (!files.Exists("/proc/pressure/cpu")) {
    out.push_back({Level::kWarn, "pressure stall information", "missing",
                   "no /proc/pressure/cpu: boot with psi=1 (kernel with CONFIG_PSI) so 'pagereel probe' can "
                   "report CPU pressure"});
  }
  return out;
}

}  // namespace pagereel::probe
