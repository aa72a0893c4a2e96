#include "base/percent_encoding.h"

#include <cctype>

namespace pagereel {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::string_view kFileScheme = "file://";

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, PlusSign plus) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus == PlusSign::kSpace) {
      out += ' ';
    } else if (c == '%') {
      const int hi = i + 2 < text.size() ? HexDigit(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexDigit(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string FileUrlForPath(std::string_view absolute_path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out(kFileScheme);
  for (unsigned char c : absolute_path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::optional<std::string> PathOfFileUrl(std::string_view url) {
  if (!url.starts_with(kFileScheme)) return std::nullopt;
  std::string_view path = url.substr(kFileScheme.size());
  path = path.substr(0, path.find_first_of("?#"));
  return PercentDecode(path, PlusSign::kItself);
}

}  // namespace pagereel
