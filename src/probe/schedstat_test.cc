#include "probe/schedstat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pagereel::probe {
namespace {

using ::testing::HasSubstr;

HostFiles Fixture(const char* name) { return HostFiles(std::string(PAGEREEL_PROBE_TESTDATA) + "/" + name); }

TEST(FoldDigitsTest, FoldsRunsKeepsHashIndex) {
  EXPECT_EQ(FoldDigits("vf#0:3"), "vf#0:#");
  EXPECT_EQ(FoldDigits("vf#0:12"), "vf#0:#");
  EXPECT_EQ(FoldDigits("kworker/1:2H"), "kworker/#:#H");
  EXPECT_EQ(FoldDigits("ThreadPoolForeg"), "ThreadPoolForeg");
  EXPECT_EQ(FoldDigits("lane12-enc3"), "lane#-enc#");
}

TEST(SchedSnapshotTest, ReadsEveryProcess) {
  auto snap = TakeSchedSnapshot(Fixture("isolated"), {});
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->processes.size(), 2u);
  EXPECT_EQ(snap->processes[0].pid, 77);
  EXPECT_EQ(snap->processes[1].comm, "playout");
  ASSERT_EQ(snap->processes[1].tasks.size(), 3u);
  EXPECT_EQ(snap->processes[1].tasks[1].name, "vf#0:3");
  EXPECT_EQ(snap->processes[1].tasks[1].stat.wait_ns, 900000000);
  EXPECT_EQ(snap->processes[1].tasks[1].migrations, 12);
  EXPECT_TRUE(snap->migrations_visible);
}

TEST(SchedSnapshotTest, NamedPidThatDoesNotExist) {
  const int pids[] = {99999};
  auto snap = TakeSchedSnapshot(Fixture("isolated"), pids);
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(std::string(snap.status().message()), HasSubstr("--pid 99999"));
}

TEST(SchedSnapshotTest, MalformedSchedstatSkipsTheThread) {
  auto snap = TakeSchedSnapshot(Fixture("malformed"), {});
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->processes.size(), 1u);
  EXPECT_TRUE(snap->processes[0].tasks.empty());
  EXPECT_FALSE(snap->migrations_visible);
}

TEST(DiffSnapshotsTest, CoresRunningAndThreadsWaitingPerGroup) {
  const int pids[] = {4242};
  auto start = TakeSchedSnapshot(Fixture("isolated"), pids);
  ASSERT_TRUE(start.ok());
  SchedSnapshot end = *start;
  // Over 2 s: the vf threads each ran 1 s and waited 0.5 s; the main thread did nothing;
  // a new thread born during the run ran 0.4 s.
  auto& tasks = end.processes[0].tasks;
  tasks[1].stat.run_ns += 1'000'000'000;
  tasks[1].stat.wait_ns += 500'000'000;
  tasks[1].migrations = *tasks[1].migrations + 3;
  tasks[2].stat.run_ns += 1'000'000'000;
  tasks[2].stat.wait_ns += 500'000'000;
  tasks.push_back(TaskSnapshot{4260, "vf#0:5", TaskSchedstat{400'000'000, 0, 4}, 1});
  auto usage = DiffSnapshots(*start, end, 2'000'000'000);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].pid, 4242);
  EXPECT_EQ(usage[0].threads, 4);
  EXPECT_DOUBLE_EQ(usage[0].cores_running, 1.2);
  EXPECT_DOUBLE_EQ(usage[0].threads_waiting, 0.5);
  EXPECT_EQ(usage[0].migrations, 4);
  ASSERT_EQ(usage[0].groups.size(), 2u);
  EXPECT_EQ(usage[0].groups[0].group, "vf#0:#");
  EXPECT_EQ(usage[0].groups[0].threads, 3);
  EXPECT_DOUBLE_EQ(usage[0].groups[0].cores_running, 1.2);
}

TEST(DiffSnapshotsTest, ProcessGoneAtEndIsLeftOut) {
  auto start = TakeSchedSnapshot(Fixture("isolated"), {});
  ASSERT_TRUE(start.ok());
  SchedSnapshot end = *start;
  end.processes.erase(end.processes.begin());
  EXPECT_EQ(DiffSnapshots(*start, end, 1'000'000'000).size(), 1u);
  EXPECT_TRUE(DiffSnapshots(*start, end, 0).empty());
}

}  // namespace
}  // namespace pagereel::probe
