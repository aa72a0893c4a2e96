// The show's tick arithmetic on simulated time: exact instants, phases, skipping.
#include "live/tick_schedule.h"

#include <gtest/gtest.h>

#include "live/show.h"

namespace pagereel::live {
namespace {

TEST(TickScheduleTest, TicksAreExactAndDoNotDrift) {
  const TickSchedule ntsc(1'000, Rational::Make(30000, 1001));
  EXPECT_EQ(ntsc.TickNs(0), 1'000);
  EXPECT_EQ(ntsc.TickNs(1), 1'000 + 33'366'666);  // 33.3666... ms, rounded down.
  EXPECT_EQ(ntsc.TickNs(30000), 1'000 + 1'001'000'000'000);
  // A day at 29.97: tick n is still exactly n * 1001/30000 s.
  const int64_t day = int64_t{30000} * 86400 / 1001;
  EXPECT_EQ(ntsc.TickNs(day) - 1'000, day * 1'001'000'000'000 / 30000);  // Fits in 64 bits.
  const TickSchedule pal(0, Rational{25, 1});
  for (int64_t n : {0, 1, 2, 1000, 90'000'000}) EXPECT_EQ(pal.TickNs(n), n * 40'000'000);
}

TEST(TickScheduleTest, WorkerPhasesFallWhereTheStaggerPutsThem) {
  const TickSchedule at25(0, Rational{25, 1});
  EXPECT_EQ(at25.PhaseOffsetNs(StaggerPhase(0)), 0);
  EXPECT_EQ(at25.PhaseOffsetNs(StaggerPhase(1)), 20'000'000);
  EXPECT_EQ(at25.PhaseOffsetNs(StaggerPhase(2)), 10'000'000);
  EXPECT_EQ(at25.PhaseOffsetNs(StaggerPhase(3)), 30'000'000);
  const TickSchedule at60(0, Rational{60, 1});
  EXPECT_EQ(at60.PhaseOffsetNs(StaggerPhase(4)), 2'083'333);  // 1/8 of 16.67 ms.
}

TEST(TickScheduleTest, AWorkerThatFellBehindSkipsToTheNextTickAhead) {
  const TickSchedule s(0, Rational{25, 1});  // 40 ms.
  const int64_t offset = 10'000'000;           // Phase 1/4.
  // Done with tick 5 (begun at 210 ms) at 230 ms: tick 6 at 250 ms is ahead.
  EXPECT_EQ(s.NextTick(5, 230'000'000, offset), 6);
  // Exactly at tick 6's instant: still tick 6.
  EXPECT_EQ(s.NextTick(5, 250'000'000, offset), 6);
  // Done at 335 ms: ticks 6 and 7 (250, 290 ms) have passed; 8 (330 ms) too; 9 is next.
  EXPECT_EQ(s.NextTick(5, 335'000'000, offset), 9);
  // A 10 s stall, done at 10,255 ms: tick 256 (10,250 ms at this phase) has passed.
  EXPECT_EQ(s.NextTick(5, 10'255'000'000, offset), 257);
  EXPECT_EQ(s.NextTick(5, 10'250'000'000, offset), 256);
  // Before the show's start: the next tick.
  EXPECT_EQ(s.NextTick(-1, -5'000'000, 0), 0);
}

}  // namespace
}  // namespace pagereel::live
