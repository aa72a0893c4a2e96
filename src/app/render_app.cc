#include "app/render_app.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/memory.h"
#include "base/process_memory.h"
#include "base/rational.h"
#include "browser/browser.h"
#include "encode/encoder.h"
#include "render/renderer.h"

namespace pagereel::app {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_cancel{false};

void OnSignal(int) {
  const int saved_errno = errno;  // kill() may set it; the interrupted thread may read it.
  g_cancel.store(true);
  browser::KillAllBrowsers();  // Stop the browsers now; the lanes then wind down.
  // A second Ctrl-C ends the process at once.
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  errno = saved_errno;
}

// Resident memory of one lane's browser process tree while it renders, measured in
// bench/RESULTS.md (summed RSS): 524-731 MB at 1280x720 and 550-925 MB at 1920x1080 for
// the light and heavy compositions. Sized for the heavy end, scaled by pixel count.
int64_t LaneBytes(int width, int height) {
  double pixels = static_cast<double>(width) * height;
  double mb = 600 + 330 * std::min(pixels / (1920.0 * 1080.0), 4.0);
  return static_cast<int64_t>(mb * 1024 * 1024);
}

std::string PercentEncodePath(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Mib(int64_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20) + " MB"; }

std::string Clock(double seconds) {
  int s = static_cast<int>(std::lround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  }
  return buf;
}

class ProgressPrinter {
 public:
  explicit ProgressPrinter(ProgressStyle style) : style_(style) {
    if (style_ == ProgressStyle::kAuto) {
      style_ = ::isatty(STDERR_FILENO) ? ProgressStyle::kBar : ProgressStyle::kPlain;
    }
  }

  void Update(const render::Progress& p) {
    using Steady = std::chrono::steady_clock;
    Steady::time_point now = Steady::now();
    bool last = p.frames_done == p.frames_total;
    auto every = style_ == ProgressStyle::kBar ? std::chrono::milliseconds(100)
                                               : std::chrono::milliseconds(2000);
    if (!last && now - last_print_ < every) return;
    last_print_ = now;
    double elapsed = p.elapsed.count();
    double fps = elapsed > 0 ? static_cast<double>(p.frames_done - p.frames_resumed) / elapsed : 0;
    double eta = fps > 0 ? static_cast<double>(p.frames_total - p.frames_done) / fps : 0;
    switch (style_) {
      case ProgressStyle::kBar: {
        constexpr int kWidth = 30;
        int filled = static_cast<int>(kWidth * p.frames_done / std::max<int64_t>(1, p.frames_total));
        std::string bar(static_cast<size_t>(filled), '#');
        bar.append(static_cast<size_t>(kWidth - filled), '.');
        std::fprintf(stderr, "\r[%s] %lld/%lld frames  %.1f fps  ETA %s ", bar.c_str(),
                     static_cast<long long>(p.frames_done), static_cast<long long>(p.frames_total),
                     fps, Clock(eta).c_str());
        if (last) std::fputc('\n', stderr);
        break;
      }
      case ProgressStyle::kPlain:
        std::fprintf(stderr, "pagereel: %lld/%lld frames, %.1f fps, ETA %s\n",
                     static_cast<long long>(p.frames_done), static_cast<long long>(p.frames_total),
                     fps, Clock(eta).c_str());
        break;
      case ProgressStyle::kJson:
        std::fprintf(stderr,
                     "{\"event\":\"progress\",\"frames_done\":%lld,\"frames_total\":%lld,"
                     "\"elapsed_s\":%.3f,\"fps\":%.2f,\"eta_s\":%.1f}\n",
                     static_cast<long long>(p.frames_done), static_cast<long long>(p.frames_total),
                     elapsed, fps, eta);
        break;
      case ProgressStyle::kAuto:
      case ProgressStyle::kNone:
        break;
    }
    std::fflush(stderr);
  }

  ProgressStyle style() const { return style_; }

 private:
  ProgressStyle style_;
  std::chrono::steady_clock::time_point last_print_{};
};

int ExitCodeFor(const Status& status) {
  if (status.code() == StatusCode::kCancelled) return 130;
  if (status.code() == StatusCode::kInvalidArgument) return 2;
  return 1;
}

// The modules' messages say what went wrong; the command line's words for what to do
// about it are added here.
std::string WithFlagHints(const Status& status) {
  std::string text(status.message());
  if (status.code() == StatusCode::kDeadlineExceeded) {
    text += "; if the page is only slow, raise --timeout";
  } else if (text.find("film's length") != std::string::npos ||
             text.find("how long is the film") != std::string::npos) {
    text += " (--duration SECONDS or --frames N)";
  } else if (text.find("reported an error") != std::string::npos) {
    text += " (--strict stops a render on page errors)";
  }
  return text;
}

int Fail(const Status& status, ProgressStyle style, const char* command = "render") {
  std::string text = WithFlagHints(status);
  if (style == ProgressStyle::kJson) {
    nlohmann::json event = {{"event", "error"},
                            {"code", std::string(StatusCodeName(status.code()))},
                            {"message", text}};
    std::fprintf(stderr, "%s\n", event.dump().c_str());
  }
  std::fprintf(stderr, "pagereel %s: %s\n", command, text.c_str());
  return ExitCodeFor(status);
}

std::string Describe(const capture::PageMessage& m) {
  const char* kind = "console error";
  switch (m.kind) {
    case capture::PageMessage::Kind::kException: kind = "uncaught exception"; break;
    case capture::PageMessage::Kind::kLoadError: kind = "failed load"; break;
    case capture::PageMessage::Kind::kVideo: kind = "video"; break;
    case capture::PageMessage::Kind::kConsoleError: break;
  }
  std::string where = m.frame < 0 ? "while loading" : "frame " + std::to_string(m.frame);
  return std::string(kind) + ", " + where + ": " + m.text + (m.source.empty() ? "" : " (" + m.source + ")");
}

nlohmann::json MessagesJson(const render::RenderStats& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const capture::PageMessage& m : s.page_messages) out.push_back(Describe(m));
  return out;
}

// Errors the page reported: a render that "worked" on a broken page should say so.
void PrintPageMessages(const render::RenderStats& s) {
  if (s.page_message_count == 0) return;
  std::fprintf(stderr, "  the page reported %lld error%s (--strict makes them fatal):\n",
               static_cast<long long>(s.page_message_count), s.page_message_count == 1 ? "" : "s");
  for (const capture::PageMessage& m : s.page_messages) {
    std::fprintf(stderr, "    %s\n", Describe(m).c_str());
  }
  if (s.page_message_count > static_cast<int64_t>(s.page_messages.size())) {
    std::fprintf(stderr, "    ... and %lld more\n",
                 static_cast<long long>(s.page_message_count -
                                        static_cast<int64_t>(s.page_messages.size())));
  }
}

}  // namespace

Result<std::string> InputToUrl(const std::string& input) {
  if (input.empty()) return InvalidArgumentError("no input given: name an .html file, a folder "
                                                 "with index.html, or an http(s) URL");
  for (const char* scheme : {"http://", "https://", "file://", "data:"}) {
    if (input.rfind(scheme, 0) == 0) return input;
  }
  if (input.find("://") != std::string::npos) {
    return InvalidArgumentError("input '" + input + "' uses a scheme pagereel does not load; "
                                "give an http(s) URL, a file or a folder");
  }
  std::error_code ec;
  fs::path path = fs::absolute(input, ec);
  if (!fs::exists(path, ec)) {
    return InvalidArgumentError("input '" + input + "' does not exist");
  }
  if (fs::is_directory(path, ec)) {
    path /= "index.html";
    if (!fs::exists(path, ec)) {
      return InvalidArgumentError("input folder '" + input + "' has no index.html");
    }
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return InvalidArgumentError("input '" + path.string() + "' cannot be read");
  }
  return "file://" + PercentEncodePath(path.lexically_normal().string());
}

Result<std::pair<int, int>> ParseSize(const std::string& text) {
  size_t x = text.find_first_of("xX");
  int w = 0;
  int h = 0;
  auto parse = [](std::string_view s, int* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (x == std::string::npos || !parse(std::string_view(text).substr(0, x), &w) ||
      !parse(std::string_view(text).substr(x + 1), &h)) {
    return InvalidArgumentError("bad size '" + text + "': write WIDTHxHEIGHT, e.g. 1920x1080");
  }
  constexpr int kMin = 16;
  constexpr int kMax = 8192;
  if (w < kMin || h < kMin || w > kMax || h > kMax) {
    return InvalidArgumentError("bad size '" + text + "': width and height must be between " +
                                std::to_string(kMin) + " and " + std::to_string(kMax) + " pixels");
  }
  return std::make_pair(w, h);
}

int DefaultLanes(int width, int height, int cores, int64_t available_bytes) {
  int by_cores = std::max(1, cores);
  if (available_bytes <= 0) return 1;
  // Leave room for pagereel itself and the rest of the machine.
  int64_t spare = available_bytes - (int64_t{768} << 20);
  int by_memory = static_cast<int>(std::max<int64_t>(1, spare / LaneBytes(width, height)));
  return std::min(by_cores, by_memory);
}

int RunRender(const RenderRequest& request) {
  ProgressPrinter progress(request.progress);
  auto fail = [&](const Status& s) { return Fail(s, progress.style()); };

  render::RenderOptions options;
  Result<std::string> url = InputToUrl(request.input);
  if (!url.ok()) return fail(url.status());
  Result<Rational> fps = ParseFrameRate(request.fps);
  if (!fps.ok()) return fail(fps.status());
  Result<std::pair<int, int>> size = ParseSize(request.size);
  if (!size.ok()) return fail(size.status());
  Result<encode::OutputSpec> spec = encode::InspectOutputPath(request.output, request.alpha);
  if (!spec.ok()) return fail(spec.status());
  if ((spec->kind == encode::OutputKind::kPngSequence ||
       spec->kind == encode::OutputKind::kJpegSequence) && !request.overwrite) {
    std::vector<std::string> existing = encode::ExistingSequenceFiles(request.output);
    if (!existing.empty()) {
      return fail(InvalidArgumentError(
          "'" + request.output + "' already has " + std::to_string(existing.size()) +
          " frame file" + (existing.size() == 1 ? "" : "s") + " in place (" + existing.front() +
          (existing.size() > 1 ? " ... " + existing.back() : "") +
          "); an earlier render's frames would mix with this one's. Remove them, or give "
          "--overwrite to replace that sequence"));
    }
  }
  if (request.quality < 1 || request.quality > 100) {
    return fail(InvalidArgumentError("--quality must be between 1 and 100, not " +
                                     std::to_string(request.quality)));
  }
  if (!(request.timeout_seconds > 0) || request.timeout_seconds > 24 * 3600) {
    return fail(InvalidArgumentError("--timeout must be a positive number of seconds"));
  }
  if (request.duration_seconds && !(*request.duration_seconds > 0 &&
                                    *request.duration_seconds <= 24 * 3600)) {
    return fail(InvalidArgumentError("--duration must be between 0 and 86400 seconds"));
  }
  if (request.frames && (*request.frames <= 0 || *request.frames > 10'000'000)) {
    return fail(InvalidArgumentError("--frames must be between 1 and 10000000"));
  }
  if (request.segment_frames && (*request.segment_frames < 1 || *request.segment_frames > 10'000'000)) {
    return fail(InvalidArgumentError("--segment-frames must be a positive number of frames"));
  }
  render::PreRollMode preroll = render::PreRollMode::kAuto;
  if (request.preroll == "exact") {
    preroll = render::PreRollMode::kExact;
  } else if (request.preroll == "jump") {
    preroll = render::PreRollMode::kJump;
  } else if (request.preroll != "auto") {
    return fail(InvalidArgumentError("--preroll '" + request.preroll +
                                     "' is not a pre-roll mode: exact, jump or auto"));
  }
  std::pair<int, int> shard{0, 1};
  if (!request.shard.empty()) {
    Result<std::pair<int, int>> parsed = ParseShard(request.shard);
    if (!parsed.ok()) return fail(parsed.status());
    if (request.work_dir.empty()) {
      return fail(InvalidArgumentError(
          "--shard needs --work-dir: a folder every shard can reach, where the segments wait "
          "for `pagereel concat`"));
    }
    shard = *parsed;
  }
  if (Result<std::string> b = browser::FindBrowserBinary(request.browser); !b.ok()) {
    return fail(b.status());
  }

  options.page.url = *url;
  options.page.width = size->first;
  options.page.height = size->second;
  options.page.fps = *fps;
  options.page.alpha = request.alpha;
  options.page.jpeg_quality = std::clamp(request.quality, 1, 100);
  options.page.timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::llround(request.timeout_seconds * 1000)));
  if (request.frames) {
    options.frames = *request.frames;
  } else if (request.duration_seconds) {
    options.frames = FramesInDuration(*request.duration_seconds, *fps);
  }
  options.encoder.path = request.output;
  options.encoder.quality = request.quality;
  options.launch.binary = request.browser;
  options.segment_frames = request.segment_frames.value_or(0);
  options.preroll = preroll;
  options.work_dir = request.work_dir;
  options.restart = request.restart;
  options.keep_work_dir = request.keep_work_dir;
  options.shard_index = shard.first;
  options.shard_count = shard.second;
  if (request.draft) {
    // A preview while working on a page: the page laid out at full size and drawn at half
    // (device scale 0.5), segments reached by jumping, the fastest encoder settings.
    options.page.width = std::max(16, size->first / 2 / 2 * 2);
    options.page.height = std::max(16, size->second / 2 / 2 * 2);
    options.page.scale = 0.5;
    options.launch.extra_args.push_back("--force-device-scale-factor=0.5");
    options.preroll = render::PreRollMode::kJump;
    options.encoder.preset = "ultrafast";
  }
  options.strict = request.strict;
  options.page.timezone = request.timezone;
  options.page.locale = request.locale;

  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int64_t available = pagereel::AvailableMemoryBytes();
  if (request.lanes) {
    if (*request.lanes < 1 || *request.lanes > 64) {
      return fail(InvalidArgumentError("--lanes must be between 1 and 64"));
    }
    int by_memory = DefaultLanes(size->first, size->second, 1 << 20, available);
    if (*request.lanes > by_memory) {
      std::fprintf(stderr,
                   "pagereel render: %d lanes would need about %s; %s is available, so using %d\n",
                   *request.lanes, Mib(*request.lanes * LaneBytes(size->first, size->second)).c_str(),
                   Mib(available).c_str(), by_memory);
    }
    options.lanes = std::min(*request.lanes, by_memory);
  } else {
    options.lanes = DefaultLanes(size->first, size->second, cores, available);
  }

  options.cancel = &g_cancel;
  options.on_progress = [&](const render::Progress& p) { progress.Update(p); };
  options.on_note = [&](const std::string& note) {
    if (progress.style() == ProgressStyle::kBar) std::fputc('\n', stderr);
    std::fprintf(stderr, "pagereel render: %s\n", note.c_str());
  };

  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  const std::string work_dir =
      request.work_dir.empty() ? render::DefaultWorkDir(request.output) : request.work_dir;
  if (progress.style() != ProgressStyle::kJson && progress.style() != ProgressStyle::kNone) {
    std::string what = shard.second > 1 ? "shard " + request.shard + " of " + request.output +
                                              " into " + work_dir
                                        : request.input + " -> " + request.output;
    std::fprintf(stderr, "pagereel render: %s (%dx%d @ %s fps, %d lane%s%s)\n", what.c_str(),
                 options.page.width, options.page.height, fps->ToString().c_str(), options.lanes,
                 options.lanes == 1 ? "" : "s",
                 request.draft ? ", DRAFT: half size, jump pre-roll, x264 ultrafast" : "");
  }

  MemoryWatch memory;
  Result<render::RenderStats> stats = render::Render(options);
  if (!stats.ok()) {
    if (progress.style() == ProgressStyle::kBar) std::fputc('\n', stderr);
    // Finished segments stay for the next run (whatever went wrong, they are whole).
    std::string kept;
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(work_dir) / "film.json", ec)) {
      kept = "; finished segments are kept in " + work_dir +
             ": run the same command again to continue";
    }
    if (g_cancel.load()) {
      return fail(CancelledError("interrupted; no output was written" + kept));
    }
    if (stats.status().code() == StatusCode::kInvalidArgument ||
        stats.status().code() == StatusCode::kFailedPrecondition) {
      return fail(stats.status());
    }
    return fail(Status(stats.status().code(), std::string(stats.status().message()) + kept));
  }

  const render::RenderStats& s = *stats;
  double film_seconds = static_cast<double>(s.frames_rendered) * static_cast<double>(fps->den) /
                        static_cast<double>(fps->num);
  double rate =
      s.wall_seconds > 0 ? static_cast<double>(s.frames_rendered) / s.wall_seconds : 0;
  if (progress.style() == ProgressStyle::kJson) {
    nlohmann::json event = {{"event", "done"},
                            {"output", s.output},
                            {"work_dir", s.work_dir},
                            {"frames", s.frames},
                            {"frames_rendered", s.frames_rendered},
                            {"segments", s.segments},
                            {"segments_resumed", s.segments_resumed},
                            {"segments_rendered", s.segments_rendered},
                            {"wall_s", s.wall_seconds},
                            {"fps", rate},
                            {"lanes", s.lanes},
                            {"draft", request.draft},
                            {"browser_s", s.browser_seconds},
                            {"decode_s", s.decode_seconds},
                            {"encode_s", s.encode_seconds},
                            {"join_s", s.join_seconds},
                            {"preroll", s.preroll},
                            {"preroll_frames", s.preroll_frames},
                            {"preroll_s", s.preroll_seconds},
                            {"jumps", s.jumps},
                            {"page_loads", s.page_loads},
                            {"retries", s.retries},
                            {"page_errors", s.page_message_count},
                            {"page_error_examples", MessagesJson(s)},
                            {"peak_rss_self_bytes", memory.peak_self_bytes()},
                            {"peak_rss_browsers_bytes", memory.peak_browsers_bytes()}};
    std::fprintf(stderr, "%s\n", event.dump().c_str());
  } else if (progress.style() != ProgressStyle::kNone) {
    std::string what = s.output.empty()
                           ? "shard " + request.shard + ": " +
                                 std::to_string(s.segments_rendered + s.segments_resumed) +
                                 " segments in " + s.work_dir
                           : s.output;
    std::fprintf(stderr,
                 "pagereel render: wrote %s%s: %lld frames (%.2f s of film) in %.1f s, %.1f fps\n"
                 "  lanes %d | browser %.1f s | decode+convert %.1f s | encode %.1f s | join %.1f s"
                 " | retries %d\n"
                 "  segments %lld of %lld made now (%lld kept from an earlier run) | pre-roll %s: "
                 "%lld frames run, %lld jumps, %.1f s\n"
                 "  peak memory: pagereel %s, browsers %s (RSS)\n",
                 request.draft ? "a DRAFT (half size, jump pre-roll, x264 ultrafast) " : "",
                 what.c_str(), static_cast<long long>(s.frames_rendered), film_seconds,
                 s.wall_seconds, rate, s.lanes, s.browser_seconds, s.decode_seconds,
                 s.encode_seconds, s.join_seconds, s.retries,
                 static_cast<long long>(s.segments_rendered), static_cast<long long>(s.segments),
                 static_cast<long long>(s.segments_resumed), s.preroll.c_str(),
                 static_cast<long long>(s.preroll_frames), static_cast<long long>(s.jumps),
                 s.preroll_seconds, Mib(memory.peak_self_bytes()).c_str(),
                 Mib(memory.peak_browsers_bytes()).c_str());
    if (shard.second > 1) {
      std::fprintf(stderr,
                   "  when every shard is done: pagereel concat %s -o %s\n", s.work_dir.c_str(),
                   request.output.c_str());
    }
  }
  if (progress.style() != ProgressStyle::kJson && progress.style() != ProgressStyle::kNone) {
    PrintPageMessages(s);
  }
  if (!s.output.empty()) std::printf("%s\n", s.output.c_str());
  return 0;
}

Result<std::pair<int, int>> ParseShard(const std::string& text) {
  size_t slash = text.find('/');
  int index = -1;
  int count = 0;
  auto parse = [](std::string_view s, int* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (slash == std::string::npos || !parse(std::string_view(text).substr(0, slash), &index) ||
      !parse(std::string_view(text).substr(slash + 1), &count) || count < 1 || count > 10000 ||
      index < 0 || index >= count) {
    return InvalidArgumentError("bad --shard '" + text +
                                "': write I/N with 0 <= I < N, e.g. 0/3 for the first of three "
                                "(a Slurm array task or Kubernetes completion index is I)");
  }
  return std::make_pair(index, count);
}

int RunConcat(const ConcatRequest& request) {
  ProgressPrinter progress(request.progress);
  auto fail = [&](const Status& s) { return Fail(s, progress.style(), "concat"); };
  Result<render::JoinStats> joined =
      render::JoinFilm(request.work_dir, request.output,
                       request.keep_work_dir ? render::AfterJoin::kKeep : render::AfterJoin::kRemove);
  if (!joined.ok()) return fail(joined.status());
  if (progress.style() == ProgressStyle::kJson) {
    nlohmann::json event = {{"event", "done"},          {"output", joined->output},
                            {"frames", joined->frames}, {"segments", joined->segments},
                            {"wall_s", joined->seconds}};
    std::fprintf(stderr, "%s\n", event.dump().c_str());
  } else if (progress.style() != ProgressStyle::kNone) {
    std::fprintf(stderr, "pagereel concat: wrote %s: %lld frames from %lld segments in %.1f s\n",
                 joined->output.c_str(), static_cast<long long>(joined->frames),
                 static_cast<long long>(joined->segments), joined->seconds);
  }
  std::printf("%s\n", joined->output.c_str());
  return 0;
}

}  // namespace pagereel::app
