// `pagereel live`: the command line of the live graphics engine.
#include <CLI/CLI.hpp>

#include "app/live_app.h"
#include "cli/commands.h"

namespace pagereel::cli {

void AddLiveCommand(CLI::App& root, Action& run) {
  auto request = std::make_shared<app::LiveRequest>();
  CLI::App* cmd = root.add_subcommand(
      "live", "Put HTML graphics on air: pages drawn on an engine-owned frame clock, composited "
              "and sent to files and streams.");
  cmd->add_option("SHOW", request->show_file,
                  "A show file (.toml, or .json): format, sources, outputs, clock, control. "
                  "See docs/live.md. Without one, give --source and --output.");
  cmd->add_option("--source", request->sources,
                  "A page (an .html file, a folder with index.html, or an http(s) URL), full "
                  "frame; repeat for layers, bottom first (layers above the first are "
                  "transparent overlays).");
  cmd->add_option("--output", request->outputs,
                  "Where the program goes: a file (.mp4 fragmented, .mkv, .ts, .mov: playable "
                  "even if pagereel is killed), an .m3u8 HLS playlist, or udp://HOST:PORT, "
                  "srt://HOST:PORT (?mode=listener to wait for a caller), rtmp://HOST/APP/KEY. "
                  "Repeat for more.");
  cmd->add_option("--size", request->size, "Program size, WIDTHxHEIGHT (flags only).")
      ->capture_default_str();
  cmd->add_option("--fps", request->fps,
                  "Exact frame rate (flags only): 25, 50, 29.97 (30000/1001), 60 ...")
      ->capture_default_str();
  cmd->add_option("--duration", request->duration_seconds,
                  "Seconds on air, then the outputs are finished; default: until SIGTERM or "
                  "Ctrl-C. Shorter than one frame is refused.");
  cmd->add_option("--fifo", request->fifo_priority,
                  "Run the clock thread SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE).");
  cmd->add_option("--cpu", request->cpu, "Pin the clock thread to this CPU.");
  cmd->add_flag("--no-stagger", request->no_stagger,
                "Begin every worker's frames at phase 0 (for comparison; by default worker k "
                "begins at phase bitreverse(k) of the period).");
  cmd->add_flag("--no-audio", request->no_audio,
                "Mute the sources' browsers and send pictures only (by default their sound is "
                "captured, mixed and carried by every output: docs/live.md, \"Sound\").");
  cmd->add_option("--late-threshold-us", request->late_threshold_us,
                  "A tick later than this is counted late and written to the as-run log "
                  "(default 500).");
  cmd->add_option("--as-run", request->as_run_log,
                  "Append the as-run log (show start and end, commands, late ticks, restarts, "
                  "reconnects, each with its tick) to this file.");
  cmd->add_option("--control", request->control,
                  "HOST:PORT of the control and status server (HTTP and WebSocket: /status, "
                  "/metrics, the operator page at /, show/hide/call/navigate commands; see "
                  "docs/live.md); overrides the show file's control.listen. Default "
                  "127.0.0.1:8090 (loopback only); port 0 picks a free one; \"none\" runs "
                  "without it.");
  cmd->add_option("--amcp", request->amcp,
                  "HOST:PORT on which to speak AMCP, CasparCG's control protocol, so CasparCG "
                  "clients and SPX drive the show (CG ADD/PLAY/UPDATE/STOP..., PLAY/STOP/CLEAR; "
                  "see docs/live.md); overrides the show file's amcp.listen. With --source, "
                  "source k is layer k of channel 1. Off by default; \"none\" turns it off.");
  cmd->add_option("--status-every", request->status_every_seconds,
                  "Seconds between status lines on stderr; 0 for none.")
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  pagereel live --source examples/lower-third --output program.mp4 --duration 30\n"
      "  pagereel live --source bg.html --source examples/lower-third --size 1920x1080 \\\n"
      "      --fps 50 --output srt://127.0.0.1:9000 --output program.mkv\n"
      "  pagereel live examples/show.toml\n"
      "  pagereel live --source examples/ticker --output program.mp4 --amcp 127.0.0.1:5250\n\n"
      "Output frame n carries timestamp n/fps exactly: one frame per tick, whatever the\n"
      "sources do. A source that has no new picture repeats its last (counted).\n\n"
      "Exit status: 0 the show ended as asked, 1 it failed, 2 bad input.");
  cmd->callback([request, &run] {
    if (request->show_file.empty() && request->sources.empty()) {
      throw CLI::ValidationError("SHOW", "give a show file, or at least one --source and --output");
    }
    if (!request->show_file.empty() && (!request->sources.empty() || !request->outputs.empty())) {
      throw CLI::ValidationError("SHOW", "a show file already names its sources and outputs; "
                                         "give either the file or --source/--output");
    }
    run = [request] { return app::RunLive(*request); };
  });
}

}  // namespace pagereel::cli
