// `pagereel probe`, `pagereel probe clock`, `pagereel probe host`: the command line; the
// work is app/probe_app.h's.
#include <CLI/CLI.hpp>

#include <memory>

#include "app/probe_app.h"
#include "cli/commands.h"

namespace pagereel::cli {

void AddProbeCommand(CLI::App& root, Action& run) {
  CLI::App* probe = root.add_subcommand(
      "probe",
      "Measure the host's frame-clock health: the runnable-thread count sampled at Poisson\n"
      "instants and folded on the frame period, its periodogram, CPU pressure (PSI) and\n"
      "run-queue wait per process. Subcommands: 'clock' (a frame clock's phase) and 'host'\n"
      "(the timing configuration).");
  probe->require_subcommand(0, 1);
  auto flags = std::make_shared<app::ProbeRequest>();
  probe->add_option("--fps", flags->fps, "Fold on this frame rate: 60, 29.97, 30000/1001 (default 60)");
  probe->add_option("--period", flags->period, "Fold on this period instead: 16.667ms, 20ms");
  probe->add_option("--duration", flags->duration, "How long to sample: 10, 2.5s, 500ms (default 10 s)");
  probe->add_option("--rate", flags->rate, "Mean samples per second (default 100)");
  probe->add_option("--pid", flags->pids, "Report these processes (repeatable); default: the busiest");
  probe->add_option("--bins", flags->bins, "Phase bins in the fold (default 32)");
  probe->add_option("--top", flags->top, "How many processes to show without --pid (default 10)");
  probe->add_option("--seed", flags->seed, "Seed of the sampling instants (default random)");
  probe->add_flag("--json", flags->json, "Print one JSON object instead of the table");
  probe->add_option("--report", flags->report, "Also write a self-contained HTML page with charts");
  probe->footer(
      "Examples:\n"
      "  pagereel probe --fps 60 --duration 60\n"
      "  pagereel probe --period 20ms --pid 1234 --json\n"
      "  pagereel probe --report probe.html");

  CLI::App* clock = probe->add_subcommand(
      "clock",
      "Run a frame clock (absolute sleeps on CLOCK_MONOTONIC) and measure its phase: how late\n"
      "each tick wakes. A line is printed on stderr the moment a tick is late.");
  auto clock_flags = std::make_shared<app::ProbeClockRequest>();
  clock->add_option("--fps", clock_flags->fps, "Tick rate: 60, 59.94, 30000/1001 (default 60)");
  clock->add_option("--duration", clock_flags->duration, "How long to run: 10, 60s, 500ms (default 10 s)");
  clock->add_option("--threshold", clock_flags->threshold, "A tick later than this is late (default 500us)");
  clock->add_option("--cpu", clock_flags->cpu, "Pin the clock thread to this CPU");
  clock->add_option("--fifo", clock_flags->fifo, "Run the clock thread SCHED_FIFO at this priority (1-99)");
  clock->add_flag("--json", clock_flags->json, "Print one JSON object instead of the table");
  clock->footer("Examples:\n  pagereel probe clock --fps 60 --duration 60\n"
                "  sudo pagereel probe clock --fps 50 --cpu 3 --fifo 80 --threshold 200us --json");
  clock->callback([clock_flags, &run] { run = [clock_flags] { return app::RunProbeClock(*clock_flags); }; });

  CLI::App* host = probe->add_subcommand(
      "host", "Read and explain the host's timing configuration: isolated CPUs, nohz_full,\n"
              "timer migration, tick rate, IRQ affinity, clocksource, frequency governor.");
  auto host_json = std::make_shared<bool>(false);
  host->add_flag("--json", *host_json, "Print one JSON object instead of the table");
  host->callback([host_json, &run] { run = [host_json] { return app::RunProbeHost(*host_json); }; });

  probe->callback([probe, flags, &run] {
    if (!probe->get_subcommands().empty()) return;  // 'clock' or 'host' set run.
    run = [flags] { return app::RunProbe(*flags); };
  });
}

}  // namespace pagereel::cli
