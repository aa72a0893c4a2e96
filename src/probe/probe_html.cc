#include "probe/probe_output.h"

namespace pagereel::probe {

Result<std::string> ProbeReportHtml(const ProbeReport&) {
  return FailedPreconditionError("--report is not built yet");
}

}  // namespace pagereel::probe
