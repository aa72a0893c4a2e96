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

  // The show, or every error found in it (each with file:line where TOML gives one).
  Result<live::ShowSpec> Read(const toml::table& root) {
    live::ShowSpec show;
    Note(Keys(root, "", {"format", "sources", "outputs", "clock", "control", "amcp", "sound", "as_run"}));
    if (const toml::table* format = Table(root, "format")) {
      Note(Keys(*format, "format", {"size", "fps", "background"}));
      if (auto size = String(*format, "format", "size"); size && Got(*size)) {
        auto parsed = ParseSize(**size);
        if (!parsed.ok()) {
          Note(At(*format->get("size"), "format.size", parsed.status().message()));
        } else {
          show.width = parsed->first;
          show.height = parsed->second;
        }
      }
      if (const toml::node* fps = format->get("fps")) {
        std::string text = fps->is_string() ? *fps->value<std::string>()
                           : fps->is_number() ? Number(*fps)
                                              : std::string();
        auto rate = text.empty() ? Result<Rational>(InvalidArgumentError(
                                       "give a rate such as 25, 29.97 or \"30000/1001\""))
                                 : ParseFrameRate(text);
        if (!rate.ok()) {
          Note(At(*fps, "format.fps", rate.status().message()));
        } else {
          show.fps = *rate;
        }
      }
      if (auto background = String(*format, "format", "background"); background && Got(*background)) {
        auto colour = ParseColour(**background);
        if (!colour) {
          Note(At(*format->get("background"), "format.background",
                  "write a colour as \"#rrggbb\" or \"#rrggbbaa\""));
        } else {
          show.background = *colour;
        }
      }
    }
    if (show.width < 16 || show.height < 16 || show.width > 7680 || show.height > 4320 ||
        show.width % 2 != 0 || show.height % 2 != 0) {
      // ParseSize took it, the engine would not: said once, here.
      if (Status valid = live::ValidateShow(show); !valid.ok()) Note(Plain(std::string(valid.message())));
    }

    const toml::array* sources = ArrayOfTables(root, "sources", "[[sources]]: at least one, with an id and a url");
    struct Layered {
      int layer;
      bool transparency_given;
      live::SourceSpec spec;
    };
    std::vector<Layered> layered;
    std::map<int, std::string> layers;       // layer -> sources[i], for doubles.
    std::map<int, std::string> amcp_layers;  // amcp_layer -> sources[i].
    std::map<std::string, std::string> source_ids;
    for (size_t i = 0; sources != nullptr && i < sources->size(); ++i) {
      const toml::table& t = *sources->get(i)->as_table();
      const std::string where = "sources[" + std::to_string(i) + "]";
      Note(Keys(t, where, {"id", "url", "worker", "x", "y", "width", "height", "opacity",
                           "volume", "visible", "transparent", "layer", "amcp_layer"}));
      live::SourceSpec s;
      Got(Required(t, where, "id"), s.id);
      if (!s.id.empty()) {
        if (!live::IsValidId(s.id)) {
          Note(At(*t.get("id"), where + ".id",
                  "'" + s.id + "' is not an id: use 1 to 64 letters, digits, _, - and . (ids go "
                  "into control URLs and metric labels as they are)"));
        } else if (auto [it, fresh] = source_ids.emplace(s.id, where); !fresh) {
          Note(At(*t.get("id"), where + ".id", "'" + s.id + "' is already the id of " + it->second));
        }
      }
      std::string url;
      if (Got(Required(t, where, "url"), url)) {
        Result<std::string> resolved = InputToUrl(Relative(url));
        if (!resolved.ok()) {
          Note(At(*t.get("url"), where + ".url", resolved.status().message()));
        } else {
          s.url = *resolved;
        }
      }
      Got(Int(t, where, "worker", -1, 0, 63), s.worker);
      Got(Int(t, where, "x", 0, -7680, 7680), s.x);
      Got(Int(t, where, "y", 0, -4320, 4320), s.y);
      Got(Int(t, where, "width", 0, 16, 7680), s.width);
      Got(Int(t, where, "height", 0, 16, 4320), s.height);
      Got(Double(t, where, "opacity", 1.0, 0.0, 1.0), s.opacity);
      Got(Double(t, where, "volume", 1.0, 0.0, live::kMaxVolume), s.volume);
      Got(Bool(t, where, "visible", true), s.visible);
      // Unless told, every layer above the bottom one is a transparent overlay (decided
      // once the layers are in order).
      Got(Bool(t, where, "transparent", false), s.transparent);
      const int width = s.width > 0 ? s.width : show.width;
      const int height = s.height > 0 ? s.height : show.height;
      if (s.x >= show.width || s.y >= show.height || s.x + width <= 0 || s.y + height <= 0) {
        const toml::node* at = t.get(t.contains("x") ? "x" : t.contains("y") ? "y" : "id");
        Note(At(at != nullptr ? *at : static_cast<const toml::node&>(t), where,
                "at x=" + std::to_string(s.x) + ", y=" + std::to_string(s.y) + " its " +
                    std::to_string(width) + "x" + std::to_string(height) +
                    " picture lies wholly outside the " + std::to_string(show.width) + "x" +
                    std::to_string(show.height) + " program: place some of it on the frame"));
      }
      int layer = static_cast<int>(i);
      if (Got(Int(t, where, "layer", static_cast<int>(i), -1000, 1000), layer) && t.contains("layer")) {
        if (auto [it, fresh] = layers.emplace(layer, where); !fresh) {
          Note(At(*t.get("layer"), where + ".layer",
                  std::to_string(layer) + " is already the layer of " + it->second +
                      ": each source needs a layer of its own"));
        }
      }
      if (Got(Int(t, where, "amcp_layer", -1, 0, 99'999), s.amcp_layer) && s.amcp_layer >= 0) {
        if (auto [it, fresh] = amcp_layers.emplace(s.amcp_layer, where); !fresh) {
          Note(At(*t.get("amcp_layer"), where + ".amcp_layer",
                  std::to_string(s.amcp_layer) + " already names " + it->second));
        }
      }
      layered.push_back({layer, t.contains("transparent"), std::move(s)});
    }
    // A layer given to one source may also be another's place in the list.
    for (size_t i = 0; sources != nullptr && i < sources->size(); ++i) {
      const toml::table& t = *sources->get(i)->as_table();
      const int place = static_cast<int>(i);
      if (t.contains("layer") || layers.count(place) == 0) continue;
      Note(At(t, "sources[" + std::to_string(i) + "]",
              "its place in the list makes it layer " + std::to_string(place) + ", which " +
                  layers[place] + " also has: give it a layer of its own"));
    }
    std::stable_sort(layered.begin(), layered.end(),
                     [](const Layered& a, const Layered& b) { return a.layer < b.layer; });
    for (Layered& l : layered) {
      if (!l.transparency_given) l.spec.transparent = !show.sources.empty();
      show.sources.push_back(std::move(l.spec));
    }

    const toml::array* outputs =
        ArrayOfTables(root, "outputs", "[[outputs]]: at least one, with 'to' a file or URL");
    std::map<std::string, std::string> ports;  // host:port -> who uses it.
    std::map<std::string, std::string> output_ids;
    for (size_t i = 0; outputs != nullptr && i < outputs->size(); ++i) {
      const toml::table& t = *outputs->get(i)->as_table();
      const std::string where = "outputs[" + std::to_string(i) + "]";
      Note(Keys(t, where, {"id", "to", "codec", "preset", "bitrate_kbps", "quality", "queue_frames", "alpha",
                           "sound"}));
      std::string to;
      if (!Got(Required(t, where, "to"), to)) continue;
      std::string codec = "h264";
      if (auto c = String(t, where, "codec"); c && Got(*c)) codec = **c;
      const bool is_url = to.find("://") != std::string::npos;
      Result<live::OutputSpec> out = OutputForDestination(is_url ? to : Relative(to), codec);
      if (!out.ok()) {
        Note(At(*t.get("to"), where + ".to", out.status().message()));
        continue;
      }
      out->id = "output" + std::to_string(i + 1);
      if (auto id = String(t, where, "id"); id && Got(*id)) {
        out->id = **id;
        if (!live::IsValidId(out->id)) {
          Note(At(*t.get("id"), where + ".id",
                  "'" + out->id + "' is not an id: use 1 to 64 letters, digits, _, - and ."));
        }
      }
      if (auto [it, fresh] = output_ids.emplace(out->id, where); !fresh) {
        Note(At(t.contains("id") ? *t.get("id") : *t.get("to"), where + ".id",
                "'" + out->id + "' is already the id of " + it->second));
      }
      if (auto preset = String(t, where, "preset"); preset && Got(*preset)) {
        static const std::set<std::string> kPresets = {"ultrafast", "superfast", "veryfast", "faster",
                                                       "fast", "medium", "slow", "slower", "veryslow"};
        if (kPresets.count(**preset) == 0) {
          Note(At(*t.get("preset"), where + ".preset",
                  "'" + **preset + "' is not an x264 preset (ultrafast, superfast, veryfast, faster, "
                  "fast, medium, slow, slower, veryslow)"));
        } else {
          out->stream.preset = **preset;
        }
      }
      Got(Int(t, where, "bitrate_kbps", 0, 100, 200'000), out->stream.bitrate_kbps);
      Got(Int(t, where, "quality", 80, 1, 100), out->stream.quality);
      Got(Int(t, where, "queue_frames", 0, 2, 10'000), out->queue_frames);
      if (const toml::node* alpha = t.get("alpha")) {
        Result<live::OutputAlpha> parsed = OutputAlphaOf(*alpha, *out);
        if (!parsed.ok()) {
          Note(At(*alpha, where + ".alpha", parsed.status().message()));
        } else {
          out->alpha = *parsed;
        }
      }
      bool sound = true;
      if (Got(Bool(t, where, "sound", true), sound) && !sound) out->sound = live::OutputSound::kNone;
      if (is_url) {
        const std::string port = HostPort(to);
        if (!port.empty() && !ports.emplace(port, where).second) {
          Note(At(*t.get("to"), where + ".to", "port " + port + " is already used by " + ports[port]));
        }
      }
      show.outputs.push_back(std::move(*out));
    }

    if (const toml::table* clock = Table(root, "clock")) {
      Note(Keys(*clock, "clock", {"late_threshold_us", "stagger", "fifo", "cpu"}));
      double late = 500;
      if (Got(Double(*clock, "clock", "late_threshold_us", 500, 1, 1e6), late)) {
        show.clock.late_threshold = std::chrono::nanoseconds(static_cast<int64_t>(late * 1000));
      }
      Got(Bool(*clock, "clock", "stagger", true), show.clock.stagger);
      int fifo = 0;
      if (clock->contains("fifo") && Got(Int(*clock, "clock", "fifo", 0, 1, 99), fifo)) {
        show.clock.fifo_priority = fifo;
      }
      int cpu = 0;
      if (clock->contains("cpu") && Got(Int(*clock, "clock", "cpu", 0, 0, 1023), cpu)) {
        show.clock.cpu = cpu;
      }
    }
    if (const toml::table* control = Table(root, "control")) {
      Note(Keys(*control, "control", {"listen", "token"}));
      if (auto listen = String(*control, "control", "listen"); listen && Got(*listen)) {
        show.control.listen = **listen;
        const std::string port = HostPort("http://" + show.control.listen);
        if (ports.count(port) != 0) {
          Note(At(*control->get("listen"), "control.listen",
                  "port " + port + " is already used by " + ports[port]));
        }
        if (!port.ends_with(":0")) ports.emplace(port, "control.listen");  // 0: any free port.
      }
      if (auto token = String(*control, "control", "token"); token && Got(*token)) {
        show.control.token = **token;
      }
    }
    // AMCP's token is the control token unless the show gives its own (even "": none).
    show.amcp.token = show.control.token;
    if (const toml::table* amcp = Table(root, "amcp")) {
      Note(Keys(*amcp, "amcp", {"listen", "token", "channel", "templates"}));
      if (auto listen = String(*amcp, "amcp", "listen"); listen && Got(*listen)) {
        show.amcp.listen = **listen;
        const std::string port = HostPort("http://" + show.amcp.listen);
        if (!port.ends_with(":0") && ports.count(port) != 0) {
          Note(At(*amcp->get("listen"), "amcp.listen",
                  "port " + port + " is already used by " + ports[port]));
        }
      }
      if (auto token = String(*amcp, "amcp", "token"); token && Got(*token)) {
        show.amcp.token = **token;
      }
      Got(Int(*amcp, "amcp", "channel", 1, 1, 999), show.amcp.channel);
      if (auto templates = String(*amcp, "amcp", "templates"); templates && Got(*templates)) {
        show.amcp.templates = Relative(**templates);
        std::error_code ec;
        if (!fs::is_directory(show.amcp.templates, ec)) {
          Note(At(*amcp->get("templates"), "amcp.templates",
                  "'" + show.amcp.templates + "' is not a folder"));
        }
      } else if (!amcp->contains("templates")) {
        show.amcp.templates = folder_.empty() ? "." : folder_.string();
      }
      if (!show.amcp.listen.empty() && amcp_layers.empty()) {
        Note(At(*amcp, "amcp",
                "no source has an amcp_layer, so AMCP could drive nothing: give the sources "
                "a controller drives amcp_layer = N (the layer of CG 1-N)"));
      }
    }
    if (const toml::table* sound = Table(root, "sound")) {
      Note(Keys(*sound, "sound", {"enabled"}));
      Got(Bool(*sound, "sound", "enabled", true), show.sound.enabled);
    }
    if (auto as_run = String(root, "", "as_run"); as_run && Got(*as_run)) {
      show.as_run_log = Relative(**as_run);
    }
    if (errors_.empty() && !show.sources.empty() && !show.outputs.empty()) {
      if (Status valid = live::ValidateShow(show); !valid.ok()) Note(Plain(std::string(valid.message())));
    }
    if (errors_.size() == 1) return InvalidArgumentError(errors_[0]);
    if (!errors_.empty()) {
      std::string all = file_ + " has " + std::to_string(errors_.size()) + " errors:";
      for (const std::string& e : errors_) all += "\n  " + e;
      return InvalidArgumentError(all);
    }
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

  // Errors are collected, so a show file's every mistake is reported at once.
  void Note(const Status& status) {
    if (!status.ok()) errors_.emplace_back(status.message());
  }
  template <typename T>
  bool Got(const Result<T>& result, T& out) {
    if (!result.ok()) {
      Note(result.status());
      return false;
    }
    out = *result;
    return true;
  }
  template <typename T>
  bool Got(const Result<T>& result) {
    Note(result.status());
    return result.ok();
  }

  // A [name] table, or null when absent; a key of that name that is not a table is an error.
  const toml::table* Table(const toml::table& t, const char* name) {
    const toml::node* node = t.get(name);
    if (node == nullptr) return nullptr;
    if (!node->is_table()) {
      Note(At(*node, name, std::string("must be a table: write [") + name + "] and its keys below it"));
      return nullptr;
    }
    return node->as_table();
  }
  // [[name]] tables; `what` says what the show needs when there are none.
  const toml::array* ArrayOfTables(const toml::table& t, const char* name, const std::string& what) {
    const toml::node* node = t.get(name);
    if (node == nullptr) {
      Note(Plain(std::string("the show has no ") + what));
      return nullptr;
    }
    if (!node->is_array_of_tables() || node->as_array()->empty()) {
      Note(At(*node, name, "must be " + what + " (each a [[" + name + "]] table)"));
      return nullptr;
    }
    return node->as_array();
  }

  // Every key of `t` that is not one of `known` is an error (each noted).
  Status Keys(const toml::table& t, const std::string& where, std::initializer_list<std::string_view> known) {
    for (const auto& [key, node] : t) {
      if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      std::string name = where.empty() ? std::string(key.str()) : where + "." + std::string(key.str());
      Note(At(node, name, "unknown key; " + (where.empty() ? std::string("the show has") : where + " has") + ": " + list));
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
  std::vector<std::string> errors_;
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
