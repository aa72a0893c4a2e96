#include "base/pressure.h"

#include <charconv>
#include <string>
#include <vector>

namespace pagereel {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Status Malformed(std::string_view why, std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return InvalidArgumentError("/proc/pressure/cpu is malformed (" + std::string(why) + "): '" +
                              std::string(text.substr(0, 80)) + "'");
}

}  // namespace

Result<Pressure> ParsePressure(std::string_view text) {
  Pressure out;
  bool have_some = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
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
