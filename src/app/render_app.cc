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

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/memory.h"
#include "base/percent_encoding.h"
#include "base/process_memory.h"
#include "base/rational.h"
#include "browser/browser.h"
#include "encode/film.h"
#include "encode/sound.h"
#include "render/renderer.h"

namespace pagereel::app {

namespace fs = std::filesystem;

namespace {

// Sounds the summary names; the rest are counted.
constexpr size_t kMaxSoundsNamed = 8;

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
  } else if (text.find("reported an error") != std::string::npos ||
             text.find("opened a dialog") != std::string::npos) {
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
    case capture::PageMessage::Kind::kDialog: kind = "dialog"; break;
    case capture::PageMessage::Kind::kWebSocket: kind = "websocket"; break;
    case capture::PageMessage::Kind::kConsoleError: break;
  }
  std::string where = m.frame < 0 ? "while loading" : "frame " + std::to_string(m.frame);
  return std::string(kind) + ", " + where + ": " + m.text + (m.source.empty() ? "" : " (" + m.source + ")");
}

// --no-audio and --audio-codec, checked.
Result<render::SoundOptions> ToSoundOptions(bool no_audio, const std::string& codec) {
  render::SoundOptions sound;
  sound.sound = no_audio ? render::FilmSound::kNone : render::FilmSound::kIfAny;
  std::optional<encode::SoundCodec> named = encode::SoundCodecNamed(codec);
  if (!named) {
    return InvalidArgumentError("unknown --audio-codec '" + codec +
                                "': use auto, aac, opus, flac, pcm_s16le or pcm_s24le");
  }
  sound.codec = *named;
  return sound;
}

// The film's sound, for the summary: what is in it, and what was left out and why.
void PrintSound(const std::vector<std::string>& sounds, const std::vector<std::string>& left_out) {
  if (!sounds.empty()) {
    std::string names;
    for (size_t i = 0; i < sounds.size() && i < kMaxSoundsNamed; ++i) {
      names += (i ? ", " : "") + sounds[i];
    }
    if (sounds.size() > kMaxSoundsNamed) names += ", ...";
    fmt::print(stderr, "  sound: {} sound{} mixed: {}\n", sounds.size(),
               sounds.size() == 1 ? "" : "s", names);
  }
  for (const std::string& l : left_out) fmt::print(stderr, "  sound left out: {}\n", l);
  if (!left_out.empty()) fmt::print(stderr, "  (--strict makes a sound left out fatal)\n");
}

nlohmann::json MessagesJson(const render::RenderStats& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const capture::PageMessage& m : s.page_messages) out.push_back(Describe(m));
  return out;
}

// Errors the page reported: a render that "worked" on a broken page should say so.
void PrintPageMessages(const render::RenderStats& s) {
  if (s.page_message_count == 0) return;
  const bool dialogs = std::any_of(s.page_messages.begin(), s.page_messages.end(), [](const auto& m) {
    return m.kind == capture::PageMessage::Kind::kDialog;
  });
  const char* plural = s.page_message_count == 1 ? "" : "s";
  std::fprintf(stderr, "  the page reported %lld error%s%s%s (--strict makes them fatal):\n",
               static_cast<long long>(s.page_message_count), plural, dialogs ? " or dialog" : "",
               dialogs ? plural : "");
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
  return FileUrlForPath(path.lexically_normal().string());
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

namespace {

// The request's words checked and turned into the renderer's options (lanes aside);
// every error is bad input.
Result<render::RenderOptions> ToRenderOptions(const RenderRequest& request) {
  PR_ASSIGN_OR_RETURN(std::string url, InputToUrl(request.input));
  PR_ASSIGN_OR_RETURN(Rational fps, ParseFrameRate(request.fps));
  PR_ASSIGN_OR_RETURN(auto size, ParseSize(request.size));
  PR_ASSIGN_OR_RETURN(encode::FilmKind kind, encode::FilmKindForPath(request.output, request.alpha));
  // Before any browser starts: the encoder would refuse the size only once frames arrive.
  // (A draft's half size is even by construction.)
  if (Status fits = encode::CheckFilmSize(kind, size.first, size.second);
      !fits.ok() && !request.draft) {
    return InvalidArgumentError("--size " + request.size + " does not fit " + request.output +
                                ": " + std::string(fits.message()));
  }
  if (encode::IsSequence(kind) && !request.overwrite) {
    std::vector<std::string> existing = encode::ExistingSequenceFiles(request.output);
    if (!existing.empty()) {
      return InvalidArgumentError(
          "'" + request.output + "' already has " + std::to_string(existing.size()) +
          " frame file" + (existing.size() == 1 ? "" : "s") + " in place (" + existing.front() +
          (existing.size() > 1 ? " ... " + existing.back() : "") +
          "); an earlier render's frames would mix with this one's. Remove them, or give "
          "--overwrite to replace that sequence");
    }
  }
  if (request.quality < 1 || request.quality > 100) {
    return InvalidArgumentError("--quality must be between 1 and 100, not " +
                                std::to_string(request.quality));
  }
  if (!(request.timeout_seconds > 0) || request.timeout_seconds > 24 * 3600) {
    return InvalidArgumentError("--timeout must be a positive number of seconds");
  }
  if (request.duration_seconds && !(*request.duration_seconds > 0 &&
                                    *request.duration_seconds <= 24 * 3600)) {
    return InvalidArgumentError("--duration must be between 0 and 86400 seconds");
  }
  if (request.frames && (*request.frames <= 0 || *request.frames > 10'000'000)) {
    return InvalidArgumentError("--frames must be between 1 and 10000000");
  }
  if (request.segment_frames && (*request.segment_frames < 1 || *request.segment_frames > 10'000'000)) {
    return InvalidArgumentError("--segment-frames must be a positive number of frames");
  }
  render::RenderOptions options;
  if (request.screenshots == "png") {
    options.screenshots = encode::ImageFormat::kPng;
  } else if (request.screenshots == "jpeg") {
    if (request.alpha) {
      return InvalidArgumentError("--screenshots jpeg cannot go with --alpha: JPEG has no "
                                  "transparency; leave --screenshots out");
    }
    if (kind == encode::FilmKind::kMkv || kind == encode::FilmKind::kPngSequence) {
      return InvalidArgumentError(
          "--screenshots jpeg would put JPEG's damage into '" + request.output +
          "', a lossless " + std::string(encode::FilmKindName(kind)) +
          " film; leave --screenshots out (PNG, exact) or write a .jpg sequence or .mp4");
    }
    options.screenshots = encode::ImageFormat::kJpeg;
  } else if (request.screenshots != "auto") {
    return InvalidArgumentError("--screenshots '" + request.screenshots +
                                "' is not a screenshot format: auto, png or jpeg");
  }
  if (request.preroll == "exact") {
    options.preroll = render::PreRollMode::kExact;
  } else if (request.preroll == "jump") {
    options.preroll = render::PreRollMode::kJump;
  } else if (request.preroll == "auto") {
    options.preroll = render::PreRollMode::kAuto;
  } else {
    return InvalidArgumentError("--preroll '" + request.preroll +
                                "' is not a pre-roll mode: exact, jump or auto");
  }
  if (!request.shard.empty()) {
    PR_ASSIGN_OR_RETURN(auto shard, ParseShard(request.shard));
    if (request.work_dir.empty()) {
      return InvalidArgumentError(
          "--shard needs --work-dir: a folder every shard can reach, where the segments wait "
          "for `pagereel concat`");
    }
    options.shard_index = shard.first;
    options.shard_count = shard.second;
  }
  PR_RETURN_IF_ERROR(browser::FindBrowserBinary(request.browser).status());

  options.page.url = url;
  options.page.width = size.first;
  options.page.height = size.second;
  options.page.fps = fps;
  options.page.alpha = request.alpha;
  options.page.jpeg_quality = request.quality;
  options.page.timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::llround(request.timeout_seconds * 1000)));
  options.page.timezone = request.timezone;
  options.page.locale = request.locale;
  // Each lane's browser holds that lane's pages only, so a browser-wide attach of shared
  // workers stops no one else's (serve's browsers hold many captures: it leaves them).
  options.page.shared_workers = capture::PageOptions::SharedWorkers::kAttach;
  if (request.frames) {
    options.frames = *request.frames;
  } else if (request.duration_seconds) {
    options.frames = FramesInDuration(*request.duration_seconds, fps);
  }
  options.output = request.output;
  options.kind = kind;
  options.quality = request.quality;
  options.launch.binary = request.browser;
  options.segment_frames = request.segment_frames.value_or(0);
  options.work_dir = request.work_dir;
  options.restart = request.restart;
  options.keep_work_dir = request.keep_work_dir;
  options.strict = request.strict;
  PR_ASSIGN_OR_RETURN(options.sound, ToSoundOptions(request.no_audio, request.audio_codec));
  if (url.starts_with("file://")) {
    // A composition on disk is one piece: its own images and videos are not cross-origin
    // to it. Without this, a file:// document may not read what it draws from its own
    // files (getImageData after drawImage, WebGL textures, new VideoFrame(video)), and
    // pagereel cannot see whether a sought video's picture has reached drawImage
    // (docs/page-contract.md, Video).
    options.launch.extra_args.push_back("--allow-file-access-from-files");
  }
  if (request.draft) {
    // A preview while working on a page: the page laid out at full size and drawn at half
    // (device scale 0.5), segments reached by jumping, the fastest encoder settings.
    options.page.width = std::max(16, size.first / 2 / 2 * 2);
    options.page.height = std::max(16, size.second / 2 / 2 * 2);
    options.page.scale = 0.5;
    options.launch.extra_args.push_back("--force-device-scale-factor=0.5");
    options.preroll = render::PreRollMode::kJump;
    options.preset = "ultrafast";
  }
  return options;
}

// Lanes for a film of `width` x `height`: what the request asks, within what this machine's
// memory holds (said on stderr when it is less), else what cores and memory allow.
Result<int> ChooseLanes(const RenderRequest& request, int width, int height) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t available = pagereel::AvailableMemoryBytes();
  if (!request.lanes) return DefaultLanes(width, height, cores, available);
  if (*request.lanes < 1 || *request.lanes > 64) {
    return InvalidArgumentError("--lanes must be between 1 and 64");
  }
  const int by_memory = DefaultLanes(width, height, 1 << 20, available);
  if (*request.lanes > by_memory) {
    fmt::print(stderr, "pagereel render: {} lanes would need about {}; {} is available, so using {}\n",
               *request.lanes, Mib(*request.lanes * LaneBytes(width, height)), Mib(available),
               by_memory);
  }
  return std::min(*request.lanes, by_memory);
}

// Ctrl-C and SIGTERM stop the render (OnSignal); a second one ends the process.
void StopOnSignals() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

// What a failed render says: the modules' message, and where the finished segments wait.
Status Explained(const Status& failed, const std::string& work_dir) {
  std::string kept;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(work_dir) / "film.json", ec)) {
    kept = "; finished segments are kept in " + work_dir + ": run the same command again to continue";
  }
  if (g_cancel.load()) return CancelledError("interrupted; no output was written" + kept);
  if (failed.code() == StatusCode::kInvalidArgument ||
      failed.code() == StatusCode::kFailedPrecondition) {
    return failed;
  }
  return Status(failed.code(), std::string(failed.message()) + kept);
}

void PrintSummary(const RenderRequest& request, const render::RenderStats& s, Rational fps,
                  const MemoryWatch& memory, ProgressStyle style) {
  const double film_seconds = static_cast<double>(s.frames_rendered) *
                              static_cast<double>(fps.den) / static_cast<double>(fps.num);
  const double rate =
      s.wall_seconds > 0 ? static_cast<double>(s.frames_rendered) / s.wall_seconds : 0;
  if (style == ProgressStyle::kJson) {
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
                            {"screenshots", s.screenshots},
                            {"redrawn_frames", s.redrawn_frames},
                            {"preroll_frames", s.preroll_frames},
                            {"preroll_s", s.preroll_seconds},
                            {"jumps", s.jumps},
                            {"page_loads", s.page_loads},
                            {"retries", s.retries},
                            {"page_errors", s.page_message_count},
                            {"page_error_examples", MessagesJson(s)},
                            {"sounds", s.sounds},
                            {"sounds_left_out", s.sounds_left_out},
                            {"peak_rss_self_bytes", memory.peak_self_bytes()},
                            {"peak_rss_browsers_bytes", memory.peak_browsers_bytes()}};
    fmt::print(stderr, "{}\n", event.dump());
    return;
  }
  if (style == ProgressStyle::kNone) return;
  const std::string what =
      s.output.empty() ? fmt::format("shard {}: {} segments in {}", request.shard,
                                     s.segments_rendered + s.segments_resumed, s.work_dir)
                       : s.output;
  fmt::print(stderr,
             "pagereel render: wrote {}{}: {} frames ({:.2f} s of film) in {:.1f} s, {:.1f} fps\n"
             "  lanes {} | screenshots {} | browser {:.1f} s | decode+convert {:.1f} s | encode "
             "{:.1f} s | join {:.1f} s | retries {} | frames redrawn {}\n"
             "  segments {} of {} made now ({} kept from an earlier run) | pre-roll {}: {} frames "
             "run, {} jumps, {:.1f} s\n"
             "  peak memory: pagereel {}, browsers {} (RSS)\n",
             request.draft ? "a DRAFT (half size, jump pre-roll, x264 ultrafast) " : "", what,
             s.frames_rendered, film_seconds, s.wall_seconds, rate, s.lanes, s.screenshots,
             s.browser_seconds,
             s.decode_seconds, s.encode_seconds, s.join_seconds, s.retries, s.redrawn_frames,
             s.segments_rendered,
             s.segments, s.segments_resumed, s.preroll, s.preroll_frames, s.jumps,
             s.preroll_seconds, Mib(memory.peak_self_bytes()), Mib(memory.peak_browsers_bytes()));
  if (s.output.empty()) {
    fmt::print(stderr, "  when every shard is done: pagereel concat {} -o {}\n", s.work_dir,
               request.output);
  }
  PrintSound(s.sounds, s.sounds_left_out);
  PrintPageMessages(s);
}

}  // namespace

int RunRender(const RenderRequest& request) {
  ProgressPrinter progress(request.progress);
  auto fail = [&](const Status& s) { return Fail(s, progress.style()); };
  Result<render::RenderOptions> checked = ToRenderOptions(request);
  if (!checked.ok()) return fail(checked.status());
  render::RenderOptions& options = *checked;
  Result<int> lanes = ChooseLanes(request, options.page.width, options.page.height);
  if (!lanes.ok()) return fail(lanes.status());
  options.lanes = *lanes;
  options.cancel = &g_cancel;
  options.on_progress = [&](const render::Progress& p) { progress.Update(p); };
  options.on_note = [&](const std::string& note) {
    if (progress.style() == ProgressStyle::kBar) std::fputc('\n', stderr);
    fmt::print(stderr, "pagereel render: {}\n", note);
  };
  StopOnSignals();

  const std::string work_dir =
      request.work_dir.empty() ? render::DefaultWorkDir(request.output) : request.work_dir;
  if (progress.style() != ProgressStyle::kJson && progress.style() != ProgressStyle::kNone) {
    const std::string what =
        options.shard_count > 1
            ? "shard " + request.shard + " of " + request.output + " into " + work_dir
            : request.input + " -> " + request.output;
    fmt::print(stderr, "pagereel render: {} ({}x{} @ {} fps, {} lane{}{})\n", what,
               options.page.width, options.page.height, options.page.fps.ToString(),
               options.lanes, options.lanes == 1 ? "" : "s",
               request.draft ? ", DRAFT: half size, jump pre-roll, x264 ultrafast" : "");
  }

  MemoryWatch memory;
  Result<render::RenderStats> stats = render::Render(options);
  if (!stats.ok()) {
    if (progress.style() == ProgressStyle::kBar) std::fputc('\n', stderr);
    // Finished segments stay for the next run (whatever went wrong, they are whole).
    return fail(Explained(stats.status(), work_dir));
  }
  PrintSummary(request, *stats, options.page.fps, memory, progress.style());
  if (!stats->output.empty()) fmt::print("{}\n", stats->output);
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
  Result<render::SoundOptions> sound = ToSoundOptions(request.no_audio, request.audio_codec);
  if (!sound.ok()) return fail(sound.status());
  if (request.strict) sound->left_out = render::LeftOutSounds::kFail;
  Result<render::JoinStats> joined = render::JoinFilm(
      request.work_dir, request.output,
      request.keep_work_dir ? render::AfterJoin::kKeep : render::AfterJoin::kRemove, *sound);
  if (!joined.ok()) return fail(joined.status());
  if (progress.style() == ProgressStyle::kJson) {
    nlohmann::json event = {{"event", "done"},          {"output", joined->output},
                            {"frames", joined->frames}, {"segments", joined->segments},
                            {"wall_s", joined->seconds},
                            {"sounds", joined->sounds},
                            {"sounds_left_out", joined->sounds_left_out}};
    fmt::print(stderr, "{}\n", event.dump());
  } else if (progress.style() != ProgressStyle::kNone) {
    fmt::print(stderr, "pagereel concat: wrote {}: {} frames from {} segments in {:.1f} s\n",
               joined->output, joined->frames, joined->segments, joined->seconds);
    PrintSound(joined->sounds, joined->sounds_left_out);
  }
  fmt::print("{}\n", joined->output);
  return 0;
}

}  // namespace pagereel::app
