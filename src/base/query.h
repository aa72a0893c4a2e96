// Query strings as pagereel reads them (its servers' requests, srt:// URLs): split into their
// name=value pairs, still encoded (base/percent_encoding.h decodes them: '+' is a space in a
// query or form, itself in a path segment). Pure; safe from any thread.
#ifndef PAGEREEL_BASE_QUERY_H_
#define PAGEREEL_BASE_QUERY_H_

#include <string>
#include <string_view>
#include <vector>

namespace pagereel {

// One name=value pair of a query string, both still encoded.
struct QueryPair {
  std::string_view name;
  std::string_view value;  // Empty when the pair has no '='.
};

// The pairs of `query` (the text after '?', or a form body) in order; empty pairs ("a=1&&b=2")
// are skipped. The pairs point into `query`.
std::vector<QueryPair> SplitQuery(std::string_view query);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_QUERY_H_
