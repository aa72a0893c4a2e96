// Splitting the kernel's text files (/proc, /sys) into lines and whitespace-separated
// fields, and reading whole numbers from them. Pure functions; any thread.
#ifndef PAGEREEL_BASE_TEXT_FIELDS_H_
#define PAGEREEL_BASE_TEXT_FIELDS_H_

#include <charconv>
#include <string_view>
#include <system_error>
#include <vector>

namespace pagereel {

// `text` without leading and trailing spaces, tabs and line ends.
std::string_view Trim(std::string_view text);

// The fields of `text`, split on runs of whitespace.
std::vector<std::string_view> Fields(std::string_view text);

// The lines of `text`, without their '\n'.
std::vector<std::string_view> Lines(std::string_view text);

// The whole of `text` as a number (no sign for unsigned T, no trailing characters).
template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace pagereel

#endif  // PAGEREEL_BASE_TEXT_FIELDS_H_
