// Parsing of the probe's duration flags: "500us", "16.667ms", "2s", "1500ns".
// Pure functions: safe from any thread.
#ifndef PAGEREEL_PROBE_DURATION_H_
#define PAGEREEL_PROBE_DURATION_H_

#include <chrono>
#include <string_view>

#include "base/status.h"

namespace pagereel::probe {

enum class BareNumber {
  kRejected,   // A unit is required ("--period 16.667ms").
  kSeconds,    // A bare number is seconds ("--duration 10").
};

// A positive duration, rounded to the nearest nanosecond. `flag` names the flag in errors.
// Rejects zero, negatives, and text that is not a number with a unit (ns, us, ms, s).
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text, std::string_view flag,
                                               BareNumber bare);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_DURATION_H_
