// Each subcommand of the `pagereel` binary registers itself on the root CLI11 app and, when
// chosen, sets `run` to the action main() will call. Only main.cc and these registrations
// know about CLI11; the work itself lives in app/ and the modules.
#ifndef PAGEREEL_CLI_COMMANDS_H_
#define PAGEREEL_CLI_COMMANDS_H_

#include <functional>

namespace CLI {
class App;
}

namespace pagereel::cli {

// The action of the chosen subcommand; returns the process exit code.
using Action = std::function<int()>;

void AddRenderCommand(CLI::App& root, Action& run);
void AddConcatCommand(CLI::App& root, Action& run);
void AddProbeCommand(CLI::App& root, Action& run);
void AddServeCommand(CLI::App& root, Action& run);
void AddLiveCommand(CLI::App& root, Action& run);

}  // namespace pagereel::cli

#endif  // PAGEREEL_CLI_COMMANDS_H_
