#include "base/pressure.h"

#include <string>
#include <vector>

#include "base/text_fields.h"

namespace pagereel {

namespace {

Status Malformed(std::string_view why, std::string_view text) {
  return InvalidArgumentError("/proc/pressure/cpu is malformed (" + std::string(why) + "): '" +
                              std::string(Trim(text).substr(0, 80)) + "'");
}

}  // namespace

Result<Pressure> ParsePressure(std::string_view text) {
  Pressure out;
  bool have_some = false;
  for (std::string_view line : Lines(text)) {
    const std::vector<std::string_view> f = Fields(line);
    if (f.empty()) continue;
    PressureLine parsed;
    int seen = 0;
    for (size_t i = 1; i < f.size(); ++i) {
      const size_t eq = f[i].find('=');
      if (eq == std::string_view::npos) return Malformed("no key=value", line);
      const std::string_view key = f[i].substr(0, eq);
      const std::string_view value = f[i].substr(eq + 1);
      bool ok = true;
      if (key == "avg10") {
        ok = ParseNumber(value, parsed.avg10), ++seen;
      } else if (key == "avg60") {
        ok = ParseNumber(value, parsed.avg60), ++seen;
      } else if (key == "avg300") {
        ok = ParseNumber(value, parsed.avg300), ++seen;
      } else if (key == "total") {
        ok = ParseNumber(value, parsed.total_us), ++seen;
      }
      if (!ok) return Malformed("bad number", line);
    }
    if (seen != 4) return Malformed("missing avg10/avg60/avg300/total", line);
    if (f[0] == "some") {
      out.some = parsed;
      have_some = true;
    } else if (f[0] == "full") {
      out.full = parsed;
    }
  }
  if (!have_some) return Malformed("no 'some' line", text);
  return out;
}

}  // namespace pagereel
