// Query strings and percent-encoding, as pagereel's servers read them: a query string
// split into its name=value pairs, and %XX decoding, where '+' is a space in a query or
// form (application/x-www-form-urlencoded) and itself in a path segment. Pure; safe from
// any thread.
#ifndef PAGEREEL_HTTP_QUERY_H_
#define PAGEREEL_HTTP_QUERY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pagereel::http {

// What a '+' in encoded text stands for.
enum class Plus {
  kSpace,  // A query string or an HTML form: "a+b" is "a b".
  kPlus,   // A path segment (RFC 3986): "a+b" is "a+b".
};

// `text` with every %XX replaced by the byte it names (and '+' as `plus` says); nullopt when
// a '%' is not followed by two hex digits.
std::optional<std::string> PercentDecode(std::string_view text, Plus plus);

// One name=value pair of a query string, both still encoded.
struct QueryPair {
  std::string_view name;
  std::string_view value;  // Empty when the pair has no '='.
};

// The pairs of `query` (the text after '?', or a form body) in order; empty pairs ("a=1&&b=2")
// are skipped. The pairs point into `query`.
std::vector<QueryPair> SplitQuery(std::string_view query);

}  // namespace pagereel::http

#endif  // PAGEREEL_HTTP_QUERY_H_
