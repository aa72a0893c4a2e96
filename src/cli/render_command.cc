// `pagereel render`: the command line of the film renderer.
#include <CLI/CLI.hpp>

#include <map>

#include "app/render_app.h"
#include "cli/commands.h"

namespace pagereel::cli {

namespace {

app::ProgressStyle ProgressStyleNamed(const std::string& name) {
  static const std::map<std::string, app::ProgressStyle> kStyles = {
      {"auto", app::ProgressStyle::kAuto}, {"bar", app::ProgressStyle::kBar},
      {"plain", app::ProgressStyle::kPlain}, {"json", app::ProgressStyle::kJson},
      {"none", app::ProgressStyle::kNone}};
  return kStyles.at(name);
}

}  // namespace

void AddRenderCommand(CLI::App& root, Action& run) {
  auto request = std::make_shared<app::RenderRequest>();
  CLI::App* cmd = root.add_subcommand(
      "render", "Render a web page to a deterministic film or image sequence.");
  cmd->add_option("INPUT", request->input,
                  "An .html file, a folder holding index.html, or an http(s) URL.")
      ->required();
  cmd->add_option("-o,--output", request->output,
                  "Where to write: .mp4 (H.264), .mov (ProRes; 4444 with --alpha), .webm (VP9), "
                  ".gif (palette from the film), or an image sequence pattern such as frames/%05d.png or frames/%05d.jpg.")
      ->required();
  cmd->add_option("--fps", request->fps,
                  "Frame rate: an integer (30), a decimal (29.97 means 30000/1001) or a "
                  "fraction (30000/1001).")
      ->capture_default_str();
  CLI::Option* duration =
      cmd->add_option("--duration", request->duration_seconds, "Film length in seconds.");
  CLI::Option* frames = cmd->add_option("--frames", request->frames, "Film length in frames.");
  duration->excludes(frames);
  cmd->add_option("--size", request->size, "Page and film size, WIDTHxHEIGHT.")
      ->capture_default_str();
  cmd->add_option("--lanes", request->lanes,
                  "Browsers rendering in parallel (default: what cores and memory allow). The "
                  "film is identical whatever the count.");
  cmd->add_flag("--alpha", request->alpha,
                "Transparent page background, kept in the output (.mov, .webm, .png only).");
  cmd->add_option("--quality", request->quality,
                  "1-100: the encoder's quality (CRF for .mp4 and .webm, JPEG quality for .jpg "
                  "sequences), and of JPEG screenshots.")
      ->capture_default_str();
  cmd->add_option("--screenshots", request->screenshots,
                  "How the browser hands each frame over: png (the exact pixels the page drew) "
                  "or jpeg (at --quality: quicker, with JPEG's loss before the encoder's). auto: "
                  "png for .mkv, .mov, .gif, image sequences, --alpha and --quality 100; jpeg "
                  "for .mp4 and .webm below quality 100.")
      ->check(CLI::IsMember({"auto", "png", "jpeg"}))
      ->capture_default_str();
  cmd->add_option("--timeout", request->timeout_seconds,
                  "Seconds to wait for the page to load and be ready (fonts, "
                  "window.pagereel.ready), and for any one frame.")
      ->capture_default_str();
  auto progress = std::make_shared<std::string>("auto");
  cmd->add_option("--progress", *progress,
                  "auto (a bar on a terminal, lines otherwise), bar, plain, json (one JSON object "
                  "per line on stderr) or none.")
      ->check(CLI::IsMember({"auto", "bar", "plain", "json", "none"}))
      ->capture_default_str();
  cmd->add_option("--browser", request->browser,
                  "chrome-headless-shell binary (default: $PAGEREEL_BROWSER or "
                  "/usr/lib/chromium/chromium-headless-shell).");
  cmd->add_option("--preroll", request->preroll,
                  "How a lane reaches the first frame of a segment its page has not run to: "
                  "exact (run and draw every frame before it without a screenshot: the film "
                  "of one lane for any page, costs those frames), jump (run animation frames "
                  "at most 300 ms apart: faster; right for clocks, CSS, Web Animations and "
                  "timers, not for state a page builds per frame, animations a timer starts, "
                  "animated images or View Transitions), or auto (make one frame both ways "
                  "and jump only if they are identical: one frame is a sample, the film may "
                  "still depend on the lane count; the summary says what it chose).")
      ->check(CLI::IsMember({"exact", "jump", "auto"}))
      ->capture_default_str();
  cmd->add_option("--timezone", request->timezone,
                  "The time zone the page sees (IANA name, e.g. Europe/Berlin), so the film "
                  "does not depend on the host's.")
      ->capture_default_str();
  cmd->add_option("--locale", request->locale,
                  "The locale the page sees (BCP 47, e.g. de-DE): Intl, toLocaleString, "
                  "navigator.language.")
      ->capture_default_str();
  cmd->add_flag("--overwrite", request->overwrite,
                "Replace an image sequence already in the output folder (its files beyond "
                "this film's frames are removed once the new sequence is complete). Films "
                "are always replaced, and only when complete.");
  cmd->add_flag("--strict", request->strict,
                "Fail the render (no output) when the page throws an uncaught exception, "
                "logs a console error or fails to load a file, or when a sound it plays "
                "cannot be in the film (media that fails to fetch or decode, a MediaStream "
                "or WebRTC srcObject, an MSE player's blob: URL, speech synthesis). Without "
                "it they are listed in the summary, each with its frame.");
  cmd->add_option("--segment-frames", request->segment_frames,
                  "Frames per segment (default: an eighth of the film, 1 to 10 seconds). Lanes "
                  "and shards render whole segments; the same value gives the same film.");
  cmd->add_option("--work-dir", request->work_dir,
                  "Where finished segments are kept until the film is joined (default "
                  ".NAME.pagereel beside the output). A render run again after a crash or kill "
                  "continues from them.");
  cmd->add_flag("--restart", request->restart,
                "Discard segments in the work folder that were made for another film (another "
                "page, size, rate or quality) instead of refusing to run.");
  cmd->add_option("--shard", request->shard,
                  "I/N: render only shard I (0-based) of N into --work-dir, for a batch engine "
                  "(Slurm array, Kubernetes Indexed Job); join with `pagereel concat`.");
  cmd->add_flag("--keep-segments", request->keep_work_dir,
                "Keep the work folder after the film is joined.");
  cmd->add_flag("--no-audio", request->no_audio,
                "No sound track. By default a page that plays sound (<audio>, <video>, "
                "new Audio()) gets one, made from its media on film time; a page without "
                "sound gets none.");
  cmd->add_option("--audio-codec", request->audio_codec,
                  "auto (AAC in .mp4, PCM in .mov, Opus in .webm, FLAC in .mkv), aac, opus, "
                  "flac, pcm_s16le or pcm_s24le, where the container holds it. GIF and image "
                  "sequences carry no sound.")
      ->capture_default_str();
  cmd->add_flag("--draft", request->draft,
                "A quick preview: half the pixels (same layout), jump pre-roll, x264 ultrafast.");
  cmd->footer(
      "Duration comes from --duration, --frames, or the page's window.pagereel.duration.\n"
      "Time is virtual: frame n shows the page at exactly n/fps seconds, through CSS, Web\n"
      "Animations, SVG, requestAnimationFrame, performance.now, Date and timers.\n\n"
      "Examples:\n"
      "  pagereel render examples/lower-third -o lower-third.mp4 --duration 6\n"
      "  pagereel render page.html -o out.mov --alpha --fps 59.94 --size 1920x1080\n"
      "  pagereel render https://example.com/chart -o frames/%05d.png --frames 120\n"
      "  pagereel render page.html -o film.mp4 --shard 0/3 --work-dir /shared/film  (x3)\n"
      "  pagereel concat /shared/film -o film.mp4\n\n"
      "A killed render keeps its finished segments: run the same command to continue.\n\n"
      "Exit status: 0 written, 1 render failed, 2 bad input, 130 interrupted.");
  cmd->callback([request, progress, &run] {
    request->progress = ProgressStyleNamed(*progress);
    run = [request] { return app::RunRender(*request); };
  });
}

void AddConcatCommand(CLI::App& root, Action& run) {
  auto request = std::make_shared<app::ConcatRequest>();
  CLI::App* cmd = root.add_subcommand(
      "concat", "Join the segments shards rendered into a work folder into the film.");
  cmd->add_option("WORK_DIR", request->work_dir,
                  "The folder given to `pagereel render --shard I/N --work-dir`.")
      ->required();
  cmd->add_option("-o,--output", request->output,
                  "The film: the kind the segments were made for (.mp4, .mov, .webm, .mkv, .gif "
                  "or an image sequence pattern).")
      ->required();
  cmd->add_flag("--keep-segments", request->keep_work_dir,
                "Keep the work folder after joining (default: removed once the film is whole).");
  cmd->add_flag("--no-audio", request->no_audio, "No sound track (as for render).");
  cmd->add_flag("--strict", request->strict,
                "Fail (writing nothing, keeping the segments) when a sound would be left out "
                "of the film; without it they are listed, each with its frame.");
  cmd->add_option("--audio-codec", request->audio_codec, "As for render.")
      ->capture_default_str();
  auto progress = std::make_shared<std::string>("auto");
  cmd->add_option("--progress", *progress, "auto, plain, json or none.")
      ->check(CLI::IsMember({"auto", "bar", "plain", "json", "none"}))
      ->capture_default_str();
  cmd->footer(
      "Every segment must be present, whole and made for the same film: a missing or damaged\n"
      "one is named (rerun the shard that owns it). Segments are joined by stream copy, never\n"
      "encoded again; the sound track is made once, for the whole film, from what each\n"
      "segment recorded of the page's sound.\n\n"
      "Exit status: 0 written, 1 segments missing or damaged (or, with --strict, a sound left\n"
      "out), 2 bad input.");
  cmd->callback([request, progress, &run] {
    request->progress = ProgressStyleNamed(*progress);
    run = [request] { return app::RunConcat(*request); };
  });
}

}  // namespace pagereel::cli
