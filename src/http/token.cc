#include "http/token.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace pagereel::http {

bool IsAuthorized(std::string_view authorization, std::string_view token) {
  if (token.empty()) return true;
  // RFC 9110, section 11.1: the scheme's name is case-insensitive, and one or more spaces
  // part it from the credentials.
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  }
  std::string_view given = authorization.substr(kScheme.size());
  given.remove_prefix(std::min(given.find_first_not_of(' '), given.size()));
  if (given.size() != token.size()) return false;
  // Every byte is compared, whatever the first difference: no early exit.
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ token[i]);
  }
  return diff == 0;
}

}  // namespace pagereel::http
