// JSON text read with nlohmann-json, its errors in words for the client (inside live's
// control library only: public headers keep JSON out). Pure; any thread.
#ifndef PAGEREEL_LIVE_JSON_PARSE_H_
#define PAGEREEL_LIVE_JSON_PARSE_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "base/status.h"

namespace pagereel::live {

// `text` parsed, or kInvalidArgument "WHAT is not JSON: " and the parser's own words.
Result<nlohmann::ordered_json> ParseJson(std::string_view text, std::string_view what);

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_JSON_PARSE_H_
