#include "http/token.h"

#include <string>

namespace pagereel::http {

bool IsAuthorized(std::string_view authorization, std::string_view token) {
  if (token.empty()) return true;
  const std::string expected = "Bearer " + std::string(token);
  if (authorization.size() != expected.size()) return false;
  // Every byte is compared, whatever the first difference: no early exit.
  unsigned char diff = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(authorization[i] ^ expected[i]);
  }
  return diff == 0;
}

}  // namespace pagereel::http
