// Percent-encoding (RFC 3986 %XX), as pagereel reads it in query strings, path segments and
// file:// URLs, and writes it for file:// URLs of local pages. Pure; any thread.
#ifndef PAGEREEL_BASE_PERCENT_ENCODING_H_
#define PAGEREEL_BASE_PERCENT_ENCODING_H_

#include <optional>
#include <string>
#include <string_view>

namespace pagereel {

// What a '+' in encoded text stands for.
enum class PlusSign {
  kSpace,   // A query string or an HTML form: "a+b" is "a b".
  kItself,  // A path segment or a file URL (RFC 3986): "a+b" is "a+b".
};

// `text` with every %XX replaced by the byte it names (and '+' as `plus` says); nullopt when
// a '%' is not followed by two hex digits.
std::optional<std::string> PercentDecode(std::string_view text, PlusSign plus);

// The file:// URL of an absolute path: every byte but letters, digits and / - _ . ~ as %XX.
std::string FileUrlForPath(std::string_view absolute_path);

// The path a file:// URL names (its query and fragment left out); nullopt for another
// scheme or a malformed escape.
std::optional<std::string> PathOfFileUrl(std::string_view url);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_PERCENT_ENCODING_H_
