#include "serve/answer.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace pagereel::serve {

namespace {

const char* ErrorName(int status) {
  switch (status) {
    case 400:
      return "bad parameter";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 413:
      return "body too large";
    case 422:
      return "page could not be loaded";
    case 431:
      return "headers too large";
    case 502:
      return "browser crashed";
    case 503:
      return "overloaded";
    case 504:
      return "page did not finish in time";
    default:
      return "internal error";
  }
}

}  // namespace

Answer ErrorAnswer(int status, std::string_view detail) {
  using nlohmann::json;
  Answer a;
  a.status = status;
  a.content_type = "application/json";
  a.body = json{{"error", ErrorName(status)}, {"detail", detail}}.dump(
               -1, ' ', false, json::error_handler_t::replace) +
           "\n";
  return a;
}

Answer NoRouteAnswer(std::string_view path) {
  std::string shown(Utf8Prefix(path, 100));
  if (shown.size() < path.size()) shown += "...";
  return ErrorAnswer(404, "no route " + shown +
                              "; the routes are /v1/screenshot, /v1/pdf, /v1/gif, /v1/clip, "
                              "/healthz, /readyz, /metrics and /v1/status");
}

std::string HeaderText(std::string_view text, size_t max_bytes) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max_bytes) {
      out.resize(max_bytes > 3 ? max_bytes - 3 : 0);
      return out + "...";
    }
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (c >= 0x80) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace pagereel::serve
