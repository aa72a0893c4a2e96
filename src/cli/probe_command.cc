// `pagereel probe`: placeholder until the probe module lands (issue 3).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/commands.h"

namespace pagereel::cli {

void AddProbeCommand(CLI::App& root, Action& run) {
  CLI::App* probe = root.add_subcommand("probe", "Measure the host's frame-clock health.");
  probe->callback([&run] {
    run = [] {
      std::fputs("pagereel probe: not built yet\n", stderr);
      return 1;
    };
  });
}

}  // namespace pagereel::cli
