#include "probe/probe_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "probe/probe_output.h"
#include "probe/report_assets.h"
#include "probe/synthetic_series.h"

namespace pagereel::probe {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

HostFiles Fixture(const char* name) { return HostFiles(std::string(PAGEREEL_PROBE_TESTDATA) + "/" + name); }

TEST(ValidateProbeOptionsTest, RejectsBadInput) {
  HostFiles files = Fixture("isolated");
  ProbeOptions o;
  EXPECT_TRUE(ValidateProbeOptions(o, files).ok());
  o.rate_hz = 0;
  EXPECT_THAT(std::string(ValidateProbeOptions(o, files).message()), HasSubstr("--rate"));
  o.rate_hz = -5;
  EXPECT_FALSE(ValidateProbeOptions(o, files).ok());
  o = ProbeOptions();
  o.duration = 0s;
  EXPECT_THAT(std::string(ValidateProbeOptions(o, files).message()), HasSubstr("--duration"));
  o = ProbeOptions();
  o.pids = {4242, 31337};
  const Status s = ValidateProbeOptions(o, files);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--pid 31337: no such process"));
}

TEST(CountOnlineCpusTest, FromSysOrCpuinfo) {
  EXPECT_EQ(CountOnlineCpus(Fixture("isolated")), 8);
  EXPECT_EQ(CountOnlineCpus(Fixture("nopsi")), 2);
  EXPECT_EQ(CountOnlineCpus(Fixture("malformed")), 1);  // Both files broken: still runs.
}

TEST(AnalyzeTest, SummaryAndJsonKeys) {
  SyntheticSpike spike;
  spike.hz = 60;
  spike.phase_s = 0.004;
  spike.width_s = 0.002;
  spike.height = 3;
  ProbeOptions o;
  const ProbeReport r = Analyze(o, 2, MakeSpikeSeries(spike, 10, 200, 1));
  EXPECT_EQ(r.runnable.p50, 1);
  EXPECT_EQ(r.runnable.max, 5);
  EXPECT_GT(r.above_cpus_share, 0.05);
  EXPECT_GE(r.fold.peak_phase_ns, 4'000'000);
  EXPECT_LE(r.fold.peak_phase_ns, 6'000'000);

  const auto j = nlohmann::json::parse(ProbeReportJson(r));
  for (const char* key : {"mean", "p50", "p95", "p99", "max", "above_cpus_share"}) {
    EXPECT_TRUE(j["runnable"].contains(key)) << key;
  }
  for (const char* key : {"period_ns", "bins", "peak_phase_ns", "peak", "floor", "half_height_width_ns"}) {
    EXPECT_TRUE(j["fold"].contains(key)) << key;
  }
  EXPECT_EQ(j["fold"]["bins"].size(), 32u);
  EXPECT_NEAR(j["periodogram"]["peaks"][0]["hz"].get<double>(), 60, 0.01);
  EXPECT_TRUE(j["psi"].contains("cpu"));
  EXPECT_TRUE(j["schedstat"]["processes"].is_array());
  for (const char* key : {"p50", "p95", "p99"}) EXPECT_TRUE(j["sampler"]["wake_delay_us"].contains(key));
  for (const char* key : {"load1_min", "load1_max", "time_mean"}) EXPECT_TRUE(j["loadavg"].contains(key));

  const std::string text = ProbeReportText(r);
  EXPECT_THAT(text, HasSubstr("fold on default 60 fps"));
  EXPECT_THAT(text, HasSubstr("\u2588"));  // The fold's bar chart.
}

TEST(RunProbeTest, OnFixtureHostWithPsiAndSchedstat) {
  ProbeOptions o;
  o.duration = 50ms;
  o.rate_hz = 1000;
  o.seed = 3;
  auto r = RunProbe(o, Fixture("isolated"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->cpus, 8);
  EXPECT_EQ(r->runnable.max, 4);  // Fixture shows 5 running, one of them the sampler.
  ASSERT_TRUE(r->psi_start.has_value());
  ASSERT_TRUE(r->psi_end.has_value());
  EXPECT_EQ(r->processes.size(), 2u);
  const auto j = nlohmann::json::parse(ProbeReportJson(*r));
  EXPECT_EQ(j["psi"]["cpu"]["some_total_us"], 0);
  EXPECT_EQ(j["psi"]["cpu"]["full_avg10"], 0.5);
}

TEST(RunProbeTest, MissingPressureIsANoteNotAFailure) {
  ProbeOptions o;
  o.duration = 20ms;
  auto r = RunProbe(o, Fixture("nopsi"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->psi_start.has_value());
  EXPECT_THAT(r->psi_note, HasSubstr("/proc/pressure/cpu is missing"));
  const auto j = nlohmann::json::parse(ProbeReportJson(*r));
  EXPECT_TRUE(j["psi"]["cpu"].is_null());
  EXPECT_THAT(j["psi"]["note"].get<std::string>(), HasSubstr("CONFIG_PSI"));
  EXPECT_THAT(ProbeReportText(*r), HasSubstr("CONFIG_PSI"));
}

TEST(RunProbeTest, MalformedLoadavgFailsClearly) {
  ProbeOptions o;
  o.duration = 20ms;
  o.rate_hz = 1000;
  auto r = RunProbe(o, Fixture("malformed"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("/proc/loadavg is malformed"));
}

}  // namespace
}  // namespace pagereel::probe

namespace pagereel::probe {
namespace {

TEST(ProbeReportHtmlTest, SelfContainedPageWithChartsAndEscapedData) {
  if (ChartLibraryJs().empty()) {
    EXPECT_EQ(ProbeReportHtml(ProbeReport()).status().code(), StatusCode::kFailedPrecondition);
    GTEST_SKIP() << "built with PAGEREEL_PROBE_CHARTS=OFF or without npm";
  }
  SyntheticSpike spike;
  ProbeReport r = Analyze(ProbeOptions(), 2, MakeSpikeSeries(spike, 5, 200, 2));
  ProcessUsage evil;
  evil.pid = 7;
  evil.comm = "</script><b>x";
  r.processes.push_back(evil);
  auto html = ProbeReportHtml(r);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_THAT(*html, HasSubstr("<!doctype html>"));
  EXPECT_THAT(*html, HasSubstr("var uPlot="));             // The library, inlined.
  EXPECT_THAT(*html, HasSubstr("\"spectrum_amplitude\""));  // The data, with the spectrum.
  EXPECT_THAT(*html, HasSubstr("<\\/script><b>x"));         // A process name cannot end the script.
  EXPECT_EQ(html->find("src=\"http"), std::string::npos);   // Nothing fetched when opened.
  EXPECT_EQ(html->find("</script><b>"), std::string::npos);
}

}  // namespace
}  // namespace pagereel::probe
