// `pagereel render`: the command line of the film renderer.
#include <CLI/CLI.hpp>

#include <map>

#include "app/render_app.h"
#include "cli/commands.h"

namespace pagereel::cli {

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
                  "1-100: JPEG quality of the screenshots and the encoder's quality.")
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
  auto preroll = std::make_shared<std::string>("exact");
  cmd->add_option("--preroll", *preroll,
                  "How a lane reaches a slice's first frame: exact (run every skipped frame "
                  "without a screenshot, so the film is identical for any lane count). The "
                  "only mode: 'jump' was removed because it could not render GSAP, d3 or "
                  "animations started after frame 0 like a one-lane render.")
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
                "logs a console error or fails to load a file. Without it they are listed "
                "in the summary.");
  cmd->add_option("--slice-frames", request->slice_frames,
                  "Frames per slice handed to a lane.")
      ->capture_default_str();
  cmd->footer(
      "Duration comes from --duration, --frames, or the page's window.pagereel.duration.\n"
      "Time is virtual: frame n shows the page at exactly n/fps seconds, through CSS, Web\n"
      "Animations, SVG, requestAnimationFrame, performance.now, Date and timers.\n\n"
      "Examples:\n"
      "  pagereel render examples/lower-third -o lower-third.mp4 --duration 6\n"
      "  pagereel render page.html -o out.mov --alpha --fps 59.94 --size 1920x1080\n"
      "  pagereel render https://example.com/chart -o frames/%05d.png --frames 120\n\n"
      "Exit status: 0 written, 1 render failed, 2 bad input, 130 interrupted.");
  cmd->callback([request, progress, preroll, &run] {
    if (*preroll != "exact") {
      throw CLI::ValidationError("--preroll", "'" + *preroll + "' is not a pre-roll mode; only "
                                 "'exact' is offered ('jump' was removed: it rendered GSAP, "
                                 "d3 and late-started animations differently from one lane)");
    }
    static const std::map<std::string, app::ProgressStyle> kStyles = {
        {"auto", app::ProgressStyle::kAuto}, {"bar", app::ProgressStyle::kBar},
        {"plain", app::ProgressStyle::kPlain}, {"json", app::ProgressStyle::kJson},
        {"none", app::ProgressStyle::kNone}};
    request->progress = kStyles.at(*progress);
    run = [request] { return app::RunRender(*request); };
  });
}

}  // namespace pagereel::cli
