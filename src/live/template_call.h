// What the show's controls may ask of a page: a call of one of its template functions
// (update, play, next, stop ...) written so that no argument can become code, and the URLs
// a source may be sent to. Shared by the HTTP control server and the AMCP server. Pure;
// any thread.
#ifndef PAGEREEL_LIVE_TEMPLATE_CALL_H_
#define PAGEREEL_LIVE_TEMPLATE_CALL_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace pagereel::live {

// The expression that calls a page's template function: `function` (a JavaScript name,
// dotted names allowed: update, play, obj.next) applied to the JSON array `args_json`, each
// argument written as JSON, never spliced in as text. kInvalidArgument naming the problem
// for a bad name or arguments that are not a JSON array.
Result<std::string> TemplateCall(std::string_view function, std::string_view args_json);

// OK for the URLs a source may be sent to (http, https, file, data); else kInvalidArgument.
Status CheckSourceUrl(std::string_view url);

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_TEMPLATE_CALL_H_
