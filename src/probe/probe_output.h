// How a ProbeReport is shown: one JSON object (--json), a compact terminal table with the
// fold drawn as a bar chart, or a self-contained HTML page with charts (--report).
// Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_PROBE_OUTPUT_H_
#define PAGEREEL_PROBE_PROBE_OUTPUT_H_

#include <string>

#include "probe/probe_run.h"

namespace pagereel::probe {

std::string ProbeReportJson(const ProbeReport& report);
std::string ProbeReportText(const ProbeReport& report);

// A page that opens with no network: the chart library and the data are inlined.
// kFailedPrecondition when this binary was built without the chart library.
Result<std::string> ProbeReportHtml(const ProbeReport& report);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_PROBE_OUTPUT_H_
