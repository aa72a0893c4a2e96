// ParsePressure: the kernel's CPU pressure file (/proc/pressure/cpu, PSI), which `probe`
// reports and live's status shows. Pure; any thread.
#ifndef PAGEREEL_BASE_PRESSURE_H_
#define PAGEREEL_BASE_PRESSURE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace pagereel {

// "some avg10=.. avg60=.. avg300=.. total=..", and on kernels >= 5.13 a "full" line too.
struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;  // Percent of wall time.
  int64_t total_us = 0;                     // Stalled microseconds since boot.
};
struct Pressure {
  PressureLine some;
  std::optional<PressureLine> full;  // Absent on older kernels.
};

// kInvalidArgument naming the file and the line when the text is not what the kernel writes.
Result<Pressure> ParsePressure(std::string_view text);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_PRESSURE_H_
