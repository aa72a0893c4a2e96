#include "encode/srt_url.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "base/percent_encoding.h"
#include "base/query.h"

namespace pagereel::encode {
namespace {

enum class Kind {
  kMode,
  kLatency,      // Microseconds, to one of the latency fields.
  kTimeMs,       // connect_timeout.
  kTimeUs,       // listen_timeout, timeout.
  kLinger,
  kPeerIdle,
  kPayload,
  kPassphrase,
  kKeyLength,
  kEnforced,
  kStreamId,
  kFlag,         // An SRT socket option, the value as written.
  kFlagUsToMs,   // An SRT socket option in ms, written in microseconds.
  kFlagBool,
  kLiveOnly,     // transtype: only `live`.
  kMessageOnly,  // messageapi: only on.
};

struct Option {
  Kind kind;
  const char* srt_name = "";  // For kFlag*: the SRTO_ name without its prefix.
};

// FFmpeg's names (libavformat/libsrt.c) and SRT's peeridletimeo.
const std::map<std::string, Option, std::less<>>& Options() {
  static const auto* options = new std::map<std::string, Option, std::less<>>{
      {"mode", {Kind::kMode}},
      {"latency", {Kind::kLatency}},
      {"tsbpddelay", {Kind::kLatency}},
      {"rcvlatency", {Kind::kLatency}},
      {"peerlatency", {Kind::kLatency}},
      {"connect_timeout", {Kind::kTimeMs}},
      {"listen_timeout", {Kind::kTimeUs}},
      {"timeout", {Kind::kTimeUs}},
      {"linger", {Kind::kLinger}},
      {"peeridletimeo", {Kind::kPeerIdle}},
      {"pkt_size", {Kind::kPayload}},
      {"payload_size", {Kind::kPayload}},
      {"passphrase", {Kind::kPassphrase}},
      {"pbkeylen", {Kind::kKeyLength}},
      {"enforced_encryption", {Kind::kEnforced}},
      {"streamid", {Kind::kStreamId}},
      {"srt_streamid", {Kind::kStreamId}},
      {"maxbw", {Kind::kFlag, "MAXBW"}},
      {"inputbw", {Kind::kFlag, "INPUTBW"}},
      {"oheadbw", {Kind::kFlag, "OHEADBW"}},
      {"sndbuf", {Kind::kFlag, "SNDBUF"}},
      {"rcvbuf", {Kind::kFlag, "RCVBUF"}},
      {"send_buffer_size", {Kind::kFlag, "UDP_SNDBUF"}},
      {"recv_buffer_size", {Kind::kFlag, "UDP_RCVBUF"}},
      {"mss", {Kind::kFlag, "MSS"}},
      {"ffs", {Kind::kFlag, "FC"}},
      {"ipttl", {Kind::kFlag, "IPTTL"}},
      {"iptos", {Kind::kFlag, "IPTOS"}},
      {"lossmaxttl", {Kind::kFlag, "LOSSMAXTTL"}},
      {"minversion", {Kind::kFlag, "MINVERSION"}},
      {"kmrefreshrate", {Kind::kFlag, "KMREFRESHRATE"}},
      {"kmpreannounce", {Kind::kFlag, "KMPREANNOUNCE"}},
      {"snddropdelay", {Kind::kFlagUsToMs, "SNDDROPDELAY"}},
      {"tlpktdrop", {Kind::kFlagBool, "TLPKTDROP"}},
      {"nakreport", {Kind::kFlagBool, "NAKREPORT"}},
      {"tsbpd", {Kind::kFlagBool, "TSBPDMODE"}},
      {"transtype", {Kind::kLiveOnly}},
      {"messageapi", {Kind::kMessageOnly}},
  };
  return *options;
}

std::optional<int64_t> Integer(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<bool> Boolean(std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return std::nullopt;
}

}  // namespace

Result<SrtUrl> ParseSrtUrl(std::string_view url, const std::vector<std::pair<std::string, std::string>>& extra) {
  const std::string form = "srt://HOST:PORT[?OPTION=VALUE&...] (or srt://:PORT?mode=listener)";
  auto refuse = [&](const std::string& what) {
    return InvalidArgumentError("'" + std::string(url) + "': " + what);
  };
  constexpr std::string_view kScheme = "srt://";
  if (url.substr(0, kScheme.size()) != kScheme) return refuse("not an srt:// URL; write " + form);
  const std::string_view rest = url.substr(kScheme.size());
  const size_t query_at = rest.find('?');
  std::string_view authority = rest.substr(0, query_at);
  if (!authority.empty() && authority.back() == '/') authority.remove_suffix(1);
  SrtUrl out;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return refuse("its IPv6 host has no closing ']'");
    out.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') port = authority.substr(close + 2);
    else if (close + 1 < authority.size()) return refuse("'" + std::string(authority) + "' is not HOST:PORT");
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    out.host = std::string(authority.substr(0, colon));
    port = authority.substr(colon + 1);
  } else {
    out.host = std::string(authority);
  }
  if (port.empty()) return refuse("SRT has no default port: give one; write " + form);
  const std::optional<int64_t> port_number = Integer(port);
  if (!port_number || *port_number < 1 || *port_number > 65535) {
    return refuse("port '" + std::string(port) + "' is not a number from 1 to 65535");
  }
  out.port = static_cast<int>(*port_number);

  // The caller's options first, then the URL's, so the URL's win.
  std::vector<std::pair<std::string, std::string>> options = extra;
  if (query_at != std::string_view::npos) {
    for (const QueryPair& pair : SplitQuery(rest.substr(query_at + 1))) {
      const std::optional<std::string> value = PercentDecode(pair.value, PlusSign::kItself);
      if (!value) return refuse("option '" + std::string(pair.name) + "' has a '%' not followed by two hex digits");
      options.emplace_back(std::string(pair.name), *value);
    }
  }
  for (const auto& option_pair : options) {
    const std::string& name = option_pair.first;
    const std::string& value = option_pair.second;
    const auto found = Options().find(name);
    if (found == Options().end()) {
      std::string known;
      for (const auto& [known_name, unused] : Options()) known += (known.empty() ? "" : ", ") + known_name;
      return refuse("unknown SRT option '" + name + "' (known: " + known + ")");
    }
    const Option& option = found->second;
    const std::optional<int64_t> number = Integer(value);
    auto need_number = [&](int64_t low, int64_t high) -> Status {
      if (!number || *number < low || *number > high) {
        return refuse("option " + name + "=" + value + ": give a whole number from " + std::to_string(low) +
                      " to " + std::to_string(high));
      }
      return Status::Ok();
    };
    switch (option.kind) {
      case Kind::kMode:
        if (value == "listener") {
          out.listener = true;
        } else if (value == "caller") {
          out.listener = false;
        } else if (value == "rendezvous") {
          return refuse("mode=rendezvous is not supported: pagereel calls (mode=caller, the default) or "
                        "waits for the receiver to call (mode=listener)");
        } else {
          return refuse("mode=" + value + ": write mode=caller (the default) or mode=listener");
        }
        break;
      case Kind::kLatency:
        PR_RETURN_IF_ERROR(need_number(0, 60'000'000));
        if (name == "rcvlatency") out.rcvlatency_us = *number;
        else if (name == "peerlatency") out.peerlatency_us = *number;
        else out.latency_us = *number;
        break;
      case Kind::kTimeMs:
        PR_RETURN_IF_ERROR(need_number(1, 3'600'000));
        out.connect_timeout_ms = *number;
        break;
      case Kind::kTimeUs:
        PR_RETURN_IF_ERROR(need_number(-1, int64_t{3'600'000'000}));
        (name == "timeout" ? out.timeout_us : out.listen_timeout_us) = *number;
        break;
      case Kind::kLinger:
        PR_RETURN_IF_ERROR(need_number(0, 3600));
        out.linger_s = *number;
        break;
      case Kind::kPeerIdle:
        PR_RETURN_IF_ERROR(need_number(100, 3'600'000));
        out.peer_idle_ms = static_cast<int>(*number);
        break;
      case Kind::kPayload:
        PR_RETURN_IF_ERROR(need_number(188, 1456));
        out.payload_size = static_cast<int>(*number);
        break;
      case Kind::kPassphrase:
        if (!value.empty() && (value.size() < 10 || value.size() > 79)) {
          return refuse("option passphrase: SRT takes 10 to 79 characters (or none)");
        }
        out.passphrase = value;
        break;
      case Kind::kKeyLength:
        if (value != "0" && value != "16" && value != "24" && value != "32") {
          return refuse("option pbkeylen=" + value + ": give 16, 24 or 32 (bytes)");
        }
        out.pbkeylen = *number;
        break;
      case Kind::kEnforced:
        if (!Boolean(value)) return refuse("option " + name + "=" + value + ": give 0 or 1");
        out.enforced_encryption = Boolean(value);
        break;
      case Kind::kStreamId:
        if (value.size() > 512) return refuse("option " + name + ": SRT takes at most 512 characters");
        out.streamid = value;
        break;
      case Kind::kFlag:
        PR_RETURN_IF_ERROR(need_number(-1, int64_t{1} << 40));
        out.flags.emplace_back(option.srt_name, *number);
        break;
      case Kind::kFlagUsToMs:
        PR_RETURN_IF_ERROR(need_number(-1, 3'600'000'000));
        out.flags.emplace_back(option.srt_name, *number < 0 ? *number : *number / 1000);
        break;
      case Kind::kFlagBool:
        if (!Boolean(value)) return refuse("option " + name + "=" + value + ": give 0 or 1");
        out.flags.emplace_back(option.srt_name, *Boolean(value) ? 1 : 0);
        break;
      case Kind::kLiveOnly:
        if (value != "live" && value != "0") {
          return refuse("option transtype=" + value + ": a show is sent in SRT's live mode (transtype=live)");
        }
        break;
      case Kind::kMessageOnly:
        if (Boolean(value) != true) return refuse("option messageapi=" + value + ": live mode sends messages (messageapi=1)");
        break;
    }
  }
  if (out.host.empty() && !out.listener) {
    return refuse("it names no host; write " + form);
  }
  return out;
}

int64_t SrtLatencyMs(const SrtUrl& url) {
  if (url.latency_us) return std::max<int64_t>(*url.latency_us / 1000, 0);
  if (url.peerlatency_us) return std::max<int64_t>(*url.peerlatency_us / 1000, 0);
  return 120;
}

}  // namespace pagereel::encode
