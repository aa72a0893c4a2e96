// Show files: TOML read with toml++ (Debian's libtomlplusplus-dev), JSON with nlohmann::json
// turned into the same TOML tree, then one reader that refuses anything it does not know.
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "app/live_app.h"
#include "app/render_app.h"

namespace pagereel::app {

namespace fs = std::filesystem;

namespace {

// JSON to a TOML tree (no source positions: messages then name the key alone). nulls are
// left out, as if the key were absent.
toml::array JsonArray(const nlohmann::json& j);

toml::table JsonTable(const nlohmann::json& j) {
  toml::table table;
  for (const auto& [key, v] : j.items()) {
    if (v.is_object()) table.insert(key, JsonTable(v));
    else if (v.is_array()) table.insert(key, JsonArray(v));
    else if (v.is_string()) table.insert(key, v.get<std::string>());
    else if (v.is_boolean()) table.insert(key, v.get<bool>());
    else if (v.is_number_integer()) table.insert(key, v.get<int64_t>());
    else if (v.is_number()) table.insert(key, v.get<double>());
  }
  return table;
}

toml::array JsonArray(const nlohmann::json& j) {
  toml::array array;
  for (const auto& v : j) {
    if (v.is_object()) array.push_back(JsonTable(v));
    else if (v.is_array()) array.push_back(JsonArray(v));
    else if (v.is_string()) array.push_back(v.get<std::string>());
    else if (v.is_boolean()) array.push_back(v.get<bool>());
    else if (v.is_number_integer()) array.push_back(v.get<int64_t>());
    else if (v.is_number()) array.push_back(v.get<double>());
  }
  return array;
}

class ShowReader {
 public:
  explicit ShowReader(std::string file) : file_(std::move(file)) {
    folder_ = fs::path(file_).parent_path();
  }

  Result<live::ShowSpec> Read(const toml::table& root) {
    live::ShowSpec show;
    PR_RETURN_IF_ERROR(Keys(root, "", {"format", "sources", "outputs", "clock", "control", "as_run"}));
    if (const toml::table* format = root["format"].as_table()) {
      PR_RETURN_IF_ERROR(Keys(*format, "format", {"size", "fps", "background"}));
      if (auto size = String(*format, "format", "size")) {
        PR_RETURN_IF_ERROR(size->status());
        auto parsed = ParseSize(**size);
        if (!parsed.ok()) return At(*format->get("size"), "format.size", parsed.status().message());
        show.width = parsed->first;
        show.height = parsed->second;
      }
      if (const toml::node* fps = format->get("fps")) {
        std::string text = fps->is_string() ? *fps->value<std::string>()
                           : fps->is_number() ? Number(*fps)
                                              : std::string();
        if (text.empty()) return At(*fps, "format.fps", "give a rate such as 25, 29.97 or \"30000/1001\"");
        auto rate = ParseFrameRate(text);
        if (!rate.ok()) return At(*fps, "format.fps", rate.status().message());
        show.fps = *rate;
      }
      if (auto background = String(*format, "format", "background")) {
        PR_RETURN_IF_ERROR(background->status());
        auto colour = ParseColour(**background);
        if (!colour) {
          return At(*format->get("background"), "format.background",
                    "write a colour as \"#rrggbb\" or \"#rrggbbaa\"");
        }
        show.background = *colour;
      }
    }
    const toml::node* sources = root.get("sources");
    if (sources == nullptr || !sources->is_array_of_tables() || sources->as_array()->empty()) {
      return Plain("the show has no [[sources]]: add at least one, with an id and a url");
    }
    struct Layered {
      int layer;
      bool transparency_given;
      live::SourceSpec spec;
    };
    std::vector<Layered> layered;
    for (size_t i = 0; i < sources->as_array()->size(); ++i) {
      const toml::table& t = *sources->as_array()->get(i)->as_table();
      const std::string where = "sources[" + std::to_string(i) + "]";
      PR_RETURN_IF_ERROR(Keys(t, where, {"id", "url", "worker", "x", "y", "width", "height",
                                         "opacity", "visible", "transparent", "layer"}));
      live::SourceSpec s;
      PR_ASSIGN_OR_RETURN(s.id, Required(t, where, "id"));
      PR_ASSIGN_OR_RETURN(std::string url, Required(t, where, "url"));
      Result<std::string> resolved = InputToUrl(Relative(url));
      if (!resolved.ok()) return At(*t.get("url"), where + ".url", resolved.status().message());
      s.url = *resolved;
      PR_ASSIGN_OR_RETURN(s.worker, Int(t, where, "worker", -1, 0, 63));
      PR_ASSIGN_OR_RETURN(s.x, Int(t, where, "x", 0, -7680, 7680));
      PR_ASSIGN_OR_RETURN(s.y, Int(t, where, "y", 0, -4320, 4320));
      PR_ASSIGN_OR_RETURN(s.width, Int(t, where, "width", 0, 16, 7680));
      PR_ASSIGN_OR_RETURN(s.height, Int(t, where, "height", 0, 16, 4320));
      PR_ASSIGN_OR_RETURN(s.opacity, Double(t, where, "opacity", 1.0, 0.0, 1.0));
      PR_ASSIGN_OR_RETURN(s.visible, Bool(t, where, "visible", true));
      // Unless told, every layer above the bottom one is a transparent overlay (decided
      // once the layers are in order).
      PR_ASSIGN_OR_RETURN(s.transparent, Bool(t, where, "transparent", false));
      PR_ASSIGN_OR_RETURN(int layer, Int(t, where, "layer", static_cast<int>(i), -1000, 1000));
      layered.push_back({layer, t.contains("transparent"), std::move(s)});
    }
    std::stable_sort(layered.begin(), layered.end(),
                     [](const Layered& a, const Layered& b) { return a.layer < b.layer; });
    for (Layered& l : layered) {
      if (!l.transparency_given) l.spec.transparent = !show.sources.empty();
      show.sources.push_back(std::move(l.spec));
    }

    const toml::node* outputs = root.get("outputs");
    if (outputs == nullptr || !outputs->is_array_of_tables() || outputs->as_array()->empty()) {
      return Plain("the show has no [[outputs]]: add at least one, with 'to' a file or URL");
    }
    std::map<std::string, std::string> ports;  // host:port -> who uses it.
    for (size_t i = 0; i < outputs->as_array()->size(); ++i) {
      const toml::table& t = *outputs->as_array()->get(i)->as_table();
      const std::string where = "outputs[" + std::to_string(i) + "]";
      PR_RETURN_IF_ERROR(Keys(t, where, {"id", "to", "codec", "preset", "bitrate_kbps", "quality", "queue_frames", "alpha"}));
      PR_ASSIGN_OR_RETURN(std::string to, Required(t, where, "to"));
      std::string codec = "h264";
      if (auto c = String(t, where, "codec")) {
        PR_RETURN_IF_ERROR(c->status());
        codec = **c;
      }
      const bool is_url = to.find("://") != std::string::npos;
      Result<live::OutputSpec> out = OutputForDestination(is_url ? to : Relative(to), codec);
      if (!out.ok()) return At(*t.get("to"), where + ".to", out.status().message());
      out->id = "output" + std::to_string(i + 1);
      if (auto id = String(t, where, "id")) {
        PR_RETURN_IF_ERROR(id->status());
        out->id = **id;
      }
      if (auto preset = String(t, where, "preset")) {
        PR_RETURN_IF_ERROR(preset->status());
        static const std::set<std::string> kPresets = {"ultrafast", "superfast", "veryfast", "faster",
                                                       "fast", "medium", "slow", "slower", "veryslow"};
        if (kPresets.count(**preset) == 0) {
          return At(*t.get("preset"), where + ".preset",
                    "'" + **preset + "' is not an x264 preset (ultrafast, superfast, veryfast, faster, "
                    "fast, medium, slow, slower, veryslow)");
        }
        out->stream.preset = **preset;
      }
      PR_ASSIGN_OR_RETURN(out->stream.bitrate_kbps, Int(t, where, "bitrate_kbps", 0, 100, 200'000));
      PR_ASSIGN_OR_RETURN(out->stream.quality, Int(t, where, "quality", 80, 1, 100));
      PR_ASSIGN_OR_RETURN(out->queue_frames, Int(t, where, "queue_frames", 0, 2, 10'000));
      if (const toml::node* alpha = t.get("alpha")) {
        Result<live::OutputAlpha> parsed = OutputAlphaOf(*alpha, *out);
        if (!parsed.ok()) return At(*alpha, where + ".alpha", parsed.status().message());
        out->alpha = *parsed;
      }
      if (is_url) {
        const std::string port = HostPort(to);
        if (!port.empty() && !ports.emplace(port, where).second) {
          return At(*t.get("to"), where + ".to", "port " + port + " is already used by " + ports[port]);
        }
      }
      show.outputs.push_back(std::move(*out));
    }

    if (const toml::table* clock = root["clock"].as_table()) {
      PR_RETURN_IF_ERROR(Keys(*clock, "clock", {"late_threshold_us", "stagger", "fifo", "cpu"}));
      PR_ASSIGN_OR_RETURN(double late, Double(*clock, "clock", "late_threshold_us", 500, 1, 1e6));
      show.clock.late_threshold = std::chrono::nanoseconds(static_cast<int64_t>(late * 1000));
      PR_ASSIGN_OR_RETURN(show.clock.stagger, Bool(*clock, "clock", "stagger", true));
      if (clock->contains("fifo")) {
        PR_ASSIGN_OR_RETURN(int fifo, Int(*clock, "clock", "fifo", 0, 1, 99));
        show.clock.fifo_priority = fifo;
      }
      if (clock->contains("cpu")) {
        PR_ASSIGN_OR_RETURN(int cpu, Int(*clock, "clock", "cpu", 0, 0, 1023));
        show.clock.cpu = cpu;
      }
    }
    if (const toml::table* control = root["control"].as_table()) {
      PR_RETURN_IF_ERROR(Keys(*control, "control", {"listen", "token"}));
      if (auto listen = String(*control, "control", "listen")) {
        PR_RETURN_IF_ERROR(listen->status());
        show.control.listen = **listen;
        const std::string port = HostPort("http://" + show.control.listen);
        if (ports.count(port) != 0) {
          return At(*control->get("listen"), "control.listen",
                    "port " + port + " is already used by " + ports[port]);
        }
      }
      if (auto token = String(*control, "control", "token")) {
        PR_RETURN_IF_ERROR(token->status());
        show.control.token = **token;
      }
    }
    if (auto as_run = String(root, "", "as_run")) {
      PR_RETURN_IF_ERROR(as_run->status());
      show.as_run_log = Relative(**as_run);
    }
    if (Status valid = live::ValidateShow(show); !valid.ok()) return Plain(std::string(valid.message()));
    return show;
  }

 private:
  // "show.toml:12: sources[1].opacity: ..." (JSON trees have no lines).
  Status At(const toml::node& node, const std::string& key, std::string_view what) const {
    std::string where = file_;
    if (node.source().begin.line > 0) where += ":" + std::to_string(node.source().begin.line);
    return InvalidArgumentError(where + ": " + key + ": " + std::string(what));
  }
  Status Plain(const std::string& what) const { return InvalidArgumentError(file_ + ": " + what); }

  Status Keys(const toml::table& t, const std::string& where, std::initializer_list<std::string_view> known) const {
    for (const auto& [key, node] : t) {
      if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      std::string name = where.empty() ? std::string(key.str()) : where + "." + std::string(key.str());
      return At(node, name, "unknown key; " + (where.empty() ? std::string("the show has") : where + " has") + ": " + list);
    }
    return Status::Ok();
  }

  // Absent: nullopt. Present but not a string: an error.
  std::optional<Result<std::string>> String(const toml::table& t, const std::string& where, const char* key) const {
    const toml::node* node = t.get(key);
    if (node == nullptr) return std::nullopt;
    const std::string name = where.empty() ? key : where + "." + key;
    if (!node->is_string()) return Result<std::string>(At(*node, name, "must be a string"));
    return Result<std::string>(*node->value<std::string>());
  }
  Result<std::string> Required(const toml::table& t, const std::string& where, const char* key) const {
    auto value = String(t, where, key);
    if (!value) return Plain(where + " has no " + key);
    PR_RETURN_IF_ERROR(value->status());
    if ((*value)->empty()) return At(*t.get(key), where + "." + key, "is empty");
    return **value;
  }
  Result<int> Int(const toml::table& t, const std::string& where, const char* key, int fallback, int low, int high) const {
    const toml::node* node = t.get(key);
    if (node == nullptr) return fallback;
    const std::string name = where + "." + key;
    if (!node->is_integer()) return At(*node, name, "must be a whole number");
    const int64_t v = *node->value<int64_t>();
    if (v < low || v > high) {
      return At(*node, name, std::to_string(v) + " is outside " + std::to_string(low) + " to " + std::to_string(high));
    }
    return static_cast<int>(v);
  }
  Result<double> Double(const toml::table& t, const std::string& where, const char* key, double fallback, double low, double high) const {
    const toml::node* node = t.get(key);
    if (node == nullptr) return fallback;
    const std::string name = where + "." + key;
    if (!node->is_number()) return At(*node, name, "must be a number");
    const double v = *node->value<double>();
    if (!(v >= low && v <= high)) return At(*node, name, Number(*node) + " is outside " + Trim(low) + " to " + Trim(high));
    return v;
  }
  Result<bool> Bool(const toml::table& t, const std::string& where, const char* key, bool fallback) const {
    const toml::node* node = t.get(key);
    if (node == nullptr) return fallback;
    if (!node->is_boolean()) return At(*node, where + "." + key, "must be true or false");
    return *node->value<bool>();
  }

  static std::string Trim(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  }
  static std::string Number(const toml::node& node) {
    if (node.is_integer()) return std::to_string(*node.value<int64_t>());
    return Trim(*node.value<double>());
  }
  static std::optional<live::Rgba> ParseColour(const std::string& text) {
    if ((text.size() != 7 && text.size() != 9) || text[0] != '#') return std::nullopt;
    auto hex = [&](size_t at) -> int {
      int v = 0;
      for (size_t i = at; i < at + 2; ++i) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
        if (c >= '0' && c <= '9') v = v * 16 + (c - '0');
        else if (c >= 'a' && c <= 'f') v = v * 16 + (c - 'a' + 10);
        else return -1;
      }
      return v;
    };
    const int r = hex(1), g = hex(3), b = hex(5), a = text.size() == 9 ? hex(7) : 255;
    if (r < 0 || g < 0 || b < 0 || a < 0) return std::nullopt;
    return live::Rgba{static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b),
                      static_cast<uint8_t>(a)};
  }
  // An output's `alpha`: true or false, or "fill", "key" or "key+fill" (H.264 only).
  static Result<live::OutputAlpha> OutputAlphaOf(const toml::node& node, const live::OutputSpec& out) {
    const bool h264 = out.stream.codec == encode::Codec::kH264;
    if (node.is_boolean()) {
      if (!*node.value<bool>()) return live::OutputAlpha::kNone;
      if (h264) {
        return InvalidArgumentError("H.264 has no alpha channel: use codec = \"prores\" or "
                                    "\"ffv1\" (.mov or .mkv) for a file with alpha, or alpha = "
                                    "\"key+fill\" for a keyer's pair");
      }
      return live::OutputAlpha::kChannel;
    }
    const std::string text = node.is_string() ? *node.value<std::string>() : "";
    live::OutputAlpha alpha;
    if (text == "fill") alpha = live::OutputAlpha::kFill;
    else if (text == "key") alpha = live::OutputAlpha::kKey;
    else if (text == "key+fill" || text == "fill+key") alpha = live::OutputAlpha::kKeyAndFill;
    else return InvalidArgumentError("write true, false, \"fill\", \"key\" or \"key+fill\"");
    if (!h264) {
      return InvalidArgumentError("a keyer's fill and key are H.264; with " + text +
                                  " leave out codec (or ask for alpha = true in ProRes or FFV1)");
    }
    const encode::Container c = out.stream.container;
    if (alpha == live::OutputAlpha::kKeyAndFill && c != encode::Container::kMpegTs &&
        c != encode::Container::kMatroska) {
      return InvalidArgumentError("key+fill is two video streams, which MPEG-TS (udp://, srt://, "
                                  ".ts) and Matroska (.mkv) carry; for another output send "
                                  "alpha = \"fill\" and alpha = \"key\" to two outputs");
    }
    return alpha;
  }
  // "host:port" of a URL, or "" when it has no port.
  static std::string HostPort(const std::string& url) {
    size_t start = url.find("://");
    if (start == std::string::npos) return "";
    std::string rest = url.substr(start + 3);
    rest = rest.substr(0, rest.find_first_of("/?"));
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos) return "";
    std::string host = rest.substr(0, colon);
    if (host.empty() || host == "0.0.0.0" || host == "localhost") host = "127.0.0.1";
    return host + ":" + rest.substr(colon + 1);
  }
  // A path in the show file, relative to the file's folder.
  std::string Relative(const std::string& path) const {
    if (path.find("://") != std::string::npos || path.rfind("data:", 0) == 0) return path;
    fs::path p(path);
    return p.is_absolute() ? path : (folder_ / p).string();
  }

  const std::string file_;
  fs::path folder_;
};

}  // namespace

Result<live::ShowSpec> LoadShowFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError("cannot read show file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  toml::table root;
  const bool is_json = fs::path(path).extension() == ".json";
  try {
    if (is_json) {
      nlohmann::json j = nlohmann::json::parse(text.str());
      if (!j.is_object()) return InvalidArgumentError(path + ": a show file holds one object");
      root = JsonTable(j);
    } else {
      root = toml::parse(text.str(), path);
    }
  } catch (const toml::parse_error& e) {
    return InvalidArgumentError(path + ":" + std::to_string(e.source().begin.line) + ": " +
                                std::string(e.description()));
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(path + ": not valid JSON: " + e.what());
  }
  return ShowReader(path).Read(root);
}

}  // namespace pagereel::app
