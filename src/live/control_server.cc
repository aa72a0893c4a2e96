#include "live/control_server.h"

#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <cctype>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "base/percent_encoding.h"
#include "base/pressure.h"
#include "base/query.h"
#include "base/thread.h"
#include "http/prometheus.h"
#include "http/session.h"
#include "http/token.h"
#include "live/json_parse.h"
#include "live/operator_page.h"

namespace pagereel::live {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using json = nlohmann::ordered_json;

namespace {

constexpr size_t kMaxBodyBytes = 1 << 20;  // Commands are small; update() data included.
constexpr int kProgramPreviewWidth = 640;
constexpr int kThumbnailWidth = 320;
constexpr int kSourcePreviewWidth = 640;
// Status pushes a WebSocket client may have waiting; one that does not read misses the
// newer ones (never a reply to its own command).
constexpr size_t kMaxQueuedPushes = 4;
// How long Stop() lets WebSocket clients answer the close frame.
constexpr std::chrono::seconds kCloseGrace{1};
constexpr int kMaxFadeFrames = 100'000;

using http::Response;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// `text` cut to `limit` characters, for echoing user input in messages.
std::string Shown(std::string_view text, size_t limit = 80) {
  std::string out(text.substr(0, limit));
  if (text.size() > limit) out += "...";
  return out;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// An output's target without what may be secret: a password in the URL, query values
// other than harmless settings, and an RTMP stream key (the last part of the path).
std::string RedactTarget(const std::string& target) {
  const size_t scheme_end = target.find("://");
  if (scheme_end == std::string::npos) return target;  // A file.
  const std::string scheme = Lower(target.substr(0, scheme_end));
  const size_t host_start = scheme_end + 3;
  size_t query = target.find('?', host_start);
  std::string base = target.substr(0, query);
  const size_t path = base.find('/', host_start);
  const size_t at = base.rfind('@', path);
  if (at != std::string::npos && at >= host_start) {
    base.replace(host_start, at - host_start, "***");
  }
  if (scheme.rfind("rtmp", 0) == 0) {
    const size_t first = base.find('/', host_start);
    const size_t last = base.rfind('/');
    if (first != std::string::npos && last > first && last + 1 < base.size()) {
      base.replace(last + 1, std::string::npos, "***");
    }
  }
  if (query == std::string::npos) return base;
  static const std::set<std::string> kHarmless = {"pkt_size",    "mode",    "latency",  "ttl",
                                                  "buffer_size", "timeout", "transtype"};
  std::string out = base + "?";
  std::stringstream params(target.substr(query + 1));
  std::string param;
  bool first = true;
  while (std::getline(params, param, '&')) {
    const std::string key = param.substr(0, param.find('='));
    out += (first ? "" : "&") + (kHarmless.count(Lower(key)) != 0 ? param : key + "=***");
    first = false;
  }
  return out;
}

// `text` (an output's error) with every mention of its target redacted.
std::string RedactIn(std::string text, const std::string& target) {
  if (target.empty()) return text;
  const std::string hidden = RedactTarget(target);
  for (size_t at = text.find(target); at != std::string::npos; at = text.find(target, at + hidden.size())) {
    text.replace(at, target.size(), hidden);
  }
  return text;
}

json PressureJson(std::string_view text) {
  if (text.empty()) return nullptr;
  Result<Pressure> p = ParsePressure(text);
  if (!p.ok()) return nullptr;
  json j = {{"cpuSomeAvg10", p->some.avg10},
            {"cpuSomeAvg60", p->some.avg60},
            {"cpuSomeAvg300", p->some.avg300},
            {"cpuSomeTotalUs", p->some.total_us}};
  if (p->full) {
    j["cpuFullAvg10"] = p->full->avg10;
    j["cpuFullAvg60"] = p->full->avg60;
    j["cpuFullAvg300"] = p->full->avg300;
    j["cpuFullTotalUs"] = p->full->total_us;
  }
  return j;
}

json StatusObject(const ShowStatus& st, std::string_view pressure_text) {
  json sources = json::array();
  for (const SourceStatus& s : st.sources) {
    sources.push_back(
        {{"id", s.id},
         {"worker", s.worker},
         {"phase", s.phase},
         {"visible", s.visible},
         {"opacity", s.opacity},
         {"fps", s.fps},
         {"freshness", s.freshness},
         {"fpsShow", s.fps_show},
         {"freshnessShow", s.freshness_show},
         {"frames", s.frames},
         {"repeated", s.repeated},
         {"discarded", s.discarded},
         {"skipped", s.skipped},
         {"restarts", s.restarts},
         {"browserPid", s.browser_pid},
         {"lastPaintTsMs", s.last_paint_ms > 0 ? json(s.last_paint_ms) : json(nullptr)},
         {"arrivalMs", s.arrival_ms},
         {"drawP50Ms", s.draw_p50_ms},
         {"drawP99Ms", s.draw_p99_ms},
         {"prepareP50Ms", s.prepare_p50_ms},
         {"leadP50Ms", s.lead_p50_ms},
         {"leadMs", s.lead_ms},
         {"step", s.step},
         {"pageErrors", s.page_errors},
         {"lastError", s.last_error},
         {"lastErrorTsMs", s.last_error_ms > 0 ? json(s.last_error_ms) : json(nullptr)},
         {"soundLive", s.sound_live},
         {"soundUnderruns", s.sound_underruns},
         {"soundPaddedSamples", s.sound_padded},
         {"soundOverruns", s.sound_overruns},
         {"soundDroppedSamples", s.sound_dropped},
         {"soundGaps", s.sound_gaps},
         {"soundGapSamples", s.sound_gap_samples},
         {"soundBufferMs", s.sound_buffer_ms}});
  }
  json outputs = json::array();
  for (const OutputStatus& o : st.outputs) {
    outputs.push_back({{"id", o.id},
                       {"target", RedactTarget(o.target)},
                       {"frames", o.frames},
                       {"drops", o.dropped},
                       {"queueDepth", o.queue_depth},
                       {"bytes", o.bytes},
                       {"bitrateKbps", o.bitrate_kbps},
                       {"fps", o.fps},
                       {"encoder", o.encoder},
                       {"reconnects", o.reconnects},
                       {"connected", o.connected},
                       {"lastError", RedactIn(o.last_error, o.target)},
                       {"srt", o.srt ? json{{"droppedPackets", o.srt_dropped_packets},
                                            {"retransmittedPackets", o.srt_retransmitted_packets},
                                            {"rttMs", o.srt_rtt_ms}}
                                     : json(nullptr)}});
  }
  return {{"sources", std::move(sources)},
          {"clock",
           {{"ticks", st.clock.ticks},
            {"lateTicks", st.clock.late},
            {"soundSamples", st.clock.sound_samples},
            {"phaseP50Us", st.clock.phase_p50_us},
            {"phaseP99Us", st.clock.phase_p99_us},
            {"phaseMaxUs", st.clock.phase_max_us},
            {"mixP50Us", st.clock.mix_p50_us},
            {"mixP99Us", st.clock.mix_p99_us},
            {"mixMaxUs", st.clock.mix_max_us},
            {"scheduling", st.clock.scheduling}}},
          {"outputs", std::move(outputs)},
          {"psi", PressureJson(pressure_text)},
          {"seconds", st.seconds},
          {"sound", st.sound}};
}

int HttpStatusOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 422;  // The page threw, or cannot load.
    case StatusCode::kUnavailable:
      return 503;  // Its browser is being replaced.
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

// What a command did: an HTTP status and the JSON answer ({"ok":true,...} or {"error":...}).
struct Outcome {
  int status = 200;
  json body;
};

Outcome Failure(int status, std::string message) {
  return {status, json{{"error", std::move(message)}}};
}
Outcome Failure(const Status& status) {
  return Failure(HttpStatusOf(status), std::string(status.message()));
}

enum class CommandKind { kShow, kHide, kCall, kNavigate, kReload };

std::optional<CommandKind> CommandNamed(std::string_view name) {
  if (name == "show") return CommandKind::kShow;
  if (name == "hide") return CommandKind::kHide;
  if (name == "call") return CommandKind::kCall;
  if (name == "navigate") return CommandKind::kNavigate;
  if (name == "reload") return CommandKind::kReload;
  return std::nullopt;
}

const char* NameOf(CommandKind kind) {
  switch (kind) {
    case CommandKind::kShow:
      return "show";
    case CommandKind::kHide:
      return "hide";
    case CommandKind::kCall:
      return "call";
    case CommandKind::kNavigate:
      return "navigate";
    case CommandKind::kReload:
      return "reload";
  }
  return "?";
}

struct Command {
  CommandKind kind = CommandKind::kShow;
  std::string source;
  int fade = 0;
  std::string expression;  // kCall.
  std::string url;         // kNavigate.
};

// A command from its fields (an HTTP body, or a WebSocket message without "command",
// "source" and "id"). Unknown fields are refused, so a typo does not go unnoticed.
Result<Command> ParseCommand(CommandKind kind, const std::string& source, const json& fields) {
  if (!fields.is_object()) {
    return InvalidArgumentError(std::string("the ") + NameOf(kind) +
                                " command takes a JSON object, not " + fields.type_name());
  }
  std::vector<std::string> allowed;
  switch (kind) {
    case CommandKind::kShow:
    case CommandKind::kHide:
      allowed = {"fade"};
      break;
    case CommandKind::kCall:
      allowed = {"function", "args"};
      break;
    case CommandKind::kNavigate:
      allowed = {"url"};
      break;
    case CommandKind::kReload:
      break;
  }
  for (const auto& [key, value] : fields.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string takes = allowed.empty() ? "no fields" : "";
      for (size_t i = 0; i < allowed.size(); ++i) takes += (i > 0 ? " and " : "") + allowed[i];
      return InvalidArgumentError("unknown field '" + Shown(key) + "' for " + NameOf(kind) +
                                  "; it takes " + takes);
    }
  }
  Command c;
  c.kind = kind;
  c.source = source;
  switch (kind) {
    case CommandKind::kShow:
    case CommandKind::kHide:
      if (fields.contains("fade")) {
        const json& fade = fields["fade"];
        if (!fade.is_number_integer() || fade.get<int64_t>() < 0 ||
            fade.get<int64_t>() > kMaxFadeFrames) {
          return InvalidArgumentError("fade must be a whole number of frames from 0 (a cut) to " +
                                      std::to_string(kMaxFadeFrames) + ", not " +
                                      Shown(Dump(fade)));
        }
        c.fade = static_cast<int>(fade.get<int64_t>());
      }
      break;
    case CommandKind::kCall: {
      if (!fields.contains("function") || !fields["function"].is_string()) {
        return InvalidArgumentError(
            "call needs \"function\": the name of the page's function, "
            "such as \"update\", \"play\", \"next\" or \"stop\"");
      }
      const json args = fields.contains("args") ? fields["args"] : json::array();
      PR_ASSIGN_OR_RETURN(c.expression,
                          TemplateCall(fields["function"].get<std::string>(), Dump(args)));
      break;
    }
    case CommandKind::kNavigate:
      if (!fields.contains("url") || !fields["url"].is_string()) {
        return InvalidArgumentError(
            "navigate needs \"url\": an http://, https://, file:// or "
            "data: URL");
      }
      c.url = fields["url"].get<std::string>();
      PR_RETURN_IF_ERROR(CheckSourceUrl(c.url));
      break;
    case CommandKind::kReload:
      break;
  }
  return c;
}

// The value of the first `key` in a query string, decoded ('+' kept: RFC 3986, as the
// operator page encodes it); nullopt when absent or badly escaped.
std::optional<std::string> QueryValue(std::string_view query, std::string_view key) {
  for (const QueryPair& pair : SplitQuery(query)) {
    if (pair.name == key) return PercentDecode(pair.value, PlusSign::kItself);
  }
  return std::nullopt;
}

// Whether a Host header names this machine: localhost, 127.x.x.x or [::1], with any port.
bool IsLoopbackHost(std::string_view host) {
  if (host.empty()) return true;  // HTTP/1.0 clients send none; a browser always does.
  std::string name;
  if (host.front() == '[') {
    name = std::string(host.substr(1, host.find(']') - 1));
  } else {
    name = std::string(host.substr(0, host.rfind(':')));
  }
  name = Lower(name);
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(name, ec);
  return !ec && address.is_loopback();
}

}  // namespace

std::string StatusJson(const ShowStatus& status, std::string_view pressure_text) {
  return Dump(StatusObject(status, pressure_text)) + "\n";
}

std::string MetricsText(const ShowStatus& st, std::string_view pressure_text) {
  http::PrometheusText p;
  p.Family("pagereel_live_ticks_total", "counter",
           "Ticks the frame clock made (one output frame each).");
  p.Sample("pagereel_live_ticks_total", {}, st.clock.ticks);
  p.Family("pagereel_live_late_ticks_total", "counter",
           "Ticks that woke later than the late threshold.");
  p.Sample("pagereel_live_late_ticks_total", {}, st.clock.late);
  p.Family("pagereel_live_sound_samples_total", "counter",
           "Samples (48 kHz) the ticks carried: each tick its exact share.");
  p.Sample("pagereel_live_sound_samples_total", {}, st.clock.sound_samples);
  p.Family("pagereel_live_show_seconds", "gauge", "Seconds since the first tick.");
  p.Sample("pagereel_live_show_seconds", {}, st.seconds);
  p.Family(
      "pagereel_live_clock_phase_seconds", "gauge",
      "How late the clock thread woke for its ticks, over the show (quantile 1: the maximum).");
  p.Sample("pagereel_live_clock_phase_seconds", {{"quantile", "0.5"}}, st.clock.phase_p50_us / 1e6);
  p.Sample("pagereel_live_clock_phase_seconds", {{"quantile", "0.99"}},
           st.clock.phase_p99_us / 1e6);
  p.Sample("pagereel_live_clock_phase_seconds", {{"quantile", "1"}}, st.clock.phase_max_us / 1e6);
  p.Family("pagereel_live_mix_seconds", "gauge",
           "Time to composite one tick, over the show (quantile 1: the maximum).");
  p.Sample("pagereel_live_mix_seconds", {{"quantile", "0.5"}}, st.clock.mix_p50_us / 1e6);
  p.Sample("pagereel_live_mix_seconds", {{"quantile", "0.99"}}, st.clock.mix_p99_us / 1e6);
  p.Sample("pagereel_live_mix_seconds", {{"quantile", "1"}}, st.clock.mix_max_us / 1e6);

  struct SourceCounter {
    const char* name;
    const char* help;
    int64_t SourceStatus::*field;
  };
  const SourceCounter counters[] = {
      {"pagereel_live_source_frames_total", "New pictures a source made.", &SourceStatus::frames},
      {"pagereel_live_source_repeated_total", "Ticks that found no new picture of a source.",
       &SourceStatus::repeated},
      {"pagereel_live_source_discarded_total", "Pictures replaced before any tick showed them.",
       &SourceStatus::discarded},
      {"pagereel_live_source_skipped_total",
       "Ticks a source's worker was too busy to begin a frame for.", &SourceStatus::skipped},
      {"pagereel_live_source_page_errors_total", "Uncaught exceptions in a source's page.",
       &SourceStatus::page_errors},
      {"pagereel_live_source_restarts_total", "Browser replacements of a source's worker.",
       &SourceStatus::restarts},
      {"pagereel_live_source_sound_underruns_total",
       "Ticks that found less of a source's sound than their share (padded with silence).",
       &SourceStatus::sound_underruns},
      {"pagereel_live_source_sound_padded_samples_total", "Silent samples those ticks got.",
       &SourceStatus::sound_padded},
      {"pagereel_live_source_sound_overruns_total",
       "Times a source's captured sound was dropped for waiting too long.", &SourceStatus::sound_overruns},
      {"pagereel_live_source_sound_dropped_samples_total", "Samples of a source's sound dropped.",
       &SourceStatus::sound_dropped},
      {"pagereel_live_source_sound_gaps_total",
       "Times a source's browser let its sound stream run dry (silence on air).", &SourceStatus::sound_gaps},
      {"pagereel_live_source_sound_gap_samples_total", "Samples of silence those gaps put on air.",
       &SourceStatus::sound_gap_samples},
  };
  for (const SourceCounter& c : counters) {
    p.Family(c.name, "counter", c.help);
    for (const SourceStatus& s : st.sources) p.Sample(c.name, {{"source", s.id}}, s.*(c.field));
  }
  p.Family("pagereel_live_source_visible", "gauge",
           "1 while a source is shown (or fading in), 0 hidden.");
  for (const SourceStatus& s : st.sources) {
    p.Sample("pagereel_live_source_visible", {{"source", s.id}}, int64_t{s.visible ? 1 : 0});
  }
  p.Family("pagereel_live_source_opacity", "gauge",
           "A source's opacity now, fades included (0 to 1).");
  for (const SourceStatus& s : st.sources)
    p.Sample("pagereel_live_source_opacity", {{"source", s.id}}, s.opacity);
  p.Family("pagereel_live_source_fps", "gauge",
           "New pictures of a source on air per second, over the last 2 s.");
  for (const SourceStatus& s : st.sources)
    p.Sample("pagereel_live_source_fps", {{"source", s.id}}, s.fps);
  p.Family("pagereel_live_source_freshness", "gauge",
           "Share of the last 2 s of ticks that showed a new picture of a source (1: every tick).");
  for (const SourceStatus& s : st.sources)
    p.Sample("pagereel_live_source_freshness", {{"source", s.id}}, s.freshness);
  p.Family("pagereel_live_source_step", "gauge",
           "A source's worker draws every this many ticks (1: every tick; more: its frames cannot keep up).");
  for (const SourceStatus& s : st.sources)
    p.Sample("pagereel_live_source_step", {{"source", s.id}}, s.step);
  p.Family("pagereel_live_source_arrival_seconds", "gauge",
           "Smoothed arrival of a source's pictures after their ticks.");
  for (const SourceStatus& s : st.sources) {
    p.Sample("pagereel_live_source_arrival_seconds", {{"source", s.id}}, s.arrival_ms / 1e3);
  }
  p.Family("pagereel_live_source_draw_seconds", "gauge",
           "A frame begun in a source's browser, to its reply.");
  for (const SourceStatus& s : st.sources) {
    p.Sample("pagereel_live_source_draw_seconds", {{"source", s.id}, {"quantile", "0.5"}},
             s.draw_p50_ms / 1e3);
    p.Sample("pagereel_live_source_draw_seconds", {{"source", s.id}, {"quantile", "0.99"}},
             s.draw_p99_ms / 1e3);
  }

  struct OutputCounter {
    const char* name;
    const char* type;
    const char* help;
    int64_t OutputStatus::*field;
  };
  const OutputCounter outputs[] = {
      {"pagereel_live_output_frames_total", "counter", "Ticks an output wrote to its sink.",
       &OutputStatus::frames},
      {"pagereel_live_output_dropped_total", "counter",
       "Ticks an output did not write (a queue full, disconnected, or waiting for a keyframe "
       "after either).", &OutputStatus::dropped},
      {"pagereel_live_output_reconnects_total", "counter",
       "Times an output was reopened after its peer failed.", &OutputStatus::reconnects},
      {"pagereel_live_output_bytes_total", "counter", "Bytes an output wrote.",
       &OutputStatus::bytes},
      {"pagereel_live_output_queue_depth", "gauge", "Frames waiting in an output's queue.",
       &OutputStatus::queue_depth},
  };
  for (const OutputCounter& c : outputs) {
    p.Family(c.name, c.type, c.help);
    for (const OutputStatus& o : st.outputs) p.Sample(c.name, {{"output", o.id}}, o.*(c.field));
  }
  p.Family("pagereel_live_output_fps", "gauge", "Ticks an output wrote per second, over the last 2 s.");
  for (const OutputStatus& o : st.outputs) p.Sample("pagereel_live_output_fps", {{"output", o.id}}, o.fps);
  p.Family("pagereel_live_output_bitrate_kbps", "gauge", "What an output wrote, kb/s over the last 2 s.");
  for (const OutputStatus& o : st.outputs) {
    p.Sample("pagereel_live_output_bitrate_kbps", {{"output", o.id}}, o.bitrate_kbps);
  }
  p.Family("pagereel_live_output_connected", "gauge", "1 while an output's peer is connected.");
  for (const OutputStatus& o : st.outputs) {
    p.Sample("pagereel_live_output_connected", {{"output", o.id}}, int64_t{o.connected ? 1 : 0});
  }
  // SRT's own figures, for srt:// outputs.
  const bool any_srt = std::any_of(st.outputs.begin(), st.outputs.end(), [](const OutputStatus& o) { return o.srt; });
  if (any_srt) {
    p.Family("pagereel_live_output_srt_dropped_packets_total", "counter",
             "Packets the SRT sender gave up on, not acknowledged in time to be played.");
    for (const OutputStatus& o : st.outputs) {
      if (o.srt) p.Sample("pagereel_live_output_srt_dropped_packets_total", {{"output", o.id}}, o.srt_dropped_packets);
    }
    p.Family("pagereel_live_output_srt_retransmitted_packets_total", "counter",
             "Packets SRT sent again after the receiver reported them lost.");
    for (const OutputStatus& o : st.outputs) {
      if (o.srt) {
        p.Sample("pagereel_live_output_srt_retransmitted_packets_total", {{"output", o.id}},
                 o.srt_retransmitted_packets);
      }
    }
    p.Family("pagereel_live_output_srt_rtt_ms", "gauge", "The SRT connection's smoothed round trip.");
    for (const OutputStatus& o : st.outputs) {
      if (o.srt) p.Sample("pagereel_live_output_srt_rtt_ms", {{"output", o.id}}, o.srt_rtt_ms);
    }
  }

  if (!pressure_text.empty()) {
    if (Result<Pressure> psi = ParsePressure(pressure_text); psi.ok()) {
      p.Family("pagereel_live_cpu_pressure_avg10_percent", "gauge",
               "CPU pressure (PSI) over the last 10 s: time some (or all) runnable tasks waited "
               "for a CPU.");
      p.Sample("pagereel_live_cpu_pressure_avg10_percent", {{"kind", "some"}}, psi->some.avg10);
      if (psi->full)
        p.Sample("pagereel_live_cpu_pressure_avg10_percent", {{"kind", "full"}}, psi->full->avg10);
      p.Family("pagereel_live_cpu_pressure_seconds_total", "counter",
               "CPU pressure (PSI): stalled time since boot.");
      p.Sample("pagereel_live_cpu_pressure_seconds_total", {{"kind", "some"}},
               static_cast<double>(psi->some.total_us) / 1e6);
      if (psi->full) {
        p.Sample("pagereel_live_cpu_pressure_seconds_total", {{"kind", "full"}},
                 static_cast<double>(psi->full->total_us) / 1e6);
      }
    }
  }
  return p.Take();
}

Result<std::string> PreviewJpeg(const Picture& picture, int max_width, Backdrop backdrop) {
  const int width = picture.width;
  const int height = picture.height;
  if (width <= 0 || height <= 0 || max_width <= 0 ||
      picture.pixels.size() < static_cast<size_t>(width) * height * 4) {
    return InvalidArgumentError("no preview of a " + std::to_string(width) + "x" +
                                std::to_string(height) + " picture at most " +
                                std::to_string(max_width) + " wide");
  }
  // Box decimation by a whole factor: cheap, and plenty for a preview.
  const int factor = std::max(1, (width + max_width - 1) / max_width);
  const int out_width = std::max(1, width / factor);
  const int out_height = std::max(1, height / factor);
  const uint32_t count = static_cast<uint32_t>(factor * factor);
  std::vector<uint8_t> rgb(static_cast<size_t>(out_width) * out_height * 3);
  for (int y = 0; y < out_height; ++y) {
    for (int x = 0; x < out_width; ++x) {
      uint32_t sum[4] = {0, 0, 0, 0};
      for (int dy = 0; dy < factor; ++dy) {
        const uint8_t* p = picture.Row(y * factor + dy) + static_cast<size_t>(x) * factor * 4;
        for (int dx = 0; dx < factor * 4; dx += 4) {
          sum[0] += p[dx];
          sum[1] += p[dx + 1];
          sum[2] += p[dx + 2];
          sum[3] += p[dx + 3];
        }
      }
      const uint32_t alpha = (sum[3] + count / 2) / count;
      // Premultiplied over an opaque backdrop: colour + (1 - alpha) * backdrop.
      const uint32_t back =
          backdrop == Backdrop::kBlack ? 0 : (((x / 8) + (y / 8)) % 2 == 0 ? 153 : 204);
      uint8_t* out = &rgb[(static_cast<size_t>(y) * out_width + x) * 3];
      for (int c = 0; c < 3; ++c) {
        const uint32_t colour = (sum[c] + count / 2) / count;
        out[c] = static_cast<uint8_t>(
            std::min<uint32_t>(255, colour + ((255 - alpha) * back + 127) / 255));
      }
    }
  }
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  if (!tj) return InternalError("the JPEG encoder could not be set up");
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): turbojpeg's type.
  if (tjCompress2(tj.get(), rgb.data(), out_width, 0, out_height, TJPF_RGB, &jpeg, &size,
                  TJSAMP_420, 80, TJFLAG_FASTDCT) != 0) {
    std::string error = tjGetErrorStr2(tj.get());
    tjFree(jpeg);
    return InternalError("the preview could not be encoded as JPEG: " + error);
  }
  std::string bytes(reinterpret_cast<const char*>(jpeg), size);
  tjFree(jpeg);
  return bytes;
}

class HttpSession;
class WsSession;

struct ControlServer::Impl {
  // Constant after Listen().
  ControlOptions options;
  std::string host;
  uint16_t port = 0;
  bool loopback = false;
  http::SessionOptions session_options;

  // The I/O context is declared first so it is destroyed last: the handlers still queued
  // in `calls` hold sessions whose sockets belong to it.
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer push_timer{io};
  asio::io_context calls{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> calls_work;
  std::thread io_thread;
  std::thread calls_thread;
  std::promise<void> io_ended;

  // Set by Serve(); constant afterwards.
  Engine* engine = nullptr;
  std::set<std::string> source_ids;

  std::atomic<bool> stopping{false};
  bool served = false;   // The owner's thread only.
  bool stopped = false;  // The owner's thread only.

  // The I/O thread only.
  std::vector<std::weak_ptr<HttpSession>> http_sessions;
  std::vector<std::weak_ptr<WsSession>> ws_sessions;
  struct CachedJpeg {
    std::shared_ptr<const Picture> picture;  // Held, so its address names it.
    std::string jpeg;
  };
  CachedJpeg program_jpeg;
  std::map<std::string, CachedJpeg> thumbnails;
  std::map<std::string, CachedJpeg> previews;

  void Accept();
  void SchedulePush();
  void PushStatus();
  std::string ReadPressure() const;
  std::string StatusText() { return StatusJson(engine->CurrentStatus(), ReadPressure()); }
  bool Authorized(std::string_view authorization) const {
    return http::IsAuthorized(authorization, options.token);
  }
  // Runs `command`; `done` is called on the I/O thread with the outcome.
  void Execute(Command command, std::function<void(Outcome)> done);
  // A WebSocket message; `done` gets the reply, on the I/O thread.
  void HandleMessage(const std::string& text, std::function<void(json)> done);
  // The preview of `picture`, encoded once per picture.
  Result<std::string> Preview(CachedJpeg& cache, std::shared_ptr<const Picture> picture, int width,
                              Backdrop backdrop);
};

std::string ControlServer::Impl::ReadPressure() const {
  if (options.pressure_file.empty()) return "";
  std::ifstream in(options.pressure_file);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<std::string> ControlServer::Impl::Preview(CachedJpeg& cache,
                                                 std::shared_ptr<const Picture> picture, int width,
                                                 Backdrop backdrop) {
  if (cache.picture != picture || cache.jpeg.empty()) {
    PR_ASSIGN_OR_RETURN(std::string jpeg, PreviewJpeg(*picture, width, backdrop));
    cache = {std::move(picture), std::move(jpeg)};
  }
  return cache.jpeg;
}

void ControlServer::Impl::Execute(Command command, std::function<void(Outcome)> done) {
  if (source_ids.count(command.source) == 0) {
    std::string known;
    for (const std::string& id : source_ids) known += (known.empty() ? "" : ", ") + id;
    return done(Failure(
        404, "no source is called '" + Shown(command.source) + "'; the sources are " + known));
  }
  if (command.kind == CommandKind::kShow || command.kind == CommandKind::kHide) {
    const bool visible = command.kind == CommandKind::kShow;
    Status set = engine->SetVisible(command.source, visible, command.fade);
    if (!set.ok()) return done(Failure(set));
    return done(
        {200,
         {{"ok", true}, {"source", command.source}, {"visible", visible}, {"fade", command.fade}}});
  }
  // Calls and navigations talk to the browser: on the calls thread, one at a time.
  asio::post(calls, [this, command = std::move(command), done = std::move(done)]() mutable {
    Outcome outcome;
    if (stopping) {
      outcome = Failure(503, "the show is ending");
    } else if (command.kind == CommandKind::kCall) {
      Result<std::string> value = engine->CallSource(command.source, command.expression);
      if (!value.ok()) {
        outcome = Failure(value.status());
      } else {
        json result = json::parse(*value, nullptr, false);
        if (result.is_discarded()) result = *value;
        outcome = {200, {{"ok", true}, {"source", command.source}, {"result", std::move(result)}}};
      }
    } else {
      Status navigated = engine->Navigate(command.source, command.url);
      outcome = navigated.ok() ? Outcome{200, {{"ok", true}, {"source", command.source}}}
                               : Failure(navigated);
      if (navigated.ok() && !command.url.empty()) outcome.body["url"] = command.url;
    }
    asio::post(io, [done = std::move(done), outcome = std::move(outcome)]() mutable {
      done(std::move(outcome));
    });
  });
}

namespace {

// The reply to a WebSocket command: the outcome's body, tagged.
json Reply(const json& id, const std::string& command, Outcome outcome) {
  json r = {{"type", "reply"}};
  if (!id.is_null()) r["id"] = id;
  if (!command.empty()) r["command"] = command;
  if (outcome.status != 200) r["status"] = outcome.status;
  for (auto& [key, value] : outcome.body.items()) r[key] = std::move(value);
  return r;
}

}  // namespace

void ControlServer::Impl::HandleMessage(const std::string& text, std::function<void(json)> done) {
  Result<json> message = ParseJson(text, "the message");
  if (!message.ok()) return done(Reply(nullptr, "", Failure(message.status())));
  json fields = std::move(message).value();
  if (!fields.is_object()) {
    return done(Reply(nullptr, "",
                      Failure(400,
                              "a message is a JSON object such as "
                              "{\"command\":\"show\",\"source\":\"ID\"}")));
  }
  json id = nullptr;
  if (fields.contains("id")) {
    id = fields["id"];
    fields.erase("id");
  }
  if (!fields.contains("command") || !fields["command"].is_string()) {
    return done(Reply(id, "",
                      Failure(400,
                              "the message has no \"command\": show, hide, call, "
                              "navigate or reload")));
  }
  const std::string name = fields["command"].get<std::string>();
  fields.erase("command");
  const std::optional<CommandKind> kind = CommandNamed(name);
  if (!kind) {
    return done(Reply(id, "",
                      Failure(400, "unknown command '" + Shown(name) +
                                       "'; the commands are show, hide, call, navigate "
                                       "and reload")));
  }
  if (!fields.contains("source") || !fields["source"].is_string()) {
    return done(
        Reply(id, name, Failure(400, "the " + name + " command needs \"source\": a source's id")));
  }
  const std::string source = fields["source"].get<std::string>();
  fields.erase("source");
  if (source_ids.count(source) == 0) {
    return done(Reply(id, name, Failure(404, "no source is called '" + Shown(source) + "'")));
  }
  Result<Command> command = ParseCommand(*kind, source, fields);
  if (!command.ok()) return done(Reply(id, name, Failure(command.status())));
  Execute(std::move(command).value(), [id, name, done = std::move(done)](Outcome outcome) {
    done(Reply(id, name, std::move(outcome)));
  });
}

// One WebSocket client: commands in, replies and status pushes out. Beast allows one write
// at a time, so what is sent waits in a queue.
class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(tcp::socket socket, ControlServer::Impl& server)
      : ws_(std::move(socket)), server_(server) {}

  void Accept(http::Request request) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& r) { r.set(beast::http::field::server, "pagereel"); }));
    ws_.read_message_max(kMaxBodyBytes);
    ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
      if (ec || self->server_.stopping) return;
      self->server_.ws_sessions.push_back(self);
      self->Send(self->server_.StatusText(), /*droppable=*/true);  // At once, not in a second.
      self->Read();
    });
  }

  // Queues a text message. A status push is dropped when the client has not read the last
  // ones; replies are always queued.
  void Send(std::string text, bool droppable) {
    if (closing_) return;
    if (droppable && queue_.size() >= kMaxQueuedPushes) return;
    queue_.push_back(std::move(text));
    if (queue_.size() == 1) WriteNext();
  }

  // Sends a close frame once the queue is written.
  void Close() {
    if (closing_) return;
    closing_ = true;
    if (queue_.empty()) SendClose();
  }

 private:
  void Read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return;  // Closed, or a message over the limit: the session ends.
      std::string text = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      self->server_.HandleMessage(text, [self](json reply) { self->Send(Dump(reply), false); });
      self->Read();
    });
  }

  void WriteNext() {
    ws_.text(true);
    ws_.async_write(asio::buffer(queue_.front()),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->queue_.pop_front();
                      if (ec) {
                        self->closing_ = true;
                        self->queue_.clear();
                        return;
                      }
                      if (!self->queue_.empty()) return self->WriteNext();
                      if (self->closing_) self->SendClose();
                    });
  }

  void SendClose() {
    ws_.async_close(websocket::close_code::going_away,
                    [self = shared_from_this()](beast::error_code) {});
  }

  websocket::stream<beast::tcp_stream> ws_;
  ControlServer::Impl& server_;
  beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  bool closing_ = false;
};

// One HTTP client connection (http::Session reads the requests, keep-alive, and writes
// the answers with Cache-Control: no-store): answers each request on the I/O thread, or
// hands a browser call to the calls thread and answers when it is back; an upgrade on /ws
// becomes a WsSession.
class HttpSession : public http::Session {
 public:
  HttpSession(tcp::socket socket, ControlServer::Impl& server)
      : http::Session(std::move(socket), server.session_options), server_(server) {}

 private:
  std::shared_ptr<HttpSession> Self() {
    return std::static_pointer_cast<HttpSession>(shared_from_this());
  }

  Response ReadError(int status, const std::string& detail) override {
    return Json(Failure(status, detail));
  }

  Response Json(const Outcome& outcome) {
    Response r{static_cast<beast::http::status>(outcome.status), 11};
    r.set(beast::http::field::content_type, "application/json");
    r.body() = Dump(outcome.body) + "\n";
    if (outcome.status == 401) r.set(beast::http::field::www_authenticate, "Bearer");
    return r;
  }

  Response Body(std::string content_type, std::string body) {
    Response r{beast::http::status::ok, 11};
    r.set(beast::http::field::content_type, std::move(content_type));
    r.body() = std::move(body);
    return r;
  }

  Response NotAllowed(const char* allowed) {
    Response r = Json(Failure(405, std::string("this route takes ") + allowed));
    r.set(beast::http::field::allow, allowed);
    return r;
  }

  // A page of another site must not drive the show through a visitor's browser: the Host
  // of a loopback server must name this machine (no DNS rebinding), and a browser's Origin
  // must be this server.
  std::optional<Outcome> CheckCaller(const http::Request& request) const {
    const std::string_view host = request[beast::http::field::host];
    if (server_.loopback && !IsLoopbackHost(host)) {
      return Failure(403, "the Host header '" + Shown(host) +
                              "' does not name this machine; the control server on a loopback "
                              "address answers only requests for localhost, 127.0.0.1 or [::1]");
    }
    const std::string_view origin = request[beast::http::field::origin];
    if (!origin.empty() && origin != "http://" + std::string(host)) {
      return Failure(403, "requests from pages of " + Shown(origin) +
                              " are refused; only the operator page served here may send "
                              "commands from a browser");
    }
    return std::nullopt;
  }

  void HandleRequest() override {
    const http::Request& request = this->request();
    const std::string_view target = request.target();
    const size_t question = target.find('?');
    const std::string_view path = target.substr(0, question);
    const std::string_view query =
        question == std::string_view::npos ? "" : target.substr(question + 1);
    const beast::http::verb method = request.method();
    const bool get = method == beast::http::verb::get;

    if (std::optional<Outcome> refused = CheckCaller(request)) return Write(Json(*refused));
    if (websocket::is_upgrade(request)) {
      if (path != "/ws") return Write(Json(Failure(404, "WebSocket connections go to /ws")));
      std::optional<std::string> token = QueryValue(query, "token");
      if (!server_.Authorized(request[beast::http::field::authorization]) &&
          !(token && server_.Authorized("Bearer " + *token))) {
        return Write(Json(Failure(401,
                                  "this show's control needs its token: an \"Authorization: "
                                  "Bearer TOKEN\" header, or /ws?token=TOKEN")));
      }
      std::make_shared<WsSession>(stream().release_socket(), server_)
          ->Accept(std::move(this->request()));
      return;
    }
    if (path == "/" || path == "/index.html") {
      if (!get) return Write(NotAllowed("GET"));
      return Write(Body("text/html; charset=utf-8", kOperatorPage));
    }
    if (path == "/status") {
      if (!get) return Write(NotAllowed("GET"));
      return Write(Body("application/json", server_.StatusText()));
    }
    if (path == "/metrics") {
      if (!get) return Write(NotAllowed("GET"));
      return Write(Body("text/plain; version=0.0.4; charset=utf-8",
                        MetricsText(server_.engine->CurrentStatus(), server_.ReadPressure())));
    }
    if (path == "/ws") {
      Response r = Json(Failure(426, "/ws is a WebSocket: connect with a WebSocket client"));
      r.set(beast::http::field::upgrade, "websocket");
      return Write(std::move(r));
    }
    if (!server_.Authorized(request[beast::http::field::authorization])) {
      return Write(Json(Failure(401,
                                "this show's control needs its token: send \"Authorization: "
                                "Bearer TOKEN\"")));
    }
    if (path == "/program.jpg") {
      if (!get) return Write(NotAllowed("GET"));
      std::shared_ptr<const Picture> program = server_.engine->Program();
      if (!program) {
        Response r = Json(Failure(503, "no program picture yet: the show has not ticked"));
        r.set(beast::http::field::retry_after, "1");
        return Write(std::move(r));
      }
      Result<std::string> jpeg = server_.Preview(server_.program_jpeg, std::move(program),
                                                 kProgramPreviewWidth, Backdrop::kBlack);
      if (!jpeg.ok()) return Write(Json(Failure(jpeg.status())));
      return Write(Body("image/jpeg", std::move(jpeg).value()));
    }
    constexpr std::string_view kSources = "/sources/";
    if (path.starts_with(kSources)) {
      const std::string_view rest = path.substr(kSources.size());
      const size_t slash = rest.find('/');
      std::optional<std::string> id = PercentDecode(rest.substr(0, slash), PlusSign::kItself);
      const std::string_view action = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
      if (!id)
        return Write(Json(Failure(400, "the source id in " + Shown(path) + " has a bad %-escape")));
      if (server_.source_ids.count(*id) == 0) {
        return Write(Json(Failure(404, "no source is called '" + Shown(*id) + "'")));
      }
      if (action == "thumbnail.jpg" || action == "preview.jpg") {
        if (!get) return Write(NotAllowed("GET"));
        std::shared_ptr<const Picture> picture = server_.engine->SourcePicture(*id);
        if (!picture) {
          Response r = Json(Failure(503, "source '" + *id + "' has made no picture yet"));
          r.set(beast::http::field::retry_after, "1");
          return Write(std::move(r));
        }
        const bool thumbnail = action == "thumbnail.jpg";
        Result<std::string> jpeg = server_.Preview(
            thumbnail ? server_.thumbnails[*id] : server_.previews[*id], std::move(picture),
            thumbnail ? kThumbnailWidth : kSourcePreviewWidth, Backdrop::kCheckerboard);
        if (!jpeg.ok()) return Write(Json(Failure(jpeg.status())));
        return Write(Body("image/jpeg", std::move(jpeg).value()));
      }
      if (std::optional<CommandKind> kind = CommandNamed(action)) {
        if (method != beast::http::verb::post) return Write(NotAllowed("POST"));
        const std::string& body = request.body();
        json fields = json::object();
        if (body.find_first_not_of(" \t\r\n") != std::string::npos) {
          Result<json> parsed = ParseJson(body, "the body");
          if (!parsed.ok()) return Write(Json(Failure(parsed.status())));
          fields = std::move(parsed).value();
        }
        Result<Command> command = ParseCommand(*kind, *id, fields);
        if (!command.ok()) return Write(Json(Failure(command.status())));
        server_.Execute(std::move(command).value(), [self = Self()](Outcome outcome) {
          self->Write(self->Json(outcome));
        });
        return;
      }
      return Write(Json(Failure(404, "no route " + Shown(path) +
                                         "; a source takes POST show, hide, call, navigate, "
                                         "reload and GET thumbnail.jpg, preview.jpg")));
    }
    Write(Json(Failure(404, "no route " + Shown(path) +
                                "; the routes are /, /status, /metrics, /program.jpg, /ws and "
                                "/sources/ID/{show,hide,call,navigate,reload,thumbnail.jpg,preview.jpg}")));
  }

  ControlServer::Impl& server_;
};

void ControlServer::Impl::Accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    } else if (!stopping) {
      std::erase_if(http_sessions, [](const auto& s) { return s.expired(); });
      auto session = std::make_shared<HttpSession>(std::move(socket), *this);
      http_sessions.push_back(session);
      session->Read();
    }
    Accept();
  });
}

void ControlServer::Impl::SchedulePush() {
  push_timer.expires_after(options.status_push_every);
  push_timer.async_wait([this](beast::error_code ec) {
    if (ec || stopping) return;
    PushStatus();
    SchedulePush();
  });
}

void ControlServer::Impl::PushStatus() {
  std::erase_if(ws_sessions, [](const auto& s) { return s.expired(); });
  if (ws_sessions.empty()) return;
  const std::string text = StatusText();
  for (const auto& weak : ws_sessions) {
    if (std::shared_ptr<WsSession> s = weak.lock()) s->Send(text, /*droppable=*/true);
  }
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ControlServer::~ControlServer() { Stop(); }

Result<std::unique_ptr<ControlServer>> ControlServer::Listen(const ControlOptions& options) {
  const std::string& listen = options.listen;
  const std::optional<tcp::endpoint> endpoint =
      http::ParseListenAddress(listen, http::HostNames::kLocalhost);
  if (!endpoint) {
    return InvalidArgumentError(
        "the control address '" + Shown(listen) +
        "' is not HOST:PORT with a numeric address or localhost "
        "(127.0.0.1:8090, [::1]:8090, 0.0.0.0:8090; port 0 picks a free one)");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.status_push_every <= std::chrono::milliseconds(0)) {
    impl->options.status_push_every = std::chrono::milliseconds(1000);
  }
  http::SessionOptions& session = impl->session_options;
  session.max_body_bytes = kMaxBodyBytes;
  session.body_too_large = "the body is larger than 1 MiB, the most a command may be";
  session.close = http::CloseMode::kAtOnce;
  session.no_store = true;
  session.stopping = &impl->stopping;
  PR_RETURN_IF_ERROR(http::Listen(impl->acceptor, *endpoint, listen));
  impl->host = endpoint->address().to_string();
  impl->port = impl->acceptor.local_endpoint().port();
  impl->loopback = endpoint->address().is_loopback();
  return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl)));
}

Result<std::unique_ptr<ControlServer>> ControlServer::Start(Engine& engine,
                                                            const ControlOptions& options) {
  PR_ASSIGN_OR_RETURN(std::unique_ptr<ControlServer> server, Listen(options));
  server->Serve(engine);
  return server;
}

void ControlServer::Serve(Engine& engine) {
  Impl& s = *impl_;
  if (s.served || s.stopped) return;
  s.served = true;
  s.engine = &engine;
  for (const SourceStatus& source : engine.CurrentStatus().sources) s.source_ids.insert(source.id);
  s.Accept();
  s.SchedulePush();
  s.calls_work.emplace(s.calls.get_executor());
  s.io_thread = std::thread([&s] {
    SetCurrentThreadName("live-control");
    http::RunIo(s.io, [](std::string_view what) {
      std::fprintf(stderr, "live control: a connection was dropped: its handler threw: %.*s\n",
                   static_cast<int>(what.size()), what.data());
    });
    s.io_ended.set_value();
  });
  s.calls_thread = std::thread([&s] {
    SetCurrentThreadName("live-ctl-calls");
    s.calls.run();
  });
}

void ControlServer::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  s.stopping = true;
  if (!s.served) {
    beast::error_code ignored;
    s.acceptor.close(ignored);
    return;
  }
  std::promise<void> closed;
  asio::post(s.io, [&s, &closed] {
    beast::error_code ignored;
    s.acceptor.close(ignored);
    s.push_timer.cancel();
    for (const auto& weak : s.ws_sessions) {
      if (std::shared_ptr<WsSession> ws = weak.lock()) ws->Close();
    }
    for (const auto& weak : s.http_sessions) {
      if (std::shared_ptr<HttpSession> http = weak.lock()) http->Close();
    }
    closed.set_value();
  });
  closed.get_future().wait();
  // A browser call in progress finishes (the engine bounds it); queued ones are dropped.
  s.calls_work.reset();
  s.calls.stop();
  s.calls_thread.join();
  // The I/O thread ends by itself once the close frames are answered.
  if (s.io_ended.get_future().wait_for(kCloseGrace) != std::future_status::ready) s.io.stop();
  s.io_thread.join();
}

uint16_t ControlServer::port() const { return impl_->port; }
const std::string& ControlServer::host() const { return impl_->host; }
bool ControlServer::loopback() const { return impl_->loopback; }

std::string ControlServer::Url() const {
  const bool v6 = impl_->host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + impl_->host + "]" : impl_->host) + ":" +
         std::to_string(impl_->port) + "/";
}

}  // namespace pagereel::live
