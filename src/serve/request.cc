#include "serve/request.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <vector>

#include "base/percent_encoding.h"
#include "base/query.h"
#include "base/utf8.h"
#include "http/url.h"

namespace pagereel::serve {

namespace {

using Params = std::map<std::string, std::string, std::less<>>;

// The largest document whose data: URL ("data:text/html;charset=utf-8;base64," and 4 bytes
// for every 3) Chromium loads: its URLs are at most 2 MiB.
constexpr size_t kMaxHtmlBytes = (2 * 1024 * 1024 - 40) / 4 * 3;

// Text fit to quote back to a client in an error message: short (cut between characters,
// never inside one), printable. Bytes that are not UTF-8 stay as they are: the answer's
// JSON writer shows each as U+FFFD.
std::string Quote(std::string_view value) {
  const std::string_view shown = Utf8Prefix(value, 60);
  std::string out = "'";
  for (char c : shown) {
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  if (shown.size() < value.size()) out += "...";
  return out + "'";
}

const char* ClipContentType(ClipFormat format) {
  switch (format) {
    case ClipFormat::kGif: return "image/gif";
    case ClipFormat::kMp4: return "video/mp4";
    case ClipFormat::kWebm: return "video/webm";
  }
  return "application/octet-stream";
}

Status Bad(std::string_view name, std::string_view what) {
  return InvalidArgumentError(std::string(name) + ": " + std::string(what));
}

bool HasControl(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// application/x-www-form-urlencoded, as query strings and HTML forms write it: pairs
// joined by '&', '+' for a space, %XX for any byte. A name given twice keeps its last value.
Status AddForm(std::string_view text, Params& params) {
  for (const QueryPair& pair : SplitQuery(text)) {
    std::optional<std::string> name = PercentDecode(pair.name, PlusSign::kSpace);
    std::optional<std::string> value = PercentDecode(pair.value, PlusSign::kSpace);
    if (!name || !value) return Bad("query", "has a % not followed by two hex digits");
    params[std::move(*name)] = std::move(*value);
  }
  return Status::Ok();
}

// The fields of a JSON body, read as the parser meets them: strings as they are, booleans
// as true or false, numbers as they were written (so 12.5 reads as the query's fps=12.5
// would). A name given twice keeps its last value. Anything else in a field (null, an
// array, an object) is an error naming the field, reported for the first such field once
// the whole body has parsed; so is a body nested deeper than 32 levels, or one that is not
// an object.
class JsonFields final : public nlohmann::json_sax<nlohmann::json> {
 public:
  Status Read(std::string_view text, Params& params) {
    const Status not_object =
        Bad("body", "is not a JSON object (send JSON with Content-Type application/json)");
    // The parser would skip a byte-order mark; JSON text has none (RFC 8259).
    if (text.starts_with("\xEF\xBB\xBF")) return not_object;
    if (!nlohmann::json::sax_parse(text, this) || !object_) return not_object;
    const Field* first_bad = nullptr;
    for (const auto& [name, field] : fields_) {
      if (!field.value && (first_bad == nullptr || field.order < first_bad->order)) {
        first_bad = &field;
      }
    }
    if (first_bad != nullptr) {
      return Bad(*first_bad->name, "must be a string, a number or a boolean");
    }
    for (auto& [name, field] : fields_) params[name] = std::move(*field.value);
    return Status::Ok();
  }

  bool null() override { return Value(std::nullopt); }
  bool boolean(bool value) override { return Value(value ? "true" : "false"); }
  bool number_integer(number_integer_t value) override { return Value(std::to_string(value)); }
  bool number_unsigned(number_unsigned_t value) override { return Value(std::to_string(value)); }
  bool number_float(number_float_t, const string_t& text) override { return Value(text); }
  bool string(string_t& value) override { return Value(std::move(value)); }
  bool binary(binary_t&) override { return Value(std::nullopt); }
  bool start_object(std::size_t) override { return Open(Container::kObject); }
  bool key(string_t& name) override {
    if (depth_ == 1) key_ = std::move(name);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(Container::kArray); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // How deep a body may nest: Boost.JSON's default, which this service parsed bodies with
  // before, so a body it took is still taken.
  static constexpr int kMaxDepth = 32;

  enum class Container { kObject, kArray };

  struct Field {
    const std::string* name = nullptr;  // The key of this entry in fields_.
    size_t order = 0;                    // Where the name first appeared.
    std::optional<std::string> value;    // nullopt: not a string, number or boolean.
  };

  bool Value(std::optional<std::string> value) {
    if (depth_ == 1) Set(std::move(value));
    return true;
  }
  bool Open(Container container) {
    if (depth_ == 0) object_ = container == Container::kObject;
    if (depth_ == 1) Set(std::nullopt);
    return ++depth_ <= kMaxDepth;
  }
  bool Close() {
    --depth_;
    return true;
  }
  void Set(std::optional<std::string> value) {
    auto [it, added] = fields_.try_emplace(key_);
    if (added) {
      it->second.name = &it->first;
      it->second.order = fields_.size();
    }
    it->second.value = std::move(value);
  }

  int depth_ = 0;
  bool object_ = false;
  std::string key_;
  std::map<std::string, Field> fields_;
};

Status AddJson(std::string_view text, Params& params) { return JsonFields().Read(text, params); }

class Reader {
 public:
  explicit Reader(const Params& params) : params_(params) {}

  bool Has(std::string_view name) {
    used_.insert(std::string(name));
    return params_.contains(name);
  }
  const std::string& Raw(std::string_view name) { return params_.find(name)->second; }

  Result<int> Int(std::string_view name, int fallback, int min, int max) {
    if (!Has(name)) return fallback;
    const std::string& text = Raw(name);
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      // A whole number may be written as a number with a fraction of zero, as JSON writers
      // often do ({"width": 640.0}, 6.4e2).
      double number = 0;
      auto [number_end, number_ec] =
          std::from_chars(text.data(), text.data() + text.size(), number);
      if (number_ec == std::errc() && number_end == text.data() + text.size() &&
          std::isfinite(number) && number == std::trunc(number) && number >= min && number <= max) {
        value = static_cast<int>(number);
        ec = std::errc();
        end = text.data() + text.size();
      }
    }
    if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
      return Bad(name, "must be a whole number from " + std::to_string(min) + " to " +
                           std::to_string(max) + ", not " + Quote(text));
    }
    return value;
  }

  Result<double> Number(std::string_view name, double fallback, double min, double max) {
    if (!Has(name)) return fallback;
    const std::string& text = Raw(name);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
        value < min || value > max) {
      char range[64];
      std::snprintf(range, sizeof range, "from %g to %g", min, max);
      return Bad(name, std::string("must be a number ") + range + ", not " + Quote(text));
    }
    return value;
  }

  Result<bool> Bool(std::string_view name, bool fallback) {
    if (!Has(name)) return fallback;
    const std::string& text = Raw(name);
    if (text.empty() || text == "true" || text == "1" || text == "yes") return true;
    if (text == "false" || text == "0" || text == "no") return false;
    return Bad(name, "must be true or false, not " + Quote(text));
  }

  Result<std::string> Text(std::string_view name, size_t max_length, bool allow_newlines) {
    if (!Has(name)) return std::string();
    const std::string& text = Raw(name);
    if (text.size() > max_length) {
      return Bad(name, "is longer than " + std::to_string(max_length) + " characters");
    }
    for (char c : text) {
      bool control = static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      if (control && !(allow_newlines && (c == '\n' || c == '\r' || c == '\t'))) {
        return Bad(name, "must not hold control characters");
      }
    }
    // Text goes to the browser inside the DevTools protocol's JSON, which is UTF-8.
    if (!IsUtf8(text)) {
      return Bad(name, "must be UTF-8 text (percent-encode its UTF-8 bytes: %C3%A9 for \u00e9)");
    }
    return text;
  }

  // A paper length: a number with a unit (in, cm, mm, px); a bare number is CSS pixels
  // (96 to the inch), as in browsers' own print options. In inches.
  Result<double> Length(std::string_view name, double fallback_in, double max_in) {
    if (!Has(name)) return fallback_in;
    std::string text = Raw(name);
    double per_unit = 1.0 / 96;
    for (auto [suffix, factor] : {std::pair{"in", 1.0}, {"cm", 1 / 2.54}, {"mm", 1 / 25.4},
                                  {"px", 1.0 / 96}}) {
      if (text.size() > 2 && text.ends_with(suffix)) {
        text.resize(text.size() - 2);
        per_unit = factor;
        break;
      }
    }
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    double inches = value * per_unit;
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(inches) ||
        inches < 0 || inches > max_in) {
      return Bad(name, "must be a length such as 210mm, 8.5in, 21cm or 800 (pixels), at most " +
                           std::to_string(static_cast<int>(max_in)) + " inches, not " +
                           Quote(Raw(name)));
    }
    return inches;
  }

  // Every parameter given must have been read: a misspelt one is an error, not a default.
  Status CheckAllUsed() const {
    for (const auto& [name, value] : params_) {
      if (!used_.contains(name)) {
        return InvalidArgumentError("unknown parameter " + Quote(name) +
                                    " (docs/serve.md lists the parameters of each route)");
      }
    }
    return Status::Ok();
  }

 private:
  const Params& params_;
  std::set<std::string, std::less<>> used_;
};

// What the syntax of a URL says, before any part of it is read for its meaning.
enum class UriSyntax {
  kNotAbsolute,  // Not an absolute URI (RFC 3986, section 4.3).
  kNoHost,       // An absolute URI without a host ("http:x", "http://", "http://u@:80/").
  kAbsolute,
};

// The syntax the service has always asked of url=: a scheme, then only the characters a
// URI may hold, every '%' starting an escape, brackets only in the authority (around an
// IPv6 host), no fragment; and a host (after the last '@' of the authority, before the
// port, as http::ParseUrl finds it). What the parts mean is http::ParseUrl's to say.
UriSyntax SyntaxOf(std::string_view url) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto hex = [&](char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  const size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 || !alpha(url[0])) {
    return UriSyntax::kNotAbsolute;
  }
  for (char c : url.substr(0, colon)) {
    if (!alpha(c) && !digit(c) && c != '+' && c != '-' && c != '.') return UriSyntax::kNotAbsolute;
  }
  std::string_view authority;  // After "//", up to / ? #.
  if (url.substr(colon + 1, 2) == "//") {
    authority = url.substr(colon + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
  }
  const size_t authority_end = authority.empty() ? 0 : colon + 3 + authority.size();
  static constexpr std::string_view kAllowed =
      "-._~"          // Unreserved, besides letters and digits.
      ":/?@"          // Delimiters (# would start a fragment; [] are the host's).
      "!$&'()*+,;=";  // Sub-delimiters.
  for (size_t i = colon + 1; i < url.size(); ++i) {
    const char c = url[i];
    if (alpha(c) || digit(c) || kAllowed.find(c) != std::string_view::npos) continue;
    if ((c == '[' || c == ']') && i < authority_end) continue;
    if (c == '%' && i + 2 < url.size() && hex(url[i + 1]) && hex(url[i + 2])) {
      i += 2;
      continue;
    }
    return UriSyntax::kNotAbsolute;
  }
  std::string_view host = authority.substr(authority.rfind('@') + 1);  // npos + 1 is 0.
  if (!host.starts_with("[")) host = host.substr(0, host.rfind(':'));
  return host.empty() ? UriSyntax::kNoHost : UriSyntax::kAbsolute;
}

// The service's own reading of url=, before the capture is queued: a URL that http::ParseUrl
// (the parser the egress policy and proxy judge every request by) cannot read is refused
// here; one it can read is judged by the policy when the capture runs.
Status CheckUrlParameter(const std::string& url) {
  if (url.size() > 8192) return Bad("url", "is longer than 8192 characters");
  if (HasControl(url) || url.find(' ') != std::string::npos) {
    return Bad("url", "must not hold spaces or control characters (percent-encode them)");
  }
  const UriSyntax syntax = SyntaxOf(url);
  if (syntax == UriSyntax::kNotAbsolute) return Bad("url", "is not an absolute URL: " + Quote(url));
  const std::string_view scheme = std::string_view(url).substr(0, url.find(':'));
  std::string lower(scheme);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != "http" && lower != "https") {
    return Bad("url", "must be an http:// or https:// URL, not " + Quote(scheme) +
                          " (to capture your own HTML, POST it)");
  }
  if (syntax == UriSyntax::kNoHost) return Bad("url", "has no host: " + Quote(url));
  Result<http::UrlParts> parts = http::ParseUrl(url);
  if (!parts.ok()) {
    return Bad("url", Quote(url) + " is refused: " + std::string(parts.status().message()));
  }
  return Status::Ok();
}

Status ReadPage(Reader& in, const Limits& limits, std::string_view html_body,
                CaptureRequest& request) {
  capture::SnapshotOptions& page = request.page;
  PR_ASSIGN_OR_RETURN(page.url, in.Text("url", 8192, false));
  PR_ASSIGN_OR_RETURN(std::string html, in.Text("html", limits.max_body_bytes, true));
  if (!html_body.empty()) html = std::string(html_body);
  if (!page.url.empty() && !html.empty()) {
    return Bad("url", "give either url or an HTML document, not both");
  }
  if (page.url.empty() && html.empty()) {
    return Bad("url", "missing: give url=https://... or POST the HTML to capture");
  }
  if (!page.url.empty()) {
    PR_RETURN_IF_ERROR(CheckUrlParameter(page.url));
    request.what = page.url;
  } else {
    request.what = "html (" + std::to_string(html.size()) + " bytes)";
    // A GIF or clip loads a document as a base64 data: URL, and Chromium loads no URL
    // longer than 2 MiB (url::kMaxURLChars): a larger one failed with ERR_ABORTED after a
    // trip to the browser (issue 20). Screenshots and PDFs write the document into the page
    // instead, up to the body limit.
    const bool film_route = request.route == Route::kGif || request.route == Route::kClip;
    if (film_route && html.size() > kMaxHtmlBytes) {
      return ResourceExhaustedError("html: the document is " + std::to_string(html.size()) +
                                    " bytes; the most a GIF or clip "
                                    "loads as a posted document is " +
                                    std::to_string(kMaxHtmlBytes) +
                                    " (serve a larger one over http and give its url)");
    }
  }
  page.html = std::move(html);

  bool film = request.route == Route::kGif || request.route == Route::kClip;
  if (request.route != Route::kPdf) {  // For a PDF, width and height are the paper's.
    PR_ASSIGN_OR_RETURN(page.width, in.Int("width", 1280, 1, limits.max_width));
    PR_ASSIGN_OR_RETURN(page.height, in.Int("height", 720, 1, limits.max_height));
  }
  if (request.route == Route::kScreenshot) {
    PR_ASSIGN_OR_RETURN(page.scale, in.Number("scale", 1.0, 0.1, limits.max_scale));
  } else if (film && in.Has("scale")) {
    return Bad("scale", "applies to screenshots only; a GIF or clip is width × height pixels");
  }
  double pixels = page.width * page.scale * page.height * page.scale;
  if (pixels > static_cast<double>(limits.max_pixels)) {
    return Bad("scale", "width × height × scale² is " + std::to_string(static_cast<int64_t>(pixels)) +
                            " pixels; the most this service makes is " +
                            std::to_string(limits.max_pixels));
  }
  PR_ASSIGN_OR_RETURN(int timeout_ms,
                      in.Int("timeout", static_cast<int>(limits.default_timeout.count()), 1,
                             static_cast<int>(limits.max_timeout.count())));
  page.timeout = std::chrono::milliseconds(timeout_ms);

  if (film && in.Has("wait")) {
    return Bad("wait", "applies to screenshot and pdf; a GIF or clip starts at frame 0 as soon "
                       "as the page has loaded, its fonts are in and window.pagereel.ready "
                       "(if the page sets it) has resolved, and runs on page time from there");
  }
  if (in.Has("wait")) {
    const std::string& wait = in.Raw("wait");
    if (wait == "auto") {
      page.wait = capture::WaitMode::kAuto;
    } else if (wait == "load") {
      page.wait = capture::WaitMode::kLoad;
    } else if (wait == "networkidle") {
      page.wait = capture::WaitMode::kNetworkIdle;
    } else if (wait == "quiet") {
      page.wait = capture::WaitMode::kQuiet;
    } else {
      int ms = 0;
      auto [end, ec] = std::from_chars(wait.data(), wait.data() + wait.size(), ms);
      if (ec != std::errc() || end != wait.data() + wait.size() || ms < 0 || ms >= timeout_ms) {
        return Bad("wait", "must be auto, load, networkidle, quiet or a number of milliseconds "
                           "below the timeout (" + std::to_string(timeout_ms) + "), not " +
                               Quote(wait));
      }
      page.wait = capture::WaitMode::kFixed;
      page.fixed_wait = std::chrono::milliseconds(ms);
    }
  }
  return Status::Ok();
}

Status ReadScreenshot(Reader& in, const Limits& limits, CaptureRequest& request) {
  capture::ScreenshotOptions& shot = request.screenshot;
  // The viewport is held to it above; a full page or an element may be larger, and is cut.
  shot.max_pixels = limits.max_pixels;
  std::string type = in.Has("type") ? in.Raw("type") : "png";
  if (type == "png") {
    shot.type = capture::ImageType::kPng;
    request.content_type = "image/png";
  } else if (type == "jpeg" || type == "jpg") {
    shot.type = capture::ImageType::kJpeg;
    request.content_type = "image/jpeg";
  } else if (type == "webp") {
    shot.type = capture::ImageType::kWebp;
    request.content_type = "image/webp";
  } else {
    return Bad("type", "must be png, jpeg or webp, not " + Quote(type));
  }
  PR_ASSIGN_OR_RETURN(shot.quality, in.Int("quality", 80, 1, 100));
  if (in.Has("quality") && shot.type == capture::ImageType::kPng) {
    return Bad("quality", "applies to jpeg and webp only (png is lossless)");
  }
  PR_ASSIGN_OR_RETURN(shot.full_page, in.Bool("fullPage", false));
  PR_ASSIGN_OR_RETURN(shot.selector, in.Text("selector", 1024, false));
  if (shot.full_page && !shot.selector.empty()) {
    return Bad("selector", "cannot be combined with fullPage");
  }
  PR_ASSIGN_OR_RETURN(request.page.transparent, in.Bool("transparent", false));
  if (request.page.transparent && shot.type == capture::ImageType::kJpeg) {
    return Bad("transparent", "needs type=png or type=webp (JPEG has no alpha)");
  }
  return Status::Ok();
}

Status ReadPdf(Reader& in, CaptureRequest& request) {
  capture::PdfOptions& pdf = request.pdf;
  request.content_type = "application/pdf";
  constexpr double kMaxPaperIn = 200;
  if (in.Has("format")) {
    static const std::map<std::string, std::pair<double, double>, std::less<>> kFormats = {
        {"letter", {8.5, 11}},    {"legal", {8.5, 14}},       {"tabloid", {11, 17}},
        {"ledger", {17, 11}},     {"a0", {33.1, 46.8}},       {"a1", {23.4, 33.1}},
        {"a2", {16.54, 23.4}},    {"a3", {11.7, 16.54}},      {"a4", {8.27, 11.7}},
        {"a5", {5.83, 8.27}},     {"a6", {4.13, 5.83}},
    };
    std::string name = in.Raw("format");
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto it = kFormats.find(name);
    if (it == kFormats.end()) {
      return Bad("format", "must be one of A0-A6, Letter, Legal, Tabloid, Ledger, not " +
                               Quote(in.Raw("format")));
    }
    pdf.paper_width_in = it->second.first;
    pdf.paper_height_in = it->second.second;
    if (in.Has("width") || in.Has("height")) {
      return Bad("format", "give either format or width and height, not both");
    }
  }
  PR_ASSIGN_OR_RETURN(pdf.paper_width_in, in.Length("width", pdf.paper_width_in, kMaxPaperIn));
  PR_ASSIGN_OR_RETURN(pdf.paper_height_in, in.Length("height", pdf.paper_height_in, kMaxPaperIn));
  if (pdf.paper_width_in < 0.5 || pdf.paper_height_in < 0.5) {
    return Bad("width", "the paper must be at least half an inch each way");
  }
  PR_ASSIGN_OR_RETURN(double margin, in.Length("margin", 0.4, kMaxPaperIn));
  PR_ASSIGN_OR_RETURN(pdf.margin_top_in, in.Length("marginTop", margin, kMaxPaperIn));
  PR_ASSIGN_OR_RETURN(pdf.margin_bottom_in, in.Length("marginBottom", margin, kMaxPaperIn));
  PR_ASSIGN_OR_RETURN(pdf.margin_left_in, in.Length("marginLeft", margin, kMaxPaperIn));
  PR_ASSIGN_OR_RETURN(pdf.margin_right_in, in.Length("marginRight", margin, kMaxPaperIn));
  if (pdf.margin_left_in + pdf.margin_right_in >= pdf.paper_width_in ||
      pdf.margin_top_in + pdf.margin_bottom_in >= pdf.paper_height_in) {
    return Bad("margin", "the margins leave no room on the paper");
  }
  PR_ASSIGN_OR_RETURN(pdf.landscape, in.Bool("landscape", false));
  PR_ASSIGN_OR_RETURN(pdf.print_background, in.Bool("printBackground", true));
  PR_ASSIGN_OR_RETURN(pdf.header_template, in.Text("headerTemplate", 65536, true));
  PR_ASSIGN_OR_RETURN(pdf.footer_template, in.Text("footerTemplate", 65536, true));
  PR_ASSIGN_OR_RETURN(pdf.page_ranges, in.Text("pageRanges", 256, false));
  static const std::regex kRanges(R"(\s*\d+(\s*-\s*\d*)?(\s*,\s*\d+(\s*-\s*\d*)?)*\s*)");
  if (!pdf.page_ranges.empty() && !std::regex_match(pdf.page_ranges, kRanges)) {
    return Bad("pageRanges", "must look like 1-5, 8, 11-13, not " + Quote(pdf.page_ranges));
  }
  return Status::Ok();
}

// GIF (route kGif) and MP4 / WebM (route kClip): rate, length, format, quality.
Status ReadClip(Reader& in, const Limits& limits, CaptureRequest& request) {
  ClipOptions& clip = request.clip;
  bool gif = request.route == Route::kGif;
  clip.fps = gif ? Rational{10, 1} : Rational{30, 1};
  if (in.Has("fps")) {
    Result<Rational> fps = ParseFrameRate(in.Raw("fps"));
    if (!fps.ok() || fps->ToDouble() > limits.max_clip_fps) {
      return Bad("fps", "must be a frame rate above 0 and at most " +
                            std::to_string(limits.max_clip_fps) + " (10, 12.5, 29.97, 30000/1001), not " +
                            Quote(in.Raw("fps")));
    }
    clip.fps = *fps;
  }
  clip.max_frames = limits.max_clip_frames;
  clip.max_frame_pixels = limits.max_clip_pixels;
  bool has_frames = in.Has("frames");
  bool has_duration = in.Has("duration");
  if (has_frames && has_duration) return Bad("frames", "give either frames or duration, not both");
  if (has_frames) {
    PR_ASSIGN_OR_RETURN(int frames, in.Int("frames", 1, 1, static_cast<int>(limits.max_clip_frames)));
    clip.frames = frames;
  }
  if (has_duration) {
    PR_ASSIGN_OR_RETURN(double seconds, in.Number("duration", 1, 0.001, limits.max_clip_seconds));
    int64_t frames = FramesInDuration(seconds, clip.fps);
    if (frames > limits.max_clip_frames) {
      return Bad("duration", in.Raw("duration") + " s at " + clip.fps.ToString() + " fps is " +
                                 std::to_string(frames) + " frames; the most this service makes is " +
                                 std::to_string(limits.max_clip_frames));
    }
    clip.frames = std::max<int64_t>(frames, 1);
  }
  if (clip.frames) {
    double pixels = static_cast<double>(*clip.frames) * request.page.width * request.page.height;
    if (pixels > static_cast<double>(limits.max_clip_pixels)) {
      return Bad(has_frames ? "frames" : "duration",
                 std::to_string(*clip.frames) + " frames of " + std::to_string(request.page.width) +
                     "x" + std::to_string(request.page.height) + " are " +
                     std::to_string(static_cast<int64_t>(pixels)) +
                     " pixels; the most this service encodes in one clip is " +
                     std::to_string(limits.max_clip_pixels) + " (ask for fewer frames or a smaller size)");
    }
  }
  if (gif) {
    clip.format = ClipFormat::kGif;
    for (const char* name : {"quality", "transparent", "format"}) {
      if (in.Has(name)) return Bad(name, "does not apply to a GIF (see /v1/clip for MP4 and WebM)");
    }
    for (const char* name : {"audio", "strict"}) {
      if (in.Has(name)) return Bad(name, "does not apply to a GIF, which has no sound (see /v1/clip)");
    }
  } else {
    std::string format = in.Has("format") ? in.Raw("format") : "mp4";
    if (format == "mp4") {
      clip.format = ClipFormat::kMp4;
    } else if (format == "webm") {
      clip.format = ClipFormat::kWebm;
    } else {
      return Bad("format", "must be mp4 (H.264) or webm (VP9), not " + Quote(format) +
                               " (GIFs come from /v1/gif)");
    }
    PR_ASSIGN_OR_RETURN(clip.quality, in.Int("quality", 90, 1, 100));
    PR_ASSIGN_OR_RETURN(clip.transparent, in.Bool("transparent", false));
    PR_ASSIGN_OR_RETURN(bool audio, in.Bool("audio", true));
    clip.sound = audio ? ClipOptions::Sound::kIfAny : ClipOptions::Sound::kNone;
    PR_ASSIGN_OR_RETURN(bool strict, in.Bool("strict", false));
    clip.left_out = strict ? ClipOptions::LeftOut::kFail : ClipOptions::LeftOut::kList;
    if (strict && !audio) return Bad("strict", "needs the sound: audio=false leaves it all out");
    clip.max_media_bytes = limits.max_clip_media_bytes;
    if (clip.transparent && clip.format != ClipFormat::kWebm) {
      return Bad("transparent", "needs format=webm (H.264 in MP4 has no alpha)");
    }
    if (request.page.width % 2 != 0 || request.page.height % 2 != 0) {
      return Bad(request.page.width % 2 != 0 ? "width" : "height",
                 "must be even for " + format + " (its colours are stored at half resolution)");
    }
  }
  request.content_type = ClipContentType(clip.format);
  return Status::Ok();
}

}  // namespace

const char* RouteName(Route route) {
  switch (route) {
    case Route::kScreenshot: return "screenshot";
    case Route::kPdf: return "pdf";
    case Route::kGif: return "gif";
    case Route::kClip: return "clip";
  }
  return "capture";
}

Result<CaptureRequest> ParseCaptureRequest(Route route, std::string_view target,
                                           std::string_view content_type, std::string_view body,
                                           const Limits& limits) {
  if (body.size() > limits.max_body_bytes) {
    return ResourceExhaustedError("the body is larger than " +
                                  std::to_string(limits.max_body_bytes) + " bytes");
  }
  Params params;
  if (size_t q = target.find('?'); q != std::string_view::npos) {
    PR_RETURN_IF_ERROR(AddForm(target.substr(q + 1), params));
  }
  std::string_view html_body;
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  if (!body.empty()) {
    if (type == "application/json") {
      PR_RETURN_IF_ERROR(AddJson(body, params));
    } else if (type == "application/x-www-form-urlencoded") {
      PR_RETURN_IF_ERROR(AddForm(body, params));
    } else if (type == "text/html" || type.empty()) {
      html_body = body;
    } else {
      return Bad("Content-Type", "must be application/json, application/x-www-form-urlencoded "
                                 "or text/html, not " + Quote(type));
    }
  }
  CaptureRequest request;
  request.route = route;
  Reader in(params);
  PR_RETURN_IF_ERROR(ReadPage(in, limits, html_body, request));
  if (route == Route::kScreenshot) {
    PR_RETURN_IF_ERROR(ReadScreenshot(in, limits, request));
  } else if (route == Route::kPdf) {
    PR_RETURN_IF_ERROR(ReadPdf(in, request));
  } else {
    PR_RETURN_IF_ERROR(ReadClip(in, limits, request));
  }
  PR_RETURN_IF_ERROR(in.CheckAllUsed());
  return request;
}

}  // namespace pagereel::serve
