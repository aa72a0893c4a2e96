// Reading fields out of received DevTools messages, without exposing the JSON library.
// Paths name nested object keys from the top of the message, e.g. {"result", "targetId"}.
// Pure functions; safe from any thread.
#ifndef PAGEREEL_CDP_JSON_UTIL_H_
#define PAGEREEL_CDP_JSON_UTIL_H_

#include <initializer_list>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cdp/client.h"

namespace pagereel::cdp {

using JsonPath = std::initializer_list<std::string_view>;

Result<std::string> GetString(const Message& message, JsonPath path);
Result<double> GetNumber(const Message& message, JsonPath path);
Result<bool> GetBool(const Message& message, JsonPath path);
// True when the path leads to a value (of any type).
bool Has(const Message& message, JsonPath path);

// The text of a large string field as a view into the message itself (no copy), for
// base64 payloads. Fails if the string contains JSON escapes (base64 never does).
// The view lives as long as `message`.
Result<std::string_view> GetRawStringView(const Message& message, JsonPath path);

// `text` as a quoted JSON string literal.
std::string JsonQuote(std::string_view text);

}  // namespace pagereel::cdp

#endif  // PAGEREEL_CDP_JSON_UTIL_H_
