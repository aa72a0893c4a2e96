#include "cdp/json_util.h"

#include <simdjson.h>

#include <cstdio>

namespace pagereel::cdp {

namespace {

std::string PathText(JsonPath path) {
  std::string out;
  for (std::string_view key : path) {
    if (!out.empty()) out += '.';
    out += key;
  }
  return out;
}

Result<simdjson::dom::element> Find(const Message& message, JsonPath path,
                                    simdjson::dom::parser& parser) {
  simdjson::dom::element element;
  if (parser.parse(message.json).get(element) != simdjson::SUCCESS) {
    return InternalError("the browser sent a message that is not JSON");
  }
  for (std::string_view key : path) {
    if (element[key].get(element) != simdjson::SUCCESS) {
      return NotFoundError("the browser's reply has no " + PathText(path));
    }
  }
  return element;
}

}  // namespace

Result<std::string> GetString(const Message& message, JsonPath path) {
  simdjson::dom::parser parser;
  PR_ASSIGN_OR_RETURN(simdjson::dom::element e, Find(message, path, parser));
  std::string_view text;
  if (e.get(text) != simdjson::SUCCESS) {
    return InternalError(PathText(path) + " in the browser's reply is not a string");
  }
  return std::string(text);
}

Result<double> GetNumber(const Message& message, JsonPath path) {
  simdjson::dom::parser parser;
  PR_ASSIGN_OR_RETURN(simdjson::dom::element e, Find(message, path, parser));
  double value = 0;
  if (e.get(value) != simdjson::SUCCESS) {
    return InternalError(PathText(path) + " in the browser's reply is not a number");
  }
  return value;
}

Result<bool> GetBool(const Message& message, JsonPath path) {
  simdjson::dom::parser parser;
  PR_ASSIGN_OR_RETURN(simdjson::dom::element e, Find(message, path, parser));
  bool value = false;
  if (e.get(value) != simdjson::SUCCESS) {
    return InternalError(PathText(path) + " in the browser's reply is not a boolean");
  }
  return value;
}


namespace {

// Walks `message` on demand to `path` and hands the value to `use`. On-demand parsing reads
// the message in place and skips what it does not need, where a DOM parse would copy every
// string: screenshot replies carry megabytes of base64. A message that lost its spare
// capacity (a copy, not a move, of a received one) is parsed from a padded copy; `base` is
// where the parsed bytes start, to map pointers back into the original.
template <typename Use>
auto OnDemand(const Message& message, JsonPath path, Use use)
    -> decltype(use(std::declval<simdjson::ondemand::value&>(), static_cast<const char*>(nullptr))) {
  const std::string& json = message.json;
  simdjson::padded_string copy;
  const char* base = json.data();
  if (json.capacity() < json.size() + simdjson::SIMDJSON_PADDING) {
    copy = simdjson::padded_string(json);
    base = copy.data();
  }
  simdjson::ondemand::parser parser;
  simdjson::padded_string_view view(base, json.size(), base == json.data() ? json.capacity()
                                                                           : copy.size() + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (parser.iterate(view).get(doc) != simdjson::SUCCESS) {
    return InternalError("the browser sent a message that is not JSON");
  }
  simdjson::ondemand::value value;
  bool first = true;
  for (std::string_view key : path) {
    auto found = first ? doc.find_field_unordered(key) : value.find_field_unordered(key);
    first = false;
    if (found.get(value) != simdjson::SUCCESS) {
      return NotFoundError("the browser's reply has no " + PathText(path));
    }
  }
  return use(value, base);
}

}  // namespace

bool Has(const Message& message, JsonPath path) {
  return OnDemand(message, path, [](simdjson::ondemand::value&, const char*) {
           return Status::Ok();
         }).ok();
}

Result<std::string_view> GetRawStringView(const Message& message, JsonPath path) {
  const std::string& json = message.json;
  return OnDemand(message, path,
                  [&](simdjson::ondemand::value& value,
                      const char* base) -> Result<std::string_view> {
                    simdjson::ondemand::raw_json_string raw;
                    if (value.get_raw_json_string().get(raw) != simdjson::SUCCESS) {
                      return InternalError(PathText(path) +
                                           " in the browser's reply is not a string");
                    }
                    const char* begin = json.data() + (raw.raw() - base);
                    const char* end = begin;
                    const char* limit = json.data() + json.size();
                    while (end < limit && *end != '"') {
                      if (*end == '\\') return InternalError(PathText(path) + " holds JSON escapes");
                      ++end;
                    }
                    return std::string_view(begin, static_cast<size_t>(end - begin));
                  });
}

std::string JsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace pagereel::cdp
