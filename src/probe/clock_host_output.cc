// Output of `probe clock` and `probe host` (the sampler's is in probe_output.cc).
#include <time.h>

#include <nlohmann/json.hpp>

#include "probe/probe_output.h"

#include <fmt/printf.h>
#include "probe/text_format.h"

namespace pagereel::probe {
namespace {

using nlohmann::json;

json CpuCounts(const std::map<int, int64_t>& counts) {
  json out = json::array();
  for (const auto& [cpu, n] : counts) out.push_back({{"cpu", cpu}, {"count", n}});
  return out;
}

std::string CpuCountsText(const std::map<int, int64_t>& counts) {
  std::string out;
  for (const auto& [cpu, n] : counts) out += fmt::sprintf("%sCPU %d x%lld", out.empty() ? "" : ", ", cpu, static_cast<long long>(n));
  return out;
}

}  // namespace

std::string FormatRealtimeNs(int64_t realtime_ns) {
  const time_t seconds = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm utc;
  gmtime_r(&seconds, &utc);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::sprintf("%s.%06lldZ", date, static_cast<long long>(realtime_ns % 1'000'000'000 / 1000));
}

std::string ExcursionLine(const Excursion& e) {
  return fmt::sprintf("LATE tick %lld woke %s late at %s (monotonic %.6f s)", static_cast<long long>(e.tick),
                HumanNs(static_cast<double>(e.late_ns)).c_str(), FormatRealtimeNs(e.realtime_ns).c_str(),
                static_cast<double>(e.monotonic_ns) * 1e-9);
}

std::string ClockReportJson(const ClockReport& r) {
  json histogram = json::array();
  for (const auto& b : r.histogram.buckets) {
    histogram.push_back({{"lower_us", static_cast<double>(b.lower_ns) * 1e-3},
                         {"upper_us", b.upper_ns < 0 ? json(nullptr) : json(static_cast<double>(b.upper_ns) * 1e-3)},
                         {"count", b.count}});
  }
  json excursions = json::array();
  for (const auto& e : r.excursions) {
    excursions.push_back({{"tick", e.tick}, {"monotonic_ns", e.monotonic_ns}, {"realtime", FormatRealtimeNs(e.realtime_ns)},
                          {"realtime_ns", e.realtime_ns}, {"late_us", static_cast<double>(e.late_ns) * 1e-3}});
  }
  json j = {
      {"fps", r.options.fps.ToString()},
      {"period_ns", 1e9 / r.options.fps.ToDouble()},
      {"duration_s", static_cast<double>(r.options.duration.count()) * 1e-9},
      {"threshold_us", static_cast<double>(r.options.threshold.count()) * 1e-3},
      {"scheduling", r.scheduling},
      {"ticks_expected", r.ticks_expected},
      {"ticks", r.ticks},
      {"ticks_missed", r.ticks_missed},
      {"late", r.late},
      {"phase_us", {{"p50", r.p50_ns * 1e-3}, {"p99", r.p99_ns * 1e-3}, {"p99_9", r.p999_ns * 1e-3}, {"max", r.max_ns * 1e-3}}},
      {"histogram", histogram},
      {"excursions", excursions},
      {"excursion_gaps_s", r.gaps_s},
      {"wake_cpus", CpuCounts(r.wake_cpus)},
      {"timer_cpus", CpuCounts(r.timer_cpus)},
  };
  if (!r.timer_cpu_note.empty()) j["timer_cpu_note"] = r.timer_cpu_note;
  return j.dump(2) + "\n";
}

std::string ClockReportText(const ClockReport& r) {
  std::string out;
  out += fmt::sprintf("pagereel probe clock: %s fps for %.1f s, %s\n\n", r.options.fps.ToString().c_str(),
                static_cast<double>(r.options.duration.count()) * 1e-9, r.scheduling.c_str());
  out += fmt::sprintf("  ticks         %lld woke, %lld dropped (a whole period late), of %lld\n", static_cast<long long>(r.ticks),
                static_cast<long long>(r.ticks_missed), static_cast<long long>(r.ticks_expected));
  out += fmt::sprintf("  clock phase   p50 %s   p99 %s   p99.9 %s   max %s\n", HumanNs(r.p50_ns).c_str(), HumanNs(r.p99_ns).c_str(),
                HumanNs(r.p999_ns).c_str(), HumanNs(r.max_ns).c_str());
  out += fmt::sprintf("  late ticks    %lld above %s\n\n", static_cast<long long>(r.late),
                HumanNs(static_cast<double>(r.options.threshold.count())).c_str());
  int64_t most = 1;
  for (const auto& b : r.histogram.buckets) most = std::max(most, b.count);
  for (const auto& b : r.histogram.buckets) {
    if (b.count == 0) continue;
    const std::string range = b.upper_ns < 0 ? ">= " + HumanNs(static_cast<double>(b.lower_ns))
                                             : HumanNs(static_cast<double>(b.lower_ns)) + " - " + HumanNs(static_cast<double>(b.upper_ns));
    const int bar = static_cast<int>(40.0 * static_cast<double>(b.count) / static_cast<double>(most) + 0.5);
    std::string bars;
    for (int i = 0; i < std::max(bar, 1); ++i) bars += "\u2588";
    out += fmt::sprintf("  %22s  %8lld  %s\n", range.c_str(), static_cast<long long>(b.count), bars.c_str());
  }
  if (!r.excursions.empty()) {
    out += "\n  excursions\n";
    for (size_t i = 0; i < r.excursions.size() && i < 20; ++i) {
      const Excursion& e = r.excursions[i];
      out += fmt::sprintf("    tick %-8lld %10s late  at %s  (monotonic %.6f s)%s\n", static_cast<long long>(e.tick),
                    HumanNs(static_cast<double>(e.late_ns)).c_str(), FormatRealtimeNs(e.realtime_ns).c_str(),
                    static_cast<double>(e.monotonic_ns) * 1e-9,
                    i > 0 ? fmt::sprintf("  +%.3f s", r.gaps_s[i - 1]).c_str() : "");
    }
    if (r.excursions.size() > 20) out += fmt::sprintf("    ... %zu more (see --json)\n", r.excursions.size() - 20);
  }
  out += "\n  woke on       " + CpuCountsText(r.wake_cpus) + "\n";
  out += "  timer armed   " + (r.timer_cpus.empty() ? r.timer_cpu_note : CpuCountsText(r.timer_cpus) +
                                                                              " (sightings in /proc/timer_list; the CPU "
                                                                              "holding the timer is the one that expires it)") +
         "\n";
  return out;
}

std::string HostFindingsJson(const std::vector<HostFinding>& findings) {
  json list = json::array();
  for (const auto& f : findings) {
    list.push_back({{"level", LevelName(f.level)}, {"topic", f.topic}, {"value", f.value}, {"meaning", f.meaning}});
  }
  return json{{"findings", list}}.dump(2) + "\n";
}

std::string HostFindingsText(const std::vector<HostFinding>& findings) {
  std::string out = "pagereel probe host\n\n";
  for (const auto& f : findings) {
    out += fmt::sprintf("  %-4s  %-26s %s\n", std::string(LevelName(f.level)).c_str(), f.topic.c_str(), f.value.c_str());
    out += fmt::sprintf("        %-26s %s\n", "", f.meaning.c_str());
  }
  return out;
}

}  // namespace pagereel::probe
