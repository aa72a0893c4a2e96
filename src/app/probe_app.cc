// `pagereel probe`, `pagereel probe clock`, `pagereel probe host`: the command line's words
// to probe's options, the measurement, and its report. Exit codes: 0 done, 1 the
// measurement failed, 2 bad input.
#include "app/probe_app.h"

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
#include "base/tick_clock.h"
#include "probe/clock_probe.h"
#include "probe/duration.h"
#include "probe/fold.h"
#include "probe/host.h"
#include "probe/host_files.h"
#include "probe/probe_output.h"
#include "probe/probe_run.h"

namespace pagereel::app {
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


Result<probe::ProbeOptions> ToProbeOptions(const ProbeRequest& f) {
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

}  // namespace

int RunProbe(const ProbeRequest& flags) {
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


int RunProbeClock(const ProbeClockRequest& flags) {
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
  auto report = probe::RunClockProbe(o, hooks, SystemTickClock(), probe::HostFiles());
  if (!report.ok()) return Fail("probe clock", report.status());
  const std::string out = flags.json ? probe::ClockReportJson(*report) : probe::ClockReportText(*report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int RunProbeHost(bool json) {
  const auto findings = probe::InspectHost(probe::HostFiles());
  const std::string out = json ? probe::HostFindingsJson(findings) : probe::HostFindingsText(findings);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace pagereel::app
