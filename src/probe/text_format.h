// Small text helpers shared by the probe's terminal and file outputs. Internal to the
// probe module; pure functions, safe from any thread.
#ifndef PAGEREEL_PROBE_TEXT_FORMAT_H_
#define PAGEREEL_PROBE_TEXT_FORMAT_H_

#include <span>
#include <string>

namespace pagereel::probe {

// "16.667 ms", "850 us", "2.000 s": a nanosecond count in a unit a person reads at a glance.
std::string HumanNs(double ns);

// A vertical bar chart `rows` lines high, one column per value (NaN draws nothing), drawn
// with Unicode eighth blocks; each line ends in '\n' and starts with `indent`.
std::string BarChart(std::span<const double> values, int rows, const std::string& indent);

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_TEXT_FORMAT_H_
