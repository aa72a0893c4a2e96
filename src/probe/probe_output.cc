#include "probe/probe_output.h"

#include <fmt/printf.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "probe/text_format.h"

namespace pagereel::probe {
namespace {

using nlohmann::json;

json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json PsiJson(const ProbeReport& r) {
  json psi;
  if (!r.psi_start || !r.psi_end) {
    psi["cpu"] = nullptr;
    psi["note"] = r.psi_note.empty() ? "PSI could not be read at the end of the run" : r.psi_note;
    return psi;
  }
  json cpu;
  cpu["some_avg10"] = r.psi_end->some.avg10;
  cpu["some_avg60"] = r.psi_end->some.avg60;
  cpu["some_total_us"] = r.psi_end->some.total_us - r.psi_start->some.total_us;
  if (r.psi_end->full && r.psi_start->full) {
    cpu["full_avg10"] = r.psi_end->full->avg10;
    cpu["full_avg60"] = r.psi_end->full->avg60;
    cpu["full_total_us"] = r.psi_end->full->total_us - r.psi_start->full->total_us;
  } else {
    cpu["full_avg10"] = nullptr;
    cpu["full_total_us"] = nullptr;
  }
  psi["cpu"] = cpu;
  return psi;
}

json Optional(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::string ProbeReportJson(const ProbeReport& r, JsonDetail detail) {
  json j;
  j["cpus"] = r.cpus;
  j["duration_s"] = r.elapsed_s;

  json runnable{{"mean", r.runnable.mean}, {"p50", r.runnable.p50}, {"p95", r.runnable.p95},
                {"p99", r.runnable.p99}, {"max", r.runnable.max},
                {"above_cpus_share", r.above_cpus_share}};
  json histogram = json::array();
  for (const auto& [count, samples] : r.runnable_histogram) histogram.push_back({{"runnable", count}, {"samples", samples}});
  runnable["histogram"] = histogram;
  j["runnable"] = runnable;

  json bins = json::array();
  for (double b : r.fold.bins) bins.push_back(Number(b));
  j["fold"] = {{"period_ns", r.fold.period_ns.ToDouble()},
               {"period_ns_exact", r.fold.period_ns.ToString()},
               {"period_source", r.options.period_source},
               {"bins", bins},
               {"bin_samples", r.fold.counts},
               {"bin_width_ns", r.fold.BinWidthNs()},
               {"peak_phase_ns", r.fold.peak_phase_ns},
               {"peak", r.fold.peak},
               {"floor", r.fold.floor},
               {"half_height_width_ns", r.fold.half_height_width_ns}};

  json peaks = json::array();
  for (const auto& p : r.periodogram.peaks) peaks.push_back({{"hz", p.hz}, {"amplitude", p.amplitude}, {"significant", p.significant}});
  j["periodogram"] = {{"peaks", peaks},
                      {"noise_amplitude", r.periodogram.noise_amplitude},
                      {"resolution_hz", r.periodogram.resolution_hz},
                      {"max_hz", r.periodogram.max_hz}};

  j["psi"] = PsiJson(r);

  json processes = json::array();
  for (const auto& p : r.processes) {
    json groups = json::array();
    for (const auto& g : p.groups) {
      groups.push_back({{"group", g.group}, {"threads", g.threads}, {"cores_running", g.cores_running},
                        {"threads_waiting", g.threads_waiting}, {"migrations", Optional(g.migrations)}});
    }
    processes.push_back({{"pid", p.pid}, {"comm", p.comm}, {"threads", p.threads},
                         {"cores_running", p.cores_running}, {"threads_waiting", p.threads_waiting},
                         {"migrations", Optional(p.migrations)}, {"groups", groups}});
  }
  j["schedstat"] = {{"processes", processes}, {"migrations_visible", r.migrations_visible}};
  if (!r.schedstat_note.empty()) j["schedstat"]["note"] = r.schedstat_note;

  j["sampler"] = {{"rate_hz", r.options.rate_hz},
                  {"samples", r.samples},
                  {"wake_delay_us", {{"p50", r.wake_delay_us.p50}, {"p95", r.wake_delay_us.p95},
                                     {"p99", r.wake_delay_us.p99}, {"max", r.wake_delay_us.max}}},
                  {"cpu_seconds", r.sampler_cpu_s},
                  {"cpu_share", r.elapsed_s > 0 ? r.sampler_cpu_s / r.elapsed_s : 0.0}};
  j["loadavg"] = {{"load1_min", r.load1_min}, {"load1_max", r.load1_max},
                  {"load1_start", r.load1_start}, {"load1_end", r.load1_end},
                  {"time_mean", r.runnable.mean}};
  j["notes"] = r.notes;
  if (detail == JsonDetail::kWithSpectrum) {
    j["periodogram"]["spectrum_hz"] = r.periodogram.spectrum_hz;
    j["periodogram"]["spectrum_amplitude"] = r.periodogram.spectrum_amplitude;
  }
  return j.dump(detail == JsonDetail::kSummary ? 2 : -1) + "\n";
}

std::string ProbeReportText(const ProbeReport& r) {
  std::string out;
  out += fmt::sprintf("pagereel probe: %.1f s, %lld samples at Poisson instants (mean %g/s), %d CPUs\n\n",
                r.elapsed_s, static_cast<long long>(r.samples), r.options.rate_hz, r.cpus);
  out += fmt::sprintf("  runnable threads  mean %.2f   p50 %g   p95 %g   p99 %g   max %g\n", r.runnable.mean,
                r.runnable.p50, r.runnable.p95, r.runnable.p99, r.runnable.max);
  out += fmt::sprintf("                    above %d CPUs %.1f%% of the time\n", r.cpus, 100 * r.above_cpus_share);
  out += fmt::sprintf("  load average      1-min load read %.2f .. %.2f during the run; the time-averaged\n"
                "                    runnable count was %.2f (the load average is a 5 s point sample, damped)\n",
                r.load1_min, r.load1_max, r.runnable.mean);

  const auto& f = r.fold;
  out += fmt::sprintf("\n  fold on %s (%s, %zu bins of %s)\n", r.options.period_source.c_str(),
                HumanNs(f.period_ns.ToDouble()).c_str(), f.bins.size(), HumanNs(static_cast<double>(f.BinWidthNs())).c_str());
  out += fmt::sprintf("    peak %.2f at phase %s   floor %.2f   width at half height %s\n", f.peak,
                HumanNs(static_cast<double>(f.peak_phase_ns)).c_str(), f.floor,
                HumanNs(static_cast<double>(f.half_height_width_ns)).c_str());
  out += BarChart(f.bins, 5, "          |");
  const std::string axis_end = HumanNs(f.period_ns.ToDouble());
  std::string axis = "          0";
  const size_t width = f.bins.size() * 2;
  axis.append(width > axis_end.size() + 1 ? width - axis_end.size() - 1 : 1, ' ');
  out += axis + axis_end + "\n";

  out += "\n  periodogram      ";
  int shown = 0;
  for (const PeriodicComponent& p : r.periodogram.peaks) {
    if (!p.significant || shown == 4) continue;
    out += fmt::sprintf("%s%.4f Hz (amplitude %.2f)", shown++ ? ",  " : "", p.hz, p.amplitude);
  }
  if (shown == 0) out += "no periodic component stands above the noise";
  out += fmt::sprintf("\n                   noise %.3f, resolution %.4f Hz\n", r.periodogram.noise_amplitude,
                r.periodogram.resolution_hz);

  if (r.psi_start && r.psi_end) {
    out += fmt::sprintf("\n  CPU pressure      some: avg10 %.2f%%, %.1f ms stalled during the run", r.psi_end->some.avg10,
                  static_cast<double>(r.psi_end->some.total_us - r.psi_start->some.total_us) * 1e-3);
    if (r.psi_end->full && r.psi_start->full) {
      out += fmt::sprintf("; full: avg10 %.2f%%, %.1f ms", r.psi_end->full->avg10,
                    static_cast<double>(r.psi_end->full->total_us - r.psi_start->full->total_us) * 1e-3);
    }
    out += "\n";
  } else {
    out += "\n  CPU pressure      " + r.psi_note + "\n";
  }

  out += "\n  processes          pid  comm              cores running  threads waiting  migrations\n";
  for (const auto& p : r.processes) {
    out += fmt::sprintf("                 %6d  %-16.16s  %13.3f  %15.3f  %10s\n", p.pid, p.comm.c_str(), p.cores_running,
                  p.threads_waiting, p.migrations ? std::to_string(*p.migrations).c_str() : "-");
    for (size_t g = 0; g < p.groups.size() && g < 3 && p.groups.size() > 1; ++g) {
      const auto& gu = p.groups[g];
      out += fmt::sprintf("                          %-16.16s  %13.3f  %15.3f  %10s  (%d thread%s)\n",
                    ("  " + gu.group).c_str(), gu.cores_running, gu.threads_waiting,
                    gu.migrations ? std::to_string(*gu.migrations).c_str() : "-", gu.threads,
                    gu.threads == 1 ? "" : "s");
    }
  }
  if (!r.schedstat_note.empty()) out += "                   note: " + r.schedstat_note + "\n";

  out += fmt::sprintf("\n  sampler           woke late by p50 %.0f us, p95 %.0f us, p99 %.0f us; used %.2f%% of a CPU\n",
                r.wake_delay_us.p50, r.wake_delay_us.p95, r.wake_delay_us.p99,
                r.elapsed_s > 0 ? 100 * r.sampler_cpu_s / r.elapsed_s : 0.0);
  for (const std::string& note : r.notes) out += "  note: " + note + "\n";
  return out;
}

}  // namespace pagereel::probe
