#include "probe/duration.h"

#include <charconv>
#include <cmath>
#include <string>

namespace pagereel::probe {

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text, std::string_view flag,
                                               BareNumber bare) {
  const std::string quoted = std::string(flag) + " '" + std::string(text) + "'";
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) {
    return InvalidArgumentError(quoted + ": not a duration; write it as e.g. 500us, 16.667ms or 2s");
  }
  const std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  double scale;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (unit.empty() && bare == BareNumber::kSeconds) {
    scale = 1e9;
  } else {
    return InvalidArgumentError(quoted + ": needs a unit (ns, us, ms or s), e.g. 16.667ms");
  }
  const double ns = std::round(value * scale);
  if (ns <= 0) return InvalidArgumentError(quoted + ": must be greater than zero");
  if (ns > 1e18) return InvalidArgumentError(quoted + ": too long");
  return std::chrono::nanoseconds(static_cast<int64_t>(ns));
}

}  // namespace pagereel::probe
