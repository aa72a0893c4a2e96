#include "probe/text_format.h"

#include <fmt/printf.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pagereel::probe {

std::string HumanNs(double ns) {
  const double a = std::abs(ns);
  if (a >= 1e9) return fmt::sprintf("%.3f s", ns * 1e-9);
  if (a >= 1e6) return fmt::sprintf("%.3f ms", ns * 1e-6);
  if (a >= 1e3) return fmt::sprintf("%.1f us", ns * 1e-3);
  return fmt::sprintf("%.0f ns", ns);
}

std::string BarChart(std::span<const double> values, int rows, const std::string& indent) {
  static const char* const kEighths[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
  double top = 0;
  for (double v : values) {
    if (std::isfinite(v)) top = std::max(top, v);
  }
  std::string out;
  for (int row = rows - 1; row >= 0; --row) {
    out += indent;
    for (double v : values) {
      const double level = (std::isfinite(v) && top > 0) ? v / top * rows * 8 : 0;
      const int eighths = std::clamp(static_cast<int>(std::lround(level)) - row * 8, 0, 8);
      out += kEighths[eighths];
      out += kEighths[eighths];  // Two cells per column: a bin reads as a bar, not a line.
    }
    out += '\n';
  }
  return out;
}

}  // namespace pagereel::probe
