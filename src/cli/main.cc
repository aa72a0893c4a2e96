// The pagereel binary: parses the command line and hands over to the chosen subcommand.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  // A browser that dies while we write to its pipe must give us EPIPE, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App root{
      "pagereel: turns web pages into frames on a clock.\n"
      "Render deterministic films of a page, serve captures of pages over HTTP, put HTML\n"
      "graphics on air on an engine-owned frame clock, and measure the host's frame-clock\n"
      "health.",
      "pagereel"};
  root.set_version_flag("--version", "pagereel " PAGEREEL_VERSION);
  root.require_subcommand(1);
  root.footer("Run 'pagereel COMMAND --help' for a command's options and examples.");

  pagereel::cli::Action run;
  pagereel::cli::AddRenderCommand(root, run);
  pagereel::cli::AddConcatCommand(root, run);
  pagereel::cli::AddServeCommand(root, run);
  pagereel::cli::AddLiveCommand(root, run);
  pagereel::cli::AddProbeCommand(root, run);

  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help) and names its own exit codes (106, 109...);
    // pagereel's are 0 for help and version and 2 for any bad command line.
    return root.exit(e) == 0 ? 0 : 2;
  }
  if (!run) {
    std::fputs("pagereel: no command chosen; see 'pagereel --help'\n", stderr);
    return 2;
  }
  return run();
}
