#include "probe/host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "probe/probe_output.h"

namespace pagereel::probe {
namespace {

using ::testing::HasSubstr;
using Level = HostFinding::Level;

HostFiles Fixture(const char* name) { return HostFiles(std::string(PAGEREEL_PROBE_TESTDATA) + "/" + name); }

const HostFinding& Find(const std::vector<HostFinding>& findings, std::string_view topic) {
  for (const auto& f : findings) {
    if (f.topic == topic) return f;
  }
  static const HostFinding kNone{Level::kInfo, "missing", "", ""};
  ADD_FAILURE() << "no finding about " << topic;
  return kNone;
}

TEST(FormatCpuListTest, Ranges) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(InspectHostTest, IsolatedHostWarnsAboutTimerMigrationIrqsAndGovernor) {
  const auto f = InspectHost(Fixture("isolated"));
  EXPECT_THAT(Find(f, "CPUs").value, HasSubstr("8 online, Intel(R) Xeon(R) Gold 6338"));
  EXPECT_EQ(Find(f, "isolated CPUs").value, "2-3,6-7");
  EXPECT_EQ(Find(f, "nohz_full").value, "2-3,6-7");
  const HostFinding& migration = Find(f, "kernel.timer_migration");
  EXPECT_EQ(migration.level, Level::kWarn);
  EXPECT_THAT(migration.meaning, HasSubstr("first housekeeping CPU"));
  EXPECT_THAT(migration.meaning, HasSubstr("kernel.timer_migration=0"));
  EXPECT_EQ(Find(f, "tick rate").value, "1000 Hz");
  const HostFinding& irqs = Find(f, "IRQs on isolated CPUs");
  EXPECT_EQ(irqs.level, Level::kWarn);
  EXPECT_EQ(irqs.value, "25,26");
  EXPECT_EQ(Find(f, "clocksource").level, Level::kOk);
  const HostFinding& governor = Find(f, "frequency governor");
  EXPECT_EQ(governor.level, Level::kWarn);
  EXPECT_EQ(governor.value, "performance (CPU 0), powersave (CPU 3)");
  EXPECT_EQ(Find(f, "RT throttling").value, "950000 us per second");
}

TEST(InspectHostTest, PlainVmWithoutPsi) {
  const auto f = InspectHost(Fixture("nopsi"));
  EXPECT_EQ(Find(f, "isolated CPUs").value, "none");
  EXPECT_EQ(Find(f, "nohz_full").value, "not built");
  EXPECT_EQ(Find(f, "kernel.timer_migration").level, Level::kOk);
  EXPECT_EQ(Find(f, "tick rate").value, "unknown");
  EXPECT_THAT(Find(f, "clocksource").meaning, HasSubstr("virtual machine"));
  EXPECT_EQ(Find(f, "frequency governor").value, "none visible");
  EXPECT_EQ(Find(f, "pressure stall information").level, Level::kWarn);
  const std::string text = HostFindingsText(f);
  EXPECT_THAT(text, HasSubstr("kvm-clock"));
  const auto j = nlohmann::json::parse(HostFindingsJson(f));
  EXPECT_GE(j["findings"].size(), 8u);
}

TEST(InspectHostTest, AutogroupWithoutFifoSaysTheClockDoesNotOutrankOtherSessions) {
  const auto f = InspectHost(Fixture("isolated"));
  const HostFinding& autogroup = Find(f, "scheduler autogroup");
  EXPECT_EQ(autogroup.level, Level::kWarn);
  EXPECT_EQ(autogroup.value, "on (/autogroup-42 nice 0)");
  EXPECT_THAT(autogroup.meaning, HasSubstr("only within"));
  const HostFinding& clock = Find(f, "clock priority");
  EXPECT_EQ(clock.value, "nice -10 no, SCHED_FIFO no");
  EXPECT_EQ(clock.level, Level::kWarn);
  EXPECT_THAT(clock.meaning, HasSubstr("ulimit -r 50"));
  EXPECT_THAT(clock.meaning, HasSubstr("kernel.sched_autogroup_enabled=0"));

  const ClockScheduling s = InspectClockScheduling(Fixture("isolated"));
  EXPECT_EQ(s.autogroup, true);
  EXPECT_FALSE(s.nice_allowed);
  EXPECT_FALSE(s.fifo_allowed);
  EXPECT_THAT(DescribeClockScheduling(s), HasSubstr("nice ranks threads only within this process's autogroup"));
}

TEST(InspectHostTest, CapSysNiceAllowsFifoAndNice) {
  const ClockScheduling s = InspectClockScheduling(Fixture("nopsi"));
  EXPECT_EQ(s.autogroup, false);
  EXPECT_TRUE(s.cap_sys_nice);
  EXPECT_TRUE(s.nice_allowed);
  EXPECT_TRUE(s.fifo_allowed);
  EXPECT_THAT(DescribeClockScheduling(s), HasSubstr("--fifo 50"));
  EXPECT_EQ(Find(InspectHost(Fixture("nopsi")), "scheduler autogroup").value, "off");
}

TEST(InspectHostTest, MalformedFilesBecomeFindingsNotCrashes) {
  const auto f = InspectHost(Fixture("malformed"));
  EXPECT_EQ(Find(f, "isolated CPUs").value, "unknown");
  EXPECT_THAT(Find(f, "isolated CPUs").meaning, HasSubstr("malformed"));
  EXPECT_EQ(Find(f, "kernel.timer_migration").value, "unreadable");
  EXPECT_EQ(Find(f, "CPUs").value, "0 online");
}

TEST(InspectHostTest, EmptyRootStillAnswers) {
  const auto f = InspectHost(HostFiles("/nonexistent-root"));
  EXPECT_EQ(Find(f, "clocksource").value, "unknown");
}

}  // namespace
}  // namespace pagereel::probe
