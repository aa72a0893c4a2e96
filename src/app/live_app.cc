#include "app/live_app.h"

#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "app/render_app.h"
#include "encode/srt_url.h"
#include "http/url.h"
#include "live/amcp_server.h"
#include "live/control_server.h"
#include "live/engine.h"
#include "probe/host.h"

namespace pagereel::app {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop = true; }

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void PrintStatusLine(const live::ShowStatus& st) {
  std::string line = "[" + std::to_string(static_cast<int64_t>(st.seconds)) + " s] ticks " +
                     std::to_string(st.clock.ticks) + ", late " + std::to_string(st.clock.late);
  for (const live::SourceStatus& s : st.sources) {
    line += "; " + s.id + " " + std::to_string(s.frames) + " new, " + std::to_string(s.repeated) +
            " repeated";
    if (s.restarts > 0) line += ", " + std::to_string(s.restarts) + " restarts";
  }
  for (const live::OutputStatus& o : st.outputs) {
    line += "; " + o.id + " " + std::to_string(o.frames) + " frames";
    if (o.dropped > 0) line += ", " + std::to_string(o.dropped) + " dropped";
    if (!o.connected) line += " (not connected)";
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

void PrintSummary(const live::ShowStatus& st) {
  std::fprintf(stderr, "\nshow ended after %lld ticks (%.1f s)\n",
               static_cast<long long>(st.clock.ticks), st.seconds);
  std::fprintf(stderr,
               "  clock: %s; %lld late ticks; phase p50 %.0f us, p99 %.0f us, max %.0f us; "
               "compositing p50 %.2f ms, p99 %.2f ms\n",
               st.clock.scheduling.c_str(), static_cast<long long>(st.clock.late),
               st.clock.phase_p50_us, st.clock.phase_p99_us, st.clock.phase_max_us,
               st.clock.mix_p50_us / 1000, st.clock.mix_p99_us / 1000);
  std::fprintf(stderr, "  sound: %s; %lld samples at 48 kHz\n", st.sound.c_str(),
               static_cast<long long>(st.clock.sound_samples));
  for (const live::SourceStatus& s : st.sources) {
    std::fprintf(stderr,
                 "  source %s (worker %d, phase %.3f): %lld new pictures (%.1f/s, %.1f %% of ticks), %lld repeated, "
                 "%lld discarded, %lld ticks skipped, %lld restarts, pictures ready %.1f ms %s "
                 "their ticks; draw p50 %.1f ms, p99 %.1f ms, decode p50 %.1f ms%s\n",
                 s.id.c_str(), s.worker, s.phase, static_cast<long long>(s.frames), s.fps_show,
                 100 * s.freshness_show, static_cast<long long>(s.repeated), static_cast<long long>(s.discarded),
                 static_cast<long long>(s.skipped), static_cast<long long>(s.restarts),
                 std::abs(s.arrival_ms), s.arrival_ms <= 0 ? "before" : "after", s.draw_p50_ms, s.draw_p99_ms, s.prepare_p50_ms,
                 s.step > 1 ? ("; drawn every " + std::to_string(s.step) + " ticks at the end").c_str() : "");
    if (s.sound_underruns > 0 || s.sound_overruns > 0 || s.sound_gaps > 0) {
      std::fprintf(stderr,
                   "    its sound: %lld gaps (%lld samples of silence: its browser's stream ran dry), %lld underruns "
                   "(%lld samples of silence), %lld overruns (%lld samples dropped)\n",
                   static_cast<long long>(s.sound_gaps), static_cast<long long>(s.sound_gap_samples),
                   static_cast<long long>(s.sound_underruns), static_cast<long long>(s.sound_padded),
                   static_cast<long long>(s.sound_overruns), static_cast<long long>(s.sound_dropped));
    }
    if (s.page_errors > 0) {
      std::fprintf(stderr, "    its page threw %lld uncaught exceptions\n", static_cast<long long>(s.page_errors));
    }
    if (!s.last_error.empty()) std::fprintf(stderr, "    last error: %s\n", s.last_error.c_str());
  }
  for (const live::OutputStatus& o : st.outputs) {
    std::fprintf(stderr, "  output %s -> %s: %lld frames, %lld dropped, %lld reconnects, %.0f kb/s\n",
                 o.id.c_str(), o.target.c_str(), static_cast<long long>(o.frames),
                 static_cast<long long>(o.dropped), static_cast<long long>(o.reconnects),
                 o.bitrate_kbps);
    if (!o.last_error.empty()) std::fprintf(stderr, "    last error: %s\n", o.last_error.c_str());
  }
}

// A udp://, srt:// or rtmp:// URL's host and port, checked before the show starts: a port
// outside 1-65535, or none where the protocol has no default, would otherwise be retried
// for the whole show. The message names the output and says what to write.
Status CheckStreamUrl(const std::string& destination, const std::string& scheme) {
  const size_t start = scheme.size() + 3;
  const size_t end = destination.find_first_of("/?", start);
  const std::string authority = destination.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const std::string query = end == std::string::npos ? "" : destination.substr(end);
  const bool listener = query.find("mode=listener") != std::string::npos;
  const std::string form = scheme == "rtmp" ? "rtmp://HOST[:PORT]/APP/KEY"
                           : scheme == "srt" ? "srt://HOST:PORT (or srt://:PORT?mode=listener)"
                                             : "udp://HOST:PORT";
  auto refuse = [&](const std::string& what) {
    return InvalidArgumentError("output '" + destination + "': " + what + "; write " + form);
  };
  std::string host = authority;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return refuse("its IPv6 host has no closing ']'");
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return refuse("'" + authority + "' is not HOST:PORT");
      port = authority.substr(close + 2);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return refuse("it has a ':' but no port");
  }
  if (host.empty() && !(scheme == "srt" && listener)) return refuse("it names no host");
  if (port.empty()) {
    if (scheme == "rtmp") return Status::Ok();  // 1935.
    return refuse(scheme == "udp" ? "UDP has no default port: give one"
                                  : "SRT has no default port: give one");
  }
  if (!http::ParsePort(port)) return refuse("port '" + port + "' is not a number from 1 to 65535");
  return Status::Ok();
}

}  // namespace

Result<live::OutputSpec> OutputForDestination(const std::string& destination, const std::string& codec_name) {
  using encode::Container;
  using encode::Sink;
  live::OutputSpec out;
  out.id = destination;
  encode::StreamSpec& s = out.stream;
  const std::string lower = Lower(destination);
  const std::string codec = Lower(codec_name);
  if (codec == "h264" || codec == "h.264") {
    s.codec = encode::Codec::kH264;
  } else if (codec == "prores") {
    s.codec = encode::Codec::kProRes;
  } else if (codec == "ffv1") {
    s.codec = encode::Codec::kFfv1;
  } else {
    return InvalidArgumentError("codec '" + codec_name + "' for " + destination +
                                ": use h264, prores or ffv1");
  }
  auto url = [&](Container container) {
    s.container = container;
    s.sink = Sink{Sink::Kind::kUrl, destination, nullptr};
  };
  for (const std::string scheme : {"udp", "srt", "rtmp"}) {
    if (lower.rfind(scheme + "://", 0) == 0) PR_RETURN_IF_ERROR(CheckStreamUrl(destination, scheme));
  }
  if (lower.rfind("udp://", 0) == 0) {
    url(Container::kMpegTs);
    // Seven transport packets per datagram, as receivers expect.
    if (destination.find("pkt_size") == std::string::npos) {
      s.sink.target += destination.find('?') == std::string::npos ? "?pkt_size=1316" : "&pkt_size=1316";
    }
  } else if (lower.rfind("srt://", 0) == 0) {
    // Its options too: one pagereel does not know (a mistyped passphrase) is refused by name.
    if (Result<encode::SrtUrl> srt = encode::ParseSrtUrl(destination); !srt.ok()) {
      return InvalidArgumentError("output " + std::string(srt.status().message()));
    }
    url(Container::kMpegTs);
  } else if (lower.rfind("rtmp://", 0) == 0) {
    url(Container::kFlv);
  } else if (lower.find("://") != std::string::npos) {
    return InvalidArgumentError("output '" + destination +
                                "': pagereel live sends to udp://, srt:// and rtmp:// URLs, or "
                                "writes a file (.mp4, .mkv, .ts, .mov) or HLS (.m3u8)");
  } else {
    s.sink = Sink{Sink::Kind::kGrowingFile, destination, nullptr};
    if (EndsWith(lower, ".m3u8")) {
      s.container = Container::kHls;
    } else if (EndsWith(lower, ".mp4")) {
      s.container = Container::kFragmentedMp4;
    } else if (EndsWith(lower, ".mkv")) {
      s.container = Container::kMatroska;
    } else if (EndsWith(lower, ".ts")) {
      s.container = Container::kMpegTs;
    } else if (EndsWith(lower, ".mov")) {
      s.container = Container::kMov;
    } else {
      return InvalidArgumentError("output '" + destination +
                                  "': name a file ending in .mp4 (fragmented, playable while it "
                                  "is written), .mkv, .ts or .mov, an .m3u8 playlist, or a "
                                  "udp://, srt:// or rtmp:// URL");
    }
    fs::path folder = fs::path(destination).parent_path();
    std::error_code ec;
    if (!folder.empty() && !fs::is_directory(folder, ec)) {
      return InvalidArgumentError("output '" + destination + "': folder '" + folder.string() +
                                  "' does not exist");
    }
  }
  if (s.codec != encode::Codec::kH264 && s.container != Container::kMatroska &&
      s.container != Container::kMov) {
    return InvalidArgumentError("output '" + destination + "': " + codec_name +
                                " goes in a .mkv or .mov file");
  }
  return out;
}

// What the AMCP server needs of the show; its refusals go to stderr, at most 20 a minute.
live::AmcpOptions AmcpOptionsFor(const live::ShowSpec& show) {
  live::AmcpOptions options;
  options.listen = show.amcp.listen;
  options.token = show.amcp.token;
  options.channel = show.amcp.channel;
  options.templates = show.amcp.templates;
  for (const live::SourceSpec& s : show.sources) {
    if (s.amcp_layer >= 0) options.layers[s.amcp_layer] = s.id;
    options.urls[s.id] = s.url;
  }
  options.width = show.width;
  options.height = show.height;
  options.fps = show.fps.ToDouble();
  options.log = [](std::string_view line) {
    static std::atomic<int64_t> minute{0};
    static std::atomic<int> said{0};
    const int64_t now = std::chrono::duration_cast<std::chrono::minutes>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    if (minute.exchange(now) != now) said = 0;
    const int n = ++said;
    if (n <= 20) {
      std::fprintf(stderr, "pagereel live: %.*s\n", static_cast<int>(line.size()), line.data());
    } else if (n == 21) {
      std::fprintf(stderr, "pagereel live: (more AMCP refusals this minute are not shown)\n");
    }
  };
  return options;
}

Result<int64_t> TicksForDuration(double seconds, Rational fps) {
  constexpr double kTenYears = 10 * 365.25 * 86400;
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kTenYears) {
    return InvalidArgumentError("--duration must be a number of seconds from 0 (no limit) to " +
                                std::to_string(static_cast<int64_t>(kTenYears)));
  }
  if (seconds == 0) return int64_t{0};
  const double rate = fps.ToDouble();
  const auto ticks = static_cast<int64_t>(std::floor(seconds * rate + 1e-9));
  if (ticks < 1) {
    char shortest[64];
    std::snprintf(shortest, sizeof(shortest), "%.6g", 1 / rate);
    char given[64];
    std::snprintf(given, sizeof(given), "%g", seconds);
    return InvalidArgumentError(std::string("--duration ") + given +
                                " is shorter than one frame at " + fps.ToString() +
                                " fps; give at least " + shortest + " s (or 0: no limit)");
  }
  return ticks;
}

Result<live::ShowSpec> ShowFromFlags(const LiveRequest& request) {
  live::ShowSpec show;
  if (request.sources.empty()) {
    return InvalidArgumentError("no sources: give a show file, or --source PAGE (one or more)");
  }
  if (request.outputs.empty()) {
    return InvalidArgumentError("no outputs: give --output with a file (.mp4, .mkv, .ts), an "
                                ".m3u8 playlist or a udp://, srt:// or rtmp:// URL");
  }
  PR_ASSIGN_OR_RETURN(auto size, ParseSize(request.size));
  show.width = size.first;
  show.height = size.second;
  PR_ASSIGN_OR_RETURN(show.fps, ParseFrameRate(request.fps));
  for (size_t i = 0; i < request.sources.size(); ++i) {
    Result<std::string> url = InputToUrl(request.sources[i]);
    if (!url.ok()) return InvalidArgumentError("--source: " + std::string(url.status().message()));
    live::SourceSpec source;
    source.id = "source" + std::to_string(i + 1);
    source.url = *url;
    source.transparent = i > 0;  // Layers above the first are overlays.
    show.sources.push_back(source);
  }
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    PR_ASSIGN_OR_RETURN(live::OutputSpec out, OutputForDestination(request.outputs[i]));
    out.id = "output" + std::to_string(i + 1);
    show.outputs.push_back(std::move(out));
  }
  return show;
}

int RunLive(const LiveRequest& request) {
  Result<live::ShowSpec> loaded =
      request.show_file.empty() ? ShowFromFlags(request) : LoadShowFile(request.show_file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "pagereel live: %s\n", std::string(loaded.status().message()).c_str());
    return 2;
  }
  live::ShowSpec show = std::move(loaded).value();
  if (request.fifo_priority) show.clock.fifo_priority = request.fifo_priority;
  if (request.cpu) show.clock.cpu = request.cpu;
  if (request.no_stagger) show.clock.stagger = false;
  if (request.no_audio) show.sound.enabled = false;
  if (request.late_threshold_us) {
    show.clock.late_threshold =
        std::chrono::nanoseconds(static_cast<int64_t>(std::llround(*request.late_threshold_us * 1000)));
  }
  if (!request.as_run_log.empty()) show.as_run_log = request.as_run_log;
  if (request.control) show.control.listen = *request.control == "none" ? "" : *request.control;
  if (request.amcp) {
    show.amcp.listen = *request.amcp == "none" ? "" : *request.amcp;
    if (request.show_file.empty()) {
      for (size_t i = 0; i < show.sources.size(); ++i) show.sources[i].amcp_layer = static_cast<int>(i) + 1;
      show.amcp.templates = ".";  // CG ADD names are found in the current folder.
    }
  }
  Result<int64_t> ticks = TicksForDuration(request.duration_seconds, show.fps);
  if (!ticks.ok()) {
    std::fprintf(stderr, "pagereel live: %s\n", std::string(ticks.status().message()).c_str());
    return 2;
  }
  if (Status valid = live::ValidateShow(show); !valid.ok()) {
    std::fprintf(stderr, "pagereel live: %s\n", std::string(valid.message()).c_str());
    return 2;
  }

  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  // The control address is bound before any browser starts, so a taken port is reported
  // at once; the server answers from when the engine has started.
  std::unique_ptr<live::ControlServer> control;
  if (!show.control.listen.empty()) {
    live::ControlOptions options;
    options.listen = show.control.listen;
    options.token = show.control.token;
    Result<std::unique_ptr<live::ControlServer>> bound = live::ControlServer::Listen(options);
    if (!bound.ok()) {
      std::fprintf(stderr,
                   "pagereel live: the control and status server: %s; choose another address "
                   "with --control HOST:PORT%s, or run without it: --control none\n",
                   std::string(bound.status().message()).c_str(),
                   request.show_file.empty() ? "" : " (or control.listen in the show file)");
      return 2;
    }
    control = std::move(bound).value();
  }

  std::unique_ptr<live::AmcpServer> amcp;
  if (!show.amcp.listen.empty()) {
    Result<std::unique_ptr<live::AmcpServer>> bound = live::AmcpServer::Listen(AmcpOptionsFor(show));
    if (!bound.ok()) {
      std::fprintf(stderr,
                   "pagereel live: the AMCP server: %s; choose another address with --amcp "
                   "HOST:PORT%s, or run without it: --amcp none\n",
                   std::string(bound.status().message()).c_str(),
                   request.show_file.empty() ? "" : " (or amcp.listen in the show file)");
      return 2;
    }
    amcp = std::move(bound).value();
  }

  std::fprintf(stderr, "pagereel live: starting %zu sources and %zu outputs at %dx%d, %s fps\n",
               show.sources.size(), show.outputs.size(), show.width, show.height,
               show.fps.ToString().c_str());
  // What the scheduler will do to the clock thread here (also in the as-run log).
  show.clock.scheduler_note = probe::DescribeClockScheduling(probe::InspectClockScheduling(probe::HostFiles()));
  std::fprintf(stderr, "pagereel live: clock scheduling: %s\n", show.clock.scheduler_note.c_str());
  Result<std::unique_ptr<live::Engine>> engine = live::Engine::Start(show);
  if (!engine.ok()) {
    std::fprintf(stderr, "pagereel live: %s\n", std::string(engine.status().message()).c_str());
    return engine.status().code() == StatusCode::kInvalidArgument ||
                   engine.status().code() == StatusCode::kFailedPrecondition
               ? 2
               : 1;
  }
  if (control) {
    control->Serve(**engine);
    std::fprintf(stderr, "pagereel live: control and status on %s\n", control->Url().c_str());
    if (!control->loopback() && show.control.token.empty()) {
      std::fprintf(stderr,
                   "pagereel live: warning: the control server on %s can be reached from other "
                   "machines and has no token: anyone who reaches it can change the show. Set "
                   "control.token in the show file, or listen on 127.0.0.1.\n",
                   show.control.listen.c_str());
    }
  }
  if (amcp) {
    amcp->Serve(**engine);
    std::string layers;
    for (const live::SourceSpec& s : show.sources) {
      if (s.amcp_layer < 0) continue;
      layers += (layers.empty() ? "" : ", ") + std::to_string(show.amcp.channel) + "-" +
                std::to_string(s.amcp_layer) + " " + s.id;
    }
    const bool v6 = amcp->host().find(':') != std::string::npos;
    std::fprintf(stderr, "pagereel live: AMCP (CasparCG) on %s%s%s:%u: %s\n", v6 ? "[" : "",
                 amcp->host().c_str(), v6 ? "]" : "", amcp->port(), layers.c_str());
    if (!amcp->loopback() && show.amcp.token.empty()) {
      std::fprintf(stderr,
                   "pagereel live: warning: the AMCP server on %s can be reached from other "
                   "machines and has no token: anyone who reaches it can change the show. Set "
                   "amcp.token (controllers then send LOCK %d ACQUIRE TOKEN), or listen on "
                   "127.0.0.1.\n",
                   show.amcp.listen.c_str(), show.amcp.channel);
    }
  }
  std::fprintf(stderr, "pagereel live: on air%s; Ctrl-C or SIGTERM ends the show\n",
               *ticks > 0 ? (" for " + std::to_string(*ticks) + " ticks").c_str() : "");
  std::atomic<bool> done{false};
  std::jthread reporter([&] {
    if (request.status_every_seconds <= 0) return;
    auto next = std::chrono::steady_clock::now();
    while (!done) {
      next += std::chrono::milliseconds(static_cast<int64_t>(request.status_every_seconds * 1000));
      while (!done && std::chrono::steady_clock::now() < next) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!done) PrintStatusLine((*engine)->CurrentStatus());
    }
  });
  Status ran = (*engine)->Run(*ticks, &g_stop);
  done = true;
  reporter.join();
  // Before the engine goes: the servers call into it.
  if (control) control->Stop();
  if (amcp) amcp->Stop();
  PrintSummary((*engine)->CurrentStatus());
  if (!ran.ok()) {
    std::fprintf(stderr, "pagereel live: %s\n", std::string(ran.message()).c_str());
    return ran.code() == StatusCode::kInvalidArgument || ran.code() == StatusCode::kFailedPrecondition ? 2 : 1;
  }
  return 0;
}

}  // namespace pagereel::app
