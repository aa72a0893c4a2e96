// `pagereel probe host`: reads the host's timing configuration and explains it. Every
// finding says what was found, what it means for a frame clock, and what to do, each in one
// line. Reads through HostFiles, so fixtures stand in for the host in tests; a file that is
// missing or malformed becomes a finding, never a failure. Safe from any thread.
#ifndef PAGEREEL_PROBE_HOST_H_
#define PAGEREEL_PROBE_HOST_H_

#include <string>
#include <vector>

#include "probe/host_files.h"

namespace pagereel::probe {

struct HostFinding {
  enum class Level { kOk, kInfo, kWarn };
  Level level = Level::kInfo;
  std::string topic;    // "isolated CPUs"
  std::string value;    // "2-3,6-7"
  std::string meaning;  // What it means and what to do, one line.
};

std::string_view LevelName(HostFinding::Level level);

std::vector<HostFinding> InspectHost(const HostFiles& files);

// "0-3,8" from {0,1,2,3,8}.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_HOST_H_
