// `pagereel probe`, `pagereel probe clock`, `pagereel probe host`: flags to options, then the
// probe module does the work. Exit codes: 0 done, 1 the measurement failed, 2 bad input.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/rational.h"
#include "cli/commands.h"
#include "probe/clock_probe.h"
#include "probe/duration.h"
#include "probe/host.h"
#include "probe/fold.h"
#include "probe/host_files.h"
#include "probe/probe_output.h"
#include "probe/probe_run.h"

namespace pagereel::cli {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

std::atomic<bool> g_stop{false};

extern "C" void OnInterrupt(int) { g_stop.store(true); }

// Ctrl-C ends the measurement early and still prints what was measured.
void StopOnInterrupt() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int Fail(std::string_view command, const Status& status) {
  std::fprintf(stderr, "pagereel %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(status.message().size()), status.message().data());
  const bool bad_input =
      status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kNotFound;
  return bad_input ? kExitBadInput : kExitFailed;
}

// The whole of `text` as a number.
template <typename T>
bool ParseExact(const std::string& text, T& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Result<double> ParsePositive(const std::string& text, std::string_view flag, std::string_view what) {
  double value = 0;
  if (!ParseExact(text, value) || !(value > 0) || !std::isfinite(value)) {
    return InvalidArgumentError(std::string(flag) + " '" + text + "': must be a positive " + std::string(what));
  }
  return value;
}

// A file we can write when the run ends: checked before the run, so a typo does not cost
// the whole measurement.
Status CheckWritable(const std::string& path, std::string_view flag) {
  if (path.empty()) return InvalidArgumentError(std::string(flag) + ": needs a file name");
  if (::access(path.c_str(), F_OK) == 0) {
    if (::access(path.c_str(), W_OK) != 0) return ErrnoError(std::string(flag) + " " + path, errno);
    return Status::Ok();
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(dir.c_str(), W_OK) != 0) {
    return InvalidArgumentError(std::string(flag) + " " + path + ": cannot write to directory " + dir + " (" +
                                std::strerror(errno) + ")");
  }
  return Status::Ok();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return ErrnoError(path, errno);
  const size_t written = std::fwrite(text.data(), 1, text.size(), f);
  const int close_result = std::fclose(f);
  if (written != text.size() || close_result != 0) return IoError(path + ": write failed");
  return Status::Ok();
}

struct SamplerFlags {
  std::string fps, period, duration = "10", rate = "100", report;
  std::vector<std::string> pids;
  int bins = 32, top = 10;
  uint64_t seed = 0;
  bool json = false;
};

Result<probe::ProbeOptions> ToProbeOptions(const SamplerFlags& f) {
  probe::ProbeOptions o;
  if (!f.fps.empty() && !f.period.empty()) {
    return InvalidArgumentError("--fps and --period both set the fold period; give one");
  }
  if (!f.fps.empty()) {
    auto parsed = ParseFrameRate(f.fps);
    if (!parsed.ok()) return parsed.status().WithContext("--fps");
    const Rational fps = *parsed;
    o.period_ns = probe::PeriodFromFrameRate(fps);
    o.period_source = fps.ToString() + " fps";
  } else if (!f.period.empty()) {
    PR_ASSIGN_OR_RETURN(auto period, probe::ParseDuration(f.period, "--period", probe::BareNumber::kRejected));
    o.period_ns = Rational::Make(period.count(), 1);
    o.period_source = "a period of " + f.period;
  }
  PR_ASSIGN_OR_RETURN(o.duration, probe::ParseDuration(f.duration, "--duration", probe::BareNumber::kSeconds));
  PR_ASSIGN_OR_RETURN(o.rate_hz, ParsePositive(f.rate, "--rate", "number of samples per second"));
  for (const std::string& text : f.pids) {
    int pid = 0;
    if (!ParseExact(text, pid) || pid <= 0) return InvalidArgumentError("--pid '" + text + "': not a process id");
    o.pids.push_back(pid);
  }
  o.fold_bins = f.bins;
  o.top_processes = f.top;
  o.seed = f.seed;
  o.stop = &g_stop;
  return o;
}

int RunSamplerCommand(const SamplerFlags& flags) {
  auto options = ToProbeOptions(flags);
  if (!options.ok()) return Fail("probe", options.status());
  if (!flags.report.empty()) {
    if (Status s = CheckWritable(flags.report, "--report"); !s.ok()) return Fail("probe", s);
  }
  probe::HostFiles files;
  if (Status s = probe::ValidateProbeOptions(*options, files); !s.ok()) return Fail("probe", s);
  StopOnInterrupt();
  auto report = probe::RunProbe(*options, files);
  if (!report.ok()) return Fail("probe", report.status());
  const std::string out = flags.json ? probe::ProbeReportJson(*report) : probe::ProbeReportText(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!flags.report.empty()) {
    auto html = probe::ProbeReportHtml(*report);
    if (!html.ok()) return Fail("probe", html.status());
    if (Status s = WriteFile(flags.report, *html); !s.ok()) return Fail("probe", s);
    if (!flags.json) std::printf("\n  report written to %s\n", flags.report.c_str());
  }
  return 0;
}

struct ClockFlags {
  std::string fps = "60", duration = "10", threshold = "500us";
  std::optional<int> cpu, fifo;
  bool json = false;
};

int RunClockCommand(const ClockFlags& flags) {
  probe::ClockOptions o;
  auto fps = ParseFrameRate(flags.fps);
  if (!fps.ok()) return Fail("probe clock", fps.status().WithContext("--fps"));
  o.fps = *fps;
  auto duration = probe::ParseDuration(flags.duration, "--duration", probe::BareNumber::kSeconds);
  if (!duration.ok()) return Fail("probe clock", duration.status());
  o.duration = *duration;
  auto threshold = probe::ParseDuration(flags.threshold, "--threshold", probe::BareNumber::kRejected);
  if (!threshold.ok()) return Fail("probe clock", threshold.status());
  o.threshold = *threshold;
  o.cpu = flags.cpu;
  o.fifo_priority = flags.fifo;
  o.stop = &g_stop;
  if (Status s = probe::ValidateClockOptions(o); !s.ok()) return Fail("probe clock", s);
  StopOnInterrupt();
  probe::ClockHooks hooks;
  // The tripwire goes to stderr, one write per line, so --json on stdout stays clean.
  hooks.on_late = [](const probe::Excursion& e) {
    const std::string line = probe::ExcursionLine(e) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
  auto report = probe::RunClockProbe(o, hooks, probe::SystemTickClock(), probe::HostFiles());
  if (!report.ok()) return Fail("probe clock", report.status());
  const std::string out = flags.json ? probe::ClockReportJson(*report) : probe::ClockReportText(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int RunHostCommand(bool json) {
  const auto findings = probe::InspectHost(probe::HostFiles());
  const std::string out = json ? probe::HostFindingsJson(findings) : probe::HostFindingsText(findings);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void AddProbeCommand(CLI::App& root, Action& run) {
  CLI::App* probe = root.add_subcommand(
      "probe",
      "Measure the host's frame-clock health: the runnable-thread count sampled at Poisson\n"
      "instants and folded on the frame period, its periodogram, CPU pressure (PSI) and\n"
      "run-queue wait per process. Subcommands: 'clock' (a frame clock's phase) and 'host'\n"
      "(the timing configuration).");
  probe->require_subcommand(0, 1);
  auto flags = std::make_shared<SamplerFlags>();
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
  auto clock_flags = std::make_shared<ClockFlags>();
  clock->add_option("--fps", clock_flags->fps, "Tick rate: 60, 59.94, 30000/1001 (default 60)");
  clock->add_option("--duration", clock_flags->duration, "How long to run: 10, 60s, 500ms (default 10 s)");
  clock->add_option("--threshold", clock_flags->threshold, "A tick later than this is late (default 500us)");
  clock->add_option("--cpu", clock_flags->cpu, "Pin the clock thread to this CPU");
  clock->add_option("--fifo", clock_flags->fifo, "Run the clock thread SCHED_FIFO at this priority (1-99)");
  clock->add_flag("--json", clock_flags->json, "Print one JSON object instead of the table");
  clock->footer("Examples:\n  pagereel probe clock --fps 60 --duration 60\n"
                "  sudo pagereel probe clock --fps 50 --cpu 3 --fifo 80 --threshold 200us --json");
  clock->callback([clock_flags, &run] { run = [clock_flags] { return RunClockCommand(*clock_flags); }; });

  CLI::App* host = probe->add_subcommand(
      "host", "Read and explain the host's timing configuration: isolated CPUs, nohz_full,\n"
              "timer migration, tick rate, IRQ affinity, clocksource, frequency governor.");
  auto host_json = std::make_shared<bool>(false);
  host->add_flag("--json", *host_json, "Print one JSON object instead of the table");
  host->callback([host_json, &run] { run = [host_json] { return RunHostCommand(*host_json); }; });

  probe->callback([probe, flags, &run] {
    if (!probe->get_subcommands().empty()) return;  // 'clock' or 'host' set run.
    run = [flags] { return RunSamplerCommand(*flags); };
  });
}

}  // namespace pagereel::cli
