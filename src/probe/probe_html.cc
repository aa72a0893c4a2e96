// The self-contained HTML report of a sampler run: the data as JSON and the chart library
// (uPlot, embedded at build time) inlined in one page that opens with no network.
#include <string>

#include "probe/probe_output.h"
#include "probe/report_assets.h"

namespace pagereel::probe {
namespace {

// Text placed inside <script> or <style> must not close the element early.
std::string EscapeForScript(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

constexpr std::string_view kPageStart = R"PR(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pagereel probe</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #1d232a; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin: 28px 0 6px; }
.sub { color: #5b6570; margin-top: 0; }
table { border-collapse: collapse; margin: 6px 0; } td, th { padding: 3px 12px 3px 0; text-align: left; vertical-align: top; }
th { color: #5b6570; font-weight: 600; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #dde2e7; border-radius: 8px; padding: 10px 14px; min-width: 220px; }
.card b { font-size: 20px; } .note { color: #8a4b00; } .muted { color: #5b6570; }
.group td:first-child { padding-left: 24px; color: #5b6570; }
footer { margin-top: 32px; color: #8a939c; font-size: 12px; }
</style>
<style>)PR";

constexpr std::string_view kPageBody = R"PR(</style></head><body>
<h1>pagereel probe</h1>
<p class="sub" id="sub"></p>
<div class="cards" id="cards"></div>
<h2>Fold: runnable threads by phase of the frame period</h2>
<p class="muted" id="fold-note"></p>
<div id="fold"></div>
<h2>Runnable threads: how often each count was seen</h2>
<div id="hist"></div>
<h2>Periodogram: periodic components of the runnable count</h2>
<p class="muted" id="pg-note"></p>
<div id="pg"></div>
<table id="peaks"></table>
<h2>Processes: CPUs in use and threads waiting for a CPU (schedstat)</h2>
<table id="procs"></table>
<p class="note" id="notes"></p>
<footer id="footer"></footer>
<script>)PR";

constexpr std::string_view kPageScript = R"PR(
(function () {
  const d = DATA;
  const el = (id) => document.getElementById(id);
  const fmt = (v, n = 2) => (v === null || v === undefined) ? "-" : Number(v).toFixed(n);
  const ms = (ns) => (ns / 1e6).toFixed(3) + " ms";
  const width = Math.min(1060, document.body.clientWidth - 20);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  el("sub").textContent = d.duration_s.toFixed(1) + " s, " + d.sampler.samples + " samples at Poisson instants (mean " +
      d.sampler.rate_hz + "/s), " + d.cpus + " CPUs";
  const card = (title, big, rest) => '<div class="card"><div class="muted">' + title + '</div><b>' + big + '</b><div>' + rest + '</div></div>';
  const psi = d.psi.cpu;
  el("cards").innerHTML =
    card("runnable threads, time mean", fmt(d.runnable.mean), "p50 " + d.runnable.p50 + " · p95 " + d.runnable.p95 +
         " · p99 " + d.runnable.p99 + " · max " + d.runnable.max + "<br>above " + d.cpus + " CPUs " + fmt(100 * d.runnable.above_cpus_share, 1) + "% of the time") +
    card("the load average said", fmt(d.loadavg.load1_min) + " – " + fmt(d.loadavg.load1_max),
         "1-min load during the run;<br>time-averaged runnable: " + fmt(d.loadavg.time_mean)) +
    card("CPU pressure (PSI)", psi ? fmt(psi.some_avg10) + "%" : "n/a",
         psi ? "some avg10; " + fmt(psi.some_total_us / 1000, 1) + " ms stalled in the run" +
               (psi.full_total_us !== null ? "<br>full: " + fmt(psi.full_avg10) + "%, " + fmt(psi.full_total_us / 1000, 1) + " ms" : "")
             : esc(d.psi.note)) +
    card("sampler wake-up delay", fmt(d.sampler.wake_delay_us.p50, 0) + " µs",
         "p50 · p95 " + fmt(d.sampler.wake_delay_us.p95, 0) + " µs · p99 " + fmt(d.sampler.wake_delay_us.p99, 0) +
         " µs<br>used " + fmt(100 * d.sampler.cpu_share, 2) + "% of a CPU");

  const f = d.fold;
  el("fold-note").textContent = "Folded on " + f.period_source + " (" + ms(f.period_ns) + "), " + f.bins.length +
      " bins. Peak " + fmt(f.peak) + " at phase " + ms(f.peak_phase_ns) + ", floor " + fmt(f.floor) +
      ", width at half height " + ms(f.half_height_width_ns) +
      ". One spike means the workload's frame ticks coincide; one bump per worker means they are spread.";
  const phase = f.bins.map((_, i) => (i + 0.5) * f.period_ns / f.bins.length / 1e6);
  const half = f.floor + (f.peak - f.floor) / 2;
  new uPlot({
    width, height: 300, scales: {x: {time: false}},
    series: [{label: "phase (ms)", value: (u, v) => v === null ? "-" : v.toFixed(3)},
             {label: "mean runnable", stroke: "#1f6feb", fill: "rgba(31,111,235,0.25)", paths: uPlot.paths.bars({size: [0.92]})},
             {label: "half height", stroke: "#d1242f", dash: [6, 4], points: {show: false}}],
    axes: [{label: "phase of the period (ms)"}, {label: "mean runnable threads"}],
  }, [phase, f.bins, phase.map(() => half)], el("fold"));

  // Every count from 0 to the largest seen, so the bars are evenly spaced.
  const counts = new Map(d.runnable.histogram.map((h) => [h.runnable, h.samples]));
  const hist = Array.from({length: (d.runnable.max || 0) + 1}, (_, k) => ({runnable: k, samples: counts.get(k) || 0}));
  new uPlot({
    width, height: 240, scales: {x: {time: false}},
    series: [{label: "runnable"}, {label: "share of time (%)", stroke: "#2da44e", fill: "rgba(45,164,78,0.3)", paths: uPlot.paths.bars({size: [0.8]})}],
    axes: [{label: "runnable threads"}, {label: "% of samples"}],
  }, [hist.map((h) => h.runnable), hist.map((h) => 100 * h.samples / d.sampler.samples)], el("hist"));

  const pg = d.periodogram;
  el("pg-note").textContent = "Resolution " + fmt(pg.resolution_hz, 4) + " Hz, scanned to " + fmt(pg.max_hz, 0) +
      " Hz, noise (median amplitude) " + fmt(pg.noise_amplitude, 3) + ". Peaks are refined on the raw sample times.";
  if (pg.spectrum_hz && pg.spectrum_hz.length) {
    new uPlot({
      width, height: 260, scales: {x: {time: false}},
      series: [{label: "Hz", value: (u, v) => v === null ? "-" : v.toFixed(3)}, {label: "amplitude", stroke: "#8250df", width: 1}],
      axes: [{label: "frequency (Hz)"}, {label: "amplitude (threads)"}],
    }, [pg.spectrum_hz, pg.spectrum_amplitude], el("pg"));
  }
  el("peaks").innerHTML = "<tr><th>frequency</th><th>amplitude</th><th></th></tr>" + pg.peaks.map((p) =>
      "<tr><td class=n>" + p.hz.toFixed(4) + " Hz</td><td class=n>" + fmt(p.amplitude, 3) + "</td><td class=muted>" +
      (p.significant ? "" : "within the noise") + "</td></tr>").join("");

  let rows = "<tr><th>pid</th><th>command / thread group</th><th>threads</th><th>cores running</th><th>threads waiting</th><th>migrations</th></tr>";
  for (const p of d.schedstat.processes) {
    rows += "<tr><td class=n>" + p.pid + "</td><td>" + esc(p.comm) + "</td><td class=n>" + p.threads + "</td><td class=n>" +
        fmt(p.cores_running, 3) + "</td><td class=n>" + fmt(p.threads_waiting, 3) + "</td><td class=n>" + (p.migrations ?? "-") + "</td></tr>";
    if (p.groups.length > 1) for (const g of p.groups.slice(0, 6)) {
      rows += "<tr class=group><td></td><td>" + esc(g.group) + "</td><td class=n>" + g.threads + "</td><td class=n>" +
          fmt(g.cores_running, 3) + "</td><td class=n>" + fmt(g.threads_waiting, 3) + "</td><td class=n>" + (g.migrations ?? "-") + "</td></tr>";
    }
  }
  el("procs").innerHTML = rows;
  el("notes").textContent = [d.schedstat.note].concat(d.notes).filter(Boolean).join(" · ");
  el("footer").textContent = "Made by pagereel probe. Charts: " + LIBRARY + " (MIT licence, included in this file).";
})();
</script>
</body></html>
)PR";

}  // namespace

Result<std::string> ProbeReportHtml(const ProbeReport& report) {
  if (ChartLibraryJs().empty()) {
    return FailedPreconditionError(
        "--report: this pagereel was built without its chart library (npm was missing or "
        "could not reach its registry, or PAGEREEL_PROBE_CHARTS=OFF; the build's warning "
        "said which); rebuild with npm and its registry available, or use --json");
  }
  std::string page;
  page.reserve(ChartLibraryJs().size() + 200000);
  page += kPageStart;
  page += EscapeForScript(ChartLibraryCss());
  page += kPageBody;
  page += "\n/* uPlot licence:\n" + EscapeForScript(ChartLibraryLicense()) + "*/\n";
  page += EscapeForScript(ChartLibraryJs());
  page += "\n</script>\n<script>\nconst DATA = ";
  page += EscapeForScript(ProbeReportJson(report, JsonDetail::kWithSpectrum));
  page += ";\nconst LIBRARY = \"" + std::string(ChartLibraryVersion()) + "\";";
  page += kPageScript;
  return page;
}

}  // namespace pagereel::probe
