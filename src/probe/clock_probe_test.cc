#include "probe/clock_probe.h"

#include <deque>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "probe/fold.h"
#include "probe/probe_output.h"

namespace pagereel::probe {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// Simulated time: every sleep returns exactly at its deadline plus the lateness scripted
// for that call (0 when none), and never before "now".
class FakeClock final : public TickClock {
 public:
  std::map<int, int64_t> late_by_call;
  int64_t now = 5'000'000'000;
  int calls = 0;

  int64_t MonotonicNs() override { return now; }
  int64_t RealtimeNs() override { return now + 1'700'000'000'000'000'000; }
  void SleepUntil(int64_t deadline) override {
    now = std::max(now, deadline);
    if (auto it = late_by_call.find(calls); it != late_by_call.end()) now += it->second;
    ++calls;
  }
};

HostFiles Fixture(const char* name) { return HostFiles(std::string(PAGEREEL_PROBE_TESTDATA) + "/" + name); }

TEST(TickDeadlineTest, ExactRationalSchedule) {
  const Rational ntsc = PeriodFromFrameRate(Rational::Make(30000, 1001));
  EXPECT_EQ(TickDeadlineNs(0, ntsc, 1), 33'366'666);
  EXPECT_EQ(TickDeadlineNs(0, ntsc, 30000), 1001'000'000'000);  // Exactly 1001 s, no drift.
  EXPECT_EQ(TickDeadlineNs(7, PeriodFromFrameRate(Rational::Make(60, 1)), 3), 50'000'007);
}

TEST(ClockProbeTest, SimulatedTimeCountsLateAndDroppedTicksExactly) {
  FakeClock clock;
  clock.late_by_call = {{10, 2'000'000}, {20, 40'000'000}};  // Tick 20 wakes 2.4 periods late.
  ClockOptions o;
  o.fps = Rational::Make(60, 1);
  o.duration = 1s;
  o.timer_watch = TimerWatch::kOff;
  std::vector<int64_t> tripped;
  ClockHooks hooks;
  hooks.on_late = [&](const Excursion& e) { tripped.push_back(e.tick); };
  auto r = RunClockProbe(o, hooks, clock, Fixture("nopsi"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ticks_expected, 60);
  // Tick 21 is dropped (tick 22 was already due when tick 20 woke); tick 22 then wakes
  // 6.67 ms late.
  EXPECT_EQ(r->ticks, 59);
  EXPECT_EQ(r->ticks_missed, 1);
  EXPECT_EQ(r->late, 3);
  EXPECT_EQ(tripped, (std::vector<int64_t>{10, 20, 22}));
  ASSERT_EQ(r->excursions.size(), 3u);
  EXPECT_EQ(r->excursions[0].late_ns, 2'000'000);
  EXPECT_EQ(r->excursions[1].late_ns, 40'000'000);
  EXPECT_EQ(r->excursions[2].late_ns, 40'000'000 - 33'333'333);
  ASSERT_EQ(r->gaps_s.size(), 2u);
  EXPECT_NEAR(r->gaps_s[0], (10 * 50'000'000 / 3 + 40'000'000 - 2'000'000) * 1e-9, 1e-9);
  EXPECT_EQ(r->max_ns, 40'000'000);
  EXPECT_EQ(r->p50_ns, 0);
  EXPECT_EQ(r->timer_cpu_note, "not watched");

  const auto j = nlohmann::json::parse(ClockReportJson(*r));
  EXPECT_EQ(j["late"], 3);
  EXPECT_EQ(j["ticks"], 59);
  EXPECT_EQ(j["excursions"][1]["tick"], 20);
  EXPECT_THAT(ClockReportText(*r), HasSubstr("1 dropped"));
  EXPECT_THAT(ExcursionLine(r->excursions[0]), HasSubstr("LATE tick 10 woke 2.000 ms late"));
}

TEST(ClockProbeTest, RealClockCountsEveryTickAndSeesAForcedLateTick) {
  TickClock& clock = SystemTickClock();
  ClockOptions o;
  o.fps = Rational::Make(60, 1);
  o.duration = 500ms;
  std::vector<int64_t> tripped;
  ClockHooks hooks;
  hooks.on_late = [&](const Excursion& e) { tripped.push_back(e.tick); };
  // Fault injection: before sleeping for tick 5, stay busy until 2 ms past its deadline,
  // so that tick cannot wake less than 2 ms late, however idle the host.
  hooks.before_sleep = [&](int64_t tick, int64_t deadline) {
    if (tick != 5) return;
    while (clock.MonotonicNs() < deadline + 2'000'000) {
    }
  };
  auto r = RunClockProbe(o, hooks, clock, HostFiles());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ticks_expected, 30);
  EXPECT_EQ(r->ticks + r->ticks_missed, 30);
  EXPECT_GE(r->late, 1);
  bool found = false;
  for (const Excursion& e : r->excursions) {
    if (e.tick == 5) {
      found = true;
      EXPECT_GE(e.late_ns, 2'000'000);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_NE(std::find(tripped.begin(), tripped.end(), 5), tripped.end());
  EXPECT_FALSE(r->wake_cpus.empty());
  // Either the timer was seen on some CPU, or the report says why not.
  EXPECT_TRUE(!r->timer_cpus.empty() || !r->timer_cpu_note.empty());
}

TEST(ClockProbeTest, RejectsBadOptions) {
  FakeClock clock;
  ClockOptions o;
  o.timer_watch = TimerWatch::kOff;
  o.fifo_priority = 0;
  EXPECT_THAT(std::string(RunClockProbe(o, {}, clock, HostFiles()).status().message()), HasSubstr("1 to 99"));
  o.fifo_priority = 100;
  EXPECT_FALSE(ValidateClockOptions(o).ok());
  o = ClockOptions();
  o.threshold = 0ns;
  EXPECT_THAT(std::string(ValidateClockOptions(o).message()), HasSubstr("--threshold"));
  o = ClockOptions();
  o.duration = 0s;
  EXPECT_FALSE(ValidateClockOptions(o).ok());
}

TEST(ClockProbeTest, PinningToAMissingCpuFailsClearly) {
  FakeClock clock;
  ClockOptions o;
  o.cpu = 1000;
  o.timer_watch = TimerWatch::kOff;
  auto r = RunClockProbe(o, {}, clock, HostFiles());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--cpu 1000"));
  EXPECT_EQ(clock.calls, 0);
}

TEST(MatchClockTimersTest, FindsOurTimerOnItsCpu) {
  auto timers = ParseTimerList(*Fixture("isolated").Read("/proc/timer_list"));
  ASSERT_TRUE(timers.ok());
  // Fixture: CPU 1 holds an hrtimer_wakeup with soft expiry 411520063455. A 60 fps clock
  // started 300 ticks before it owns it; CPU 0's timers belong to someone else.
  const Rational period = PeriodFromFrameRate(Rational::Make(60, 1));
  const int64_t start = 411520063455 - TickDeadlineNs(0, period, 300);
  auto cpus = MatchClockTimers(*timers, start, period);
  EXPECT_EQ(cpus, (std::map<int, int64_t>{{1, 1}}));
  EXPECT_TRUE(MatchClockTimers(*timers, start + 1, period).empty());
}

}  // namespace
}  // namespace pagereel::probe
