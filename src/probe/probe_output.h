// How a ProbeReport is shown: one JSON object (--json), a compact terminal table with the
// fold drawn as a bar chart, or a self-contained HTML page with charts (--report).
// Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_PROBE_OUTPUT_H_
#define PAGEREEL_PROBE_PROBE_OUTPUT_H_

#include <string>

#include <vector>

#include "probe/clock_probe.h"
#include "probe/host.h"
#include "probe/probe_run.h"

namespace pagereel::probe {

enum class JsonDetail {
  kSummary,       // What --json prints.
  kWithSpectrum,  // Plus the periodogram's plotted spectrum (for the HTML report).
};
std::string ProbeReportJson(const ProbeReport& report, JsonDetail detail = JsonDetail::kSummary);
std::string ProbeReportText(const ProbeReport& report);

// A page that opens with no network: the chart library and the data are inlined.
// kFailedPrecondition when this binary was built without the chart library.
Result<std::string> ProbeReportHtml(const ProbeReport& report);

std::string ClockReportJson(const ClockReport& report);
std::string ClockReportText(const ClockReport& report);

// The tripwire line printed the moment a tick is late (no trailing newline).
std::string ExcursionLine(const Excursion& e);

// "2026-11-30T06:00:18.123456Z".
std::string FormatRealtimeNs(int64_t realtime_ns);

std::string HostFindingsJson(const std::vector<HostFinding>& findings);
std::string HostFindingsText(const std::vector<HostFinding>& findings);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_PROBE_OUTPUT_H_
