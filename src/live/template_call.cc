#include "live/template_call.h"

#include <cctype>
#include <string>

#include "live/json_parse.h"

namespace pagereel::live {

namespace {

using json = nlohmann::ordered_json;

// `text` cut to `limit` characters, for echoing user input in messages.
std::string Shown(std::string_view text, size_t limit = 80) {
  std::string out(text.substr(0, limit));
  if (text.size() > limit) out += "...";
  return out;
}

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$';
}
bool IsNamePart(char c) {
  return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// "update" or "graphics.lowerThird.play": JavaScript names joined by dots. Stricter than
// ^[A-Za-z_$][A-Za-z0-9_$.]*$ only in refusing empty parts ("a..b", "a.").
bool IsFunctionName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  bool part_start = true;
  for (char c : name) {
    if (c == '.') {
      if (part_start) return false;
      part_start = true;
      continue;
    }
    if (part_start ? !IsNameStart(c) : !IsNamePart(c)) return false;
    part_start = false;
  }
  return !part_start;
}

}  // namespace

Result<json> ParseJson(std::string_view text, std::string_view what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    std::string detail = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> from "parse".
    if (size_t bracket = detail.find("] "); bracket != std::string::npos)
      detail.erase(0, bracket + 2);
    return InvalidArgumentError(std::string(what) + " is not JSON: " + detail);
  }
}

Result<std::string> TemplateCall(std::string_view function, std::string_view args_json) {
  if (!IsFunctionName(function)) {
    return InvalidArgumentError(
        "the function name '" + Shown(function) +
        "' is not a JavaScript name (letters, digits, _ and $, not starting with a digit, parts "
        "joined by dots), such as update, play, next or stop");
  }
  PR_ASSIGN_OR_RETURN(json args, ParseJson(args_json, "args"));
  if (!args.is_array()) {
    return InvalidArgumentError(
        "args must be a JSON array of the call's arguments, such as "
        "[{\"name\":\"Ada\"}]; it is " +
        std::string(args.type_name()));
  }
  std::string expression(function);
  expression += "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) expression += ",";
    // ASCII-only JSON is a JavaScript expression of the same value.
    expression += args[i].dump(-1, ' ', true, json::error_handler_t::replace);
  }
  expression += ")";
  return expression;
}

Status CheckSourceUrl(std::string_view url) {
  const size_t colon = url.find(':');
  std::string scheme(url.substr(0, colon == std::string_view::npos ? 0 : colon));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string_view rest = colon == std::string_view::npos ? "" : url.substr(colon + 1);
  bool ok = false;
  if (scheme == "http" || scheme == "https") {
    ok = rest.starts_with("//") && rest.size() > 2 && rest[2] != '/';
  } else if (scheme == "file") {
    ok = rest.starts_with("//");
  } else if (scheme == "data") {
    ok = !rest.empty();
  }
  if (ok) return Status::Ok();
  if (url.empty()) {
    return InvalidArgumentError(
        "the url is empty; give an http://, https://, file:// or data: "
        "URL (reload takes none)");
  }
  return InvalidArgumentError(
      "a source can be sent to http://, https://, file:// and data: URLs, "
      "not '" +
      Shown(url) + "'");
}

}  // namespace pagereel::live
