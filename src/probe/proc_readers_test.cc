#include "probe/proc_readers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/host_files.h"

namespace pagereel::probe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

HostFiles Fixture(const char* name) { return HostFiles(std::string(PAGEREEL_PROBE_TESTDATA) + "/" + name); }

TEST(HostFilesTest, ReadsAndListsBelowRoot) {
  HostFiles files = Fixture("isolated");
  auto text = files.Read("/proc/loadavg");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "3.20 2.10 1.50 5/812 99123\n");
  auto tasks = files.List("/proc/4242/task");
  ASSERT_TRUE(tasks.ok());
  EXPECT_THAT(*tasks, ElementsAre("4242", "4250", "4251"));
  EXPECT_TRUE(files.Exists("/proc/4242"));
  EXPECT_FALSE(files.Exists("/proc/9"));
}

TEST(HostFilesTest, MissingFileIsNotFound) {
  auto text = Fixture("nopsi").Read("/proc/pressure/cpu");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("/proc/pressure/cpu"));
}

TEST(LoadAvgTest, ParsesFixture) {
  auto load = ParseLoadAvg(*Fixture("isolated").Read("/proc/loadavg"));
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  EXPECT_DOUBLE_EQ(load->load1, 3.20);
  EXPECT_DOUBLE_EQ(load->load15, 1.50);
  EXPECT_EQ(load->running, 5);
  EXPECT_EQ(load->total, 812);
}

TEST(LoadAvgTest, MalformedGivesClearError) {
  auto load = ParseLoadAvg(*Fixture("malformed").Read("/proc/loadavg"));
  ASSERT_FALSE(load.ok());
  EXPECT_THAT(std::string(load.status().message()), HasSubstr("/proc/loadavg is malformed"));
  EXPECT_FALSE(ParseLoadAvg("").ok());
  EXPECT_FALSE(ParseLoadAvg("1 2 3 x/9 1").ok());
  EXPECT_FALSE(ParseLoadAvg("1 2 3 4 1").ok());
}

TEST(SchedstatTest, ParsesThreeFields) {
  auto s = ParseSchedstat(*Fixture("isolated").Read("/proc/4242/task/4250/schedstat"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->run_ns, 3000000000);
  EXPECT_EQ(s->wait_ns, 900000000);
  EXPECT_EQ(s->timeslices, 9000);
  EXPECT_FALSE(ParseSchedstat(*Fixture("malformed").Read("/proc/500/task/500/schedstat")).ok());
  EXPECT_FALSE(ParseSchedstat("1 2 3 4").ok());
}

TEST(SchedMigrationsTest, ReadsFieldOrNothing) {
  EXPECT_EQ(ParseSchedMigrations(*Fixture("isolated").Read("/proc/4242/task/4250/sched")), 12);
  EXPECT_EQ(ParseSchedMigrations("se.exec_start : 1.0\n"), std::nullopt);
  EXPECT_EQ(ParseSchedMigrations("se.nr_migrations : many\n"), std::nullopt);
}

TEST(CpuListTest, RangesAndSingles) {
  auto cpus = ParseCpuList(*Fixture("isolated").Read("/sys/devices/system/cpu/isolated"));
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(2, 3, 6, 7));
  auto empty = ParseCpuList("\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(ParseCpuList(*Fixture("malformed").Read("/sys/devices/system/cpu/isolated")).ok());
  EXPECT_FALSE(ParseCpuList("0-").ok());
  EXPECT_FALSE(ParseCpuList("5-2").ok());
}

TEST(TimerListTest, FindsTimersPerCpuAndClock) {
  auto timers = ParseTimerList(*Fixture("isolated").Read("/proc/timer_list"));
  ASSERT_TRUE(timers.ok()) << timers.status().ToString();
  ASSERT_EQ(timers->size(), 3u);
  EXPECT_EQ((*timers)[0].function, "tick_nohz_handler");
  EXPECT_EQ((*timers)[1].cpu, 0);
  EXPECT_EQ((*timers)[1].clock_base, 0);
  EXPECT_EQ((*timers)[1].function, "hrtimer_wakeup");
  EXPECT_EQ((*timers)[1].soft_expiry_ns, 406559126316);
  EXPECT_EQ((*timers)[1].hard_expiry_ns, 406559176316);
  EXPECT_EQ((*timers)[2].cpu, 1);
  EXPECT_EQ((*timers)[2].soft_expiry_ns, 411520063455);
}

TEST(TimerListTest, MalformedGivesError) {
  EXPECT_FALSE(ParseTimerList(*Fixture("malformed").Read("/proc/timer_list")).ok());
  EXPECT_FALSE(ParseTimerList("cpu: 0\n clock 0:\n #0: <0>, hrtimer_wakeup, S:01\n # expires at 5 nsecs\n").ok());
}

TEST(CpuInfoTest, CountsAndModel) {
  CpuInfo info = ParseCpuInfo(*Fixture("isolated").Read("/proc/cpuinfo"));
  EXPECT_EQ(info.logical_cpus, 8);
  EXPECT_EQ(info.model, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
  CpuInfo broken = ParseCpuInfo(*Fixture("malformed").Read("/proc/cpuinfo"));
  EXPECT_EQ(broken.logical_cpus, 0);
  EXPECT_EQ(broken.model, "");
}

TEST(IntegerFileTest, ParsesOrFails) {
  EXPECT_EQ(*ParseIntegerFile(*Fixture("isolated").Read("/proc/sys/kernel/timer_migration")), 1);
  EXPECT_FALSE(ParseIntegerFile(*Fixture("malformed").Read("/proc/sys/kernel/timer_migration")).ok());
}

}  // namespace
}  // namespace pagereel::probe
