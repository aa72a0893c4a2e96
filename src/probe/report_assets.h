// The chart library (uPlot, from the npm registry at build time; see report/package.json)
// inlined into this binary for the self-contained `pagereel probe --report` page.
// Constant data: safe from any thread.
#ifndef PAGEREEL_PROBE_REPORT_ASSETS_H_
#define PAGEREEL_PROBE_REPORT_ASSETS_H_

#include <string_view>

namespace pagereel::probe {

// Empty when the binary was built without the library (PAGEREEL_PROBE_CHARTS=OFF or no npm).
std::string_view ChartLibraryJs();
std::string_view ChartLibraryCss();
std::string_view ChartLibraryLicense();
std::string_view ChartLibraryVersion();

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_REPORT_ASSETS_H_
