#include "live/amcp_protocol.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/percent_encoding.h"
#include "base/utf8.h"
#include "live/template_call.h"

namespace pagereel::live::amcp {

namespace fs = std::filesystem;

namespace {

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool SameNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// How a command is addressed and how many parameters it needs at least.
enum class Addressing { kGlobal, kChannel, kEither };
struct CommandSpec {
  const char* name;
  Addressing addressing;
  size_t min_params;
};

constexpr CommandSpec kCommands[] = {
    {"CG ADD", Addressing::kChannel, 3},    {"CG PLAY", Addressing::kChannel, 1},
    {"CG STOP", Addressing::kChannel, 1},   {"CG NEXT", Addressing::kChannel, 1},
    {"CG REMOVE", Addressing::kChannel, 1}, {"CG CLEAR", Addressing::kChannel, 0},
    {"CG UPDATE", Addressing::kChannel, 2}, {"CG INVOKE", Addressing::kChannel, 2},
    {"PLAY", Addressing::kChannel, 0},      {"STOP", Addressing::kChannel, 0},
    {"CLEAR", Addressing::kChannel, 0},     {"INFO", Addressing::kEither, 0},
    {"INFO PATHS", Addressing::kGlobal, 0}, {"VERSION", Addressing::kGlobal, 0},
    {"BYE", Addressing::kGlobal, 0},        {"LOCK", Addressing::kGlobal, 2},
    {"TLS", Addressing::kGlobal, 0},        {"CLS", Addressing::kGlobal, 0},
    {"FLS", Addressing::kGlobal, 0},        {"PING", Addressing::kGlobal, 0},
};

const CommandSpec* Find(std::string_view name) {
  for (const CommandSpec& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// "1" or "1-20" (at most 9 digits each, so no overflow).
bool ChannelSpec(std::string_view token, int& channel, std::optional<int>& layer) {
  const size_t dash = token.find('-');
  const std::string_view first = token.substr(0, dash);
  auto number = [](std::string_view digits, int& out) {
    if (digits.empty() || digits.size() > 9) return false;
    int v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out = v;
    return true;
  };
  if (!number(first, channel)) return false;
  layer.reset();
  if (dash == std::string_view::npos) return true;
  int l = 0;
  if (!number(token.substr(dash + 1), l)) return false;
  layer = l;
  return true;
}

// Printable, valid UTF-8, cut: what may be echoed back or logged of a client's line.
std::string Printable(std::string_view text, size_t limit = 200) {
  std::string out;
  const std::string_view cut = Utf8Prefix(text, limit);
  size_t i = 0;
  while (i < cut.size()) {
    const unsigned char c = static_cast<unsigned char>(cut[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A multi-byte character: kept if well-formed, else one '?' per byte.
    const size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    if (len > 1 && i + len <= cut.size() && IsUtf8(cut.substr(i, len))) {
      out.append(cut.substr(i, len));
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  if (text.size() > cut.size()) out += "...";
  return out;
}

}  // namespace

std::optional<std::string> LineSplitter::Next() {
  if (overflowed()) return std::nullopt;
  const size_t end = pending_.find('\n');
  if (end == std::string::npos) return std::nullopt;
  std::string line = pending_.substr(0, end);
  pending_.erase(0, end + 1);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

bool LineSplitter::overflowed() const {
  const size_t end = pending_.find('\n');
  const std::string_view line =
      std::string_view(pending_).substr(0, end == std::string::npos ? pending_.size() : end);
  if (line.size() <= max_) return false;
  // A CR at the end is part of the line's end, not of the line (the LF may be to come).
  return !(line.size() == max_ + 1 && line.back() == '\r');
}

std::vector<std::string> Tokenize(std::string_view line) {
  std::vector<std::string> tokens;
  std::string current;
  bool in_quote = false;
  int depth = 0;  // Of parentheses.
  bool escape = false;
  for (const char c : line) {
    if (escape) {
      current += c == 'n' ? '\n' : c;
      escape = false;
      continue;
    }
    if (c == '\\') {
      escape = true;
      continue;
    }
    if ((c == ' ' || c == '\t') && !in_quote && depth == 0) {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (!in_quote && c == '(') {
      ++depth;
    } else if (!in_quote && c == ')' && depth > 0) {
      if (--depth == 0) {
        current += c;
        tokens.push_back(std::move(current));
        current.clear();
        continue;
      }
    } else if (c == '"') {
      in_quote = !in_quote;
      if (depth == 0) {
        if (!in_quote) {
          tokens.push_back(std::move(current));
          current.clear();
        }
        continue;
      }
    }
    current += c;
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

Parsed Parse(std::string_view line) {
  Parsed parsed;
  std::vector<std::string> tokens = Tokenize(line);
  size_t at = 0;
  auto fail = [&](Code code, std::string command, std::string why, std::string id = "") {
    parsed.error = ParseError{code, std::move(id), std::move(command), std::move(why)};
    return parsed;
  };
  if (at < tokens.size() && !tokens[at].empty() && tokens[at][0] == '/') ++at;
  if (at == tokens.size()) return parsed;  // Nothing to do.
  std::string id;
  if (SameNoCase(tokens[at], "REQ")) {
    ++at;
    if (at == tokens.size()) return fail(Code::kMissing, "REQ", "REQ needs an id");
    id = tokens[at++];
    // Echoed at the start of the reply: nothing in it may break the reply's lines.
    for (char& c : id) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (at == tokens.size()) return fail(Code::kError, "", "REQ " + id + " names no command", id);
  }
  Request r;
  r.request_id = id;
  r.command = Upper(tokens[at++]);
  if (r.command == "PING") {
    r.params.assign(tokens.begin() + static_cast<std::ptrdiff_t>(at), tokens.end());
    parsed.request = std::move(r);
    return parsed;
  }
  int channel = 0;
  std::optional<int> layer;
  const bool addressed = at < tokens.size() && ChannelSpec(tokens[at], channel, layer);
  // A subcommand ("CG ADD", "INFO PATHS") is matched before the command alone.
  auto lookup = [&](size_t from) -> std::pair<const CommandSpec*, size_t> {
    if (from < tokens.size()) {
      if (const CommandSpec* sub = Find(r.command + " " + Upper(tokens[from]))) {
        return {sub, from + 1};
      }
    }
    return {Find(r.command), from};
  };
  const CommandSpec* spec = nullptr;
  if (addressed) {
    auto [found, next] = lookup(at + 1);
    if (found != nullptr && found->addressing != Addressing::kGlobal) {
      spec = found;
      at = next;
      r.channel = channel;
      r.layer = layer;
    }
  }
  if (spec == nullptr) {
    auto [found, next] = lookup(at);
    if (found != nullptr && found->addressing == Addressing::kChannel) {
      return fail(Code::kMissing, found->name,
                  std::string(found->name) + " needs a channel (and layer): " +
                      (std::string(found->name).starts_with("CG")
                           ? std::string("CG 1-20 ") + (found->name + 3) + " ..."
                           : std::string(found->name) + " 1-10"),
                  id);
    }
    if (found == nullptr) return fail(Code::kError, "", "unknown command " + r.command, id);
    spec = found;
    at = next;
  }
  r.command = spec->name;
  r.params.assign(tokens.begin() + static_cast<std::ptrdiff_t>(at), tokens.end());
  if (r.params.size() < spec->min_params) {
    return fail(Code::kMissing, r.command,
                r.command + " needs " + std::to_string(spec->min_params) + " parameters", id);
  }
  parsed.request = std::move(r);
  return parsed;
}

bool LooksLikeHttp(std::string_view line) {
  // A request line: METHOD SP TARGET SP HTTP/x.
  const size_t first = line.find(' ');
  if (first != std::string_view::npos && first > 0) {
    const size_t second = line.find(' ', first + 1);
    if (second != std::string_view::npos && line.substr(second + 1).starts_with("HTTP/")) {
      return true;
    }
  }
  // A header: a name of token characters, then a colon.
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  for (char c : line.substr(0, colon)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_')) return false;
  }
  return true;
}

std::string Reply(const std::string& request_id, Code code, const std::string& command,
                  const std::vector<std::string>& data) {
  std::string out = request_id.empty() ? "" : "RES " + request_id + " ";
  const int number = static_cast<int>(code);
  out += std::to_string(number);
  if (!command.empty()) out += " " + command;
  // CasparCG answers ERROR when it could not read the command (400-402), FAILED when it
  // could not do it.
  out += number < 300 ? " OK\r\n" : number <= 402 ? " ERROR\r\n" : " FAILED\r\n";
  for (const std::string& line : data) out += line + "\r\n";
  if (code == Code::kInfoMany) out += "\r\n";
  return out;
}

std::string ErrorReply(const std::string& request_id, std::string_view line) {
  return Reply(request_id, Code::kError, "", {Printable(line)});
}

Result<std::string> InvokeExpression(std::string_view method) {
  size_t begin = method.find_first_not_of(" \"");
  size_t end = method.find_last_not_of(" \"");
  const std::string_view m =
      begin == std::string_view::npos ? std::string_view() : method.substr(begin, end - begin + 1);
  const size_t open = m.find('(');
  if (open == std::string_view::npos) return TemplateCall(m, "[]");
  if (m.back() != ')') {
    return InvalidArgumentError("'" + Printable(m, 80) +
                                "' is not a call: write name(arguments), the arguments JSON values");
  }
  const std::string_view name = m.substr(0, open);
  const std::string args = "[" + std::string(m.substr(open + 1, m.size() - open - 2)) + "]";
  Result<std::string> call = TemplateCall(name, args);
  if (!call.ok() && name.find_first_of(" ()") == std::string_view::npos &&
      std::string_view(call.status().message()).find("is not JSON") != std::string_view::npos) {
    return InvalidArgumentError("the arguments of " + Printable(name, 80) +
                                "() must be JSON values (\"text\" in double quotes, numbers, "
                                "true, false, null, arrays, objects)");
  }
  return call;
}

Result<std::string> TemplateData(std::string_view data) {
  const size_t begin = data.find_first_not_of(" \"");
  if (begin == std::string_view::npos) return std::string();
  const size_t end = data.find_last_not_of(" \"");
  const std::string_view d = data.substr(begin, end - begin + 1);
  if (!IsUtf8(d)) return InvalidArgumentError("the template data is not UTF-8 text");
  if (d.front() != '<' && d.front() != '{') {
    return NotFoundError("'" + Printable(d, 80) +
                         "' names a stored data set, and pagereel keeps none: send the data "
                         "itself, XML (<templateData>...) or JSON ({...})");
  }
  return std::string(d);
}

namespace {

// The entry of `folder` called `name` without regard to case (the exact name first).
std::optional<fs::path> EntryNoCase(const fs::path& folder, const std::string& name) {
  std::error_code ec;
  if (fs::exists(folder / name, ec)) return folder / name;
  fs::directory_iterator it(folder, ec), end;
  for (int seen = 0; !ec && it != end && seen < 10'000; it.increment(ec), ++seen) {
    if (SameNoCase(it->path().filename().string(), name)) return it->path();
  }
  return std::nullopt;
}

}  // namespace

Result<std::string> TemplateUrl(std::string_view name, const std::string& templates) {
  const size_t begin = name.find_first_not_of(' ');
  const size_t end = name.find_last_not_of(' ');
  const std::string n(begin == std::string_view::npos ? "" : name.substr(begin, end - begin + 1));
  if (n.empty()) return InvalidArgumentError("CG ADD names no template");
  if (n.find("://") != std::string::npos || SameNoCase(n.substr(0, 5), "data:")) {
    PR_RETURN_IF_ERROR(CheckSourceUrl(n));
    return n;
  }
  if (!IsUtf8(n)) return InvalidArgumentError("the template name is not UTF-8 text");
  if (templates.empty()) {
    return NotFoundError("template '" + Printable(n, 80) +
                         "': this show has no template folder (amcp.templates in the show "
                         "file); give a URL instead");
  }
  std::string relative = n;
  std::replace(relative.begin(), relative.end(), '\\', '/');
  const fs::path rel(relative);
  if (rel.is_absolute()) {
    return InvalidArgumentError("template '" + Printable(n, 80) +
                                "' is an absolute path; name it inside the template folder");
  }
  fs::path at(templates);
  std::vector<std::string> parts;
  for (const fs::path& part : rel) {
    const std::string p = part.string();
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      return InvalidArgumentError("template '" + Printable(n, 80) +
                                  "' climbs out of the template folder");
    }
    parts.push_back(p);
  }
  if (parts.empty()) return InvalidArgumentError("CG ADD names no template");
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::optional<fs::path> next = EntryNoCase(at, parts[i]);
    if (!next) {
      return NotFoundError("template '" + Printable(n, 80) + "' is not in " + templates);
    }
    at = *next;
  }
  std::error_code ec;
  for (const std::string& candidate :
       {parts.back(), parts.back() + ".html", parts.back() + ".htm"}) {
    std::optional<fs::path> found = EntryNoCase(at, candidate);
    if (!found) continue;
    fs::path file = *found;
    if (fs::is_directory(file, ec)) {
      std::optional<fs::path> index = EntryNoCase(file, "index.html");
      if (!index) continue;
      file = *index;
    }
    if (!fs::is_regular_file(file, ec)) continue;
    return FileUrlForPath(fs::absolute(file, ec).lexically_normal().string());
  }
  return NotFoundError("template '" + Printable(n, 80) + "' is not in " + templates +
                       " (looked for it as it is, with .html or .htm, and as a folder with "
                       "index.html)");
}

std::vector<std::string> ListTemplates(const std::string& templates, size_t limit) {
  std::vector<std::string> names;
  if (templates.empty()) return names;
  std::error_code ec;
  const fs::path root(templates);
  fs::recursive_directory_iterator it(root, ec), end;
  for (int seen = 0; !ec && it != end && names.size() < limit && seen < 100'000;
       it.increment(ec), ++seen) {
    if (it.depth() > 8) {
      it.disable_recursion_pending();
      continue;
    }
    const fs::path& p = it->path();
    // Names go out one per line in quotes: none that could break a line or a quote.
    const std::string name = p.filename().string();
    if (!IsUtf8(name) || name.find_first_of("\"\r\n") != std::string::npos) {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      if (fs::is_regular_file(p / "index.html", type_ec)) {
        names.push_back(p.lexically_relative(root).generic_string());
      }
      continue;
    }
    const std::string ext = p.extension().string();
    if (p.filename() != "index.html" && (SameNoCase(ext, ".html") || SameNoCase(ext, ".htm"))) {
      fs::path rel = p.lexically_relative(root);
      rel.replace_extension();
      names.push_back(rel.generic_string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string FormatName(int width, int height, double fps) {
  (void)width;
  char rate[32];
  std::snprintf(rate, sizeof(rate), "%04ld", std::lround(fps * 100));
  return std::to_string(height) + "p" + rate;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\r':
      case '\n': out += ' '; break;
      default: out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    }
  }
  return out;
}

}  // namespace pagereel::live::amcp
