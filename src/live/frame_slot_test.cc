#include "live/frame_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

namespace pagereel::live {
namespace {

constexpr int64_t kPeriodNs = 40'000'000;  // 25 fps.

std::shared_ptr<const Picture> Frame(int width) { return std::make_shared<Picture>(width, 1); }

TEST(FrameSlotTest, TicksBeforeTheFirstFrameAreEmptyNotRepeated) {
  FrameSlot slot;
  for (int64_t tick = 0; tick < 3; ++tick) {
    const FrameSlot::Taken taken = slot.Take(tick, tick * kPeriodNs);
    EXPECT_EQ(taken.picture, nullptr);
    EXPECT_FALSE(taken.is_new);
  }
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.empty, 3);
  EXPECT_EQ(stats.repeated, 0);
  EXPECT_EQ(stats.taken, 0);
  EXPECT_EQ(stats.last_arrival_ns, 0);
}

TEST(FrameSlotTest, PutTakeTakeRepeatsOnce) {
  FrameSlot slot;
  const auto frame = Frame(1);
  slot.Put(frame, 10, 0);
  const FrameSlot::Taken first = slot.Take(1, kPeriodNs);
  EXPECT_EQ(first.picture, frame);
  EXPECT_TRUE(first.is_new);
  EXPECT_EQ(first.for_tick, 0);
  const FrameSlot::Taken second = slot.Take(2, 2 * kPeriodNs);
  EXPECT_EQ(second.picture, frame);
  EXPECT_FALSE(second.is_new);
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.put, 1);
  EXPECT_EQ(stats.taken, 1);
  EXPECT_EQ(stats.repeated, 1);
  EXPECT_EQ(stats.discarded, 0);
  EXPECT_EQ(stats.empty, 0);
}

TEST(FrameSlotTest, PutPutTakeDiscardsTheOlder) {
  FrameSlot slot;
  const auto older = Frame(1);
  const auto newer = Frame(2);
  slot.Put(older, 10, 0);
  slot.Put(newer, 20, 1);
  const FrameSlot::Taken taken = slot.Take(2, 2 * kPeriodNs);
  EXPECT_EQ(taken.picture, newer);
  EXPECT_TRUE(taken.is_new);
  EXPECT_EQ(taken.for_tick, 1);
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.put, 2);
  EXPECT_EQ(stats.discarded, 1);
  EXPECT_EQ(stats.repeated, 0);
  EXPECT_EQ(stats.taken, 1);
}

TEST(FrameSlotTest, ALongerSequence) {
  FrameSlot slot;
  slot.Take(0, 0);  // empty
  slot.Put(Frame(1), 1, 0);
  slot.Take(1, kPeriodNs);      // new
  slot.Take(2, 2 * kPeriodNs);  // repeated
  slot.Take(2, 2 * kPeriodNs);  // same tick again: nothing counted
  slot.Put(Frame(1), 2, 2);
  slot.Put(Frame(1), 3, 2);     // discards the one before
  slot.Put(Frame(1), 4, 3);     // and again
  slot.Take(3, 3 * kPeriodNs);  // new
  slot.Take(4, 4 * kPeriodNs);  // repeated
  slot.Take(5, 5 * kPeriodNs);  // repeated
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.put, 4);
  EXPECT_EQ(stats.taken, 2);
  EXPECT_EQ(stats.repeated, 3);
  EXPECT_EQ(stats.discarded, 2);
  EXPECT_EQ(stats.empty, 1);
  EXPECT_EQ(stats.last_arrival_ns, 4);
}

TEST(FrameSlotTest, TheSameTickTwiceReturnsTheSameFrameWithoutCounting) {
  FrameSlot slot;
  slot.Put(Frame(1), 5, 0);
  EXPECT_TRUE(slot.Take(0, 0).is_new);
  const FrameSlot::Taken again = slot.Take(0, 0);
  EXPECT_NE(again.picture, nullptr);
  EXPECT_FALSE(again.is_new);
  EXPECT_EQ(slot.Stats().repeated, 0);
  EXPECT_EQ(slot.Stats().taken, 1);
}

TEST(FrameSlotTest, ArrivalOffsetIsAMovingAverageOverOneSixteenth) {
  FrameSlot slot;
  const int64_t start = 1'000'000'000'000;
  slot.Take(0, start);
  // Frame for tick 0 arrives 32 ms after tick 0's time: the first sample sets the average.
  slot.Put(Frame(1), start + 32'000'000, 0);
  FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.arrival_offset_samples, 1);
  EXPECT_EQ(stats.arrival_offset_ns, 32'000'000);
  EXPECT_EQ(stats.last_arrival_offset_ns, 32'000'000);
  EXPECT_EQ(stats.last_arrival_ns, start + 32'000'000);

  // Tick 1 at its time; its frame arrives 48 ms later: 32 + (48 - 32) / 16 = 33 ms.
  slot.Take(1, start + kPeriodNs);
  slot.Put(Frame(1), start + kPeriodNs + 48'000'000, 1);
  stats = slot.Stats();
  EXPECT_EQ(stats.arrival_offset_samples, 2);
  EXPECT_EQ(stats.arrival_offset_ns, 33'000'000);
  EXPECT_EQ(stats.last_arrival_offset_ns, 48'000'000);

  // A frame begun for tick 3, which no Take() has seen yet: its time is extrapolated from
  // ticks 0 and 1 (start + 3 periods). Offset 16 ms: 33 + (16 - 33) / 16 = 31.9375 ms.
  slot.Put(Frame(1), start + 3 * kPeriodNs + 16'000'000, 3);
  stats = slot.Stats();
  EXPECT_EQ(stats.arrival_offset_samples, 3);
  EXPECT_EQ(stats.last_arrival_offset_ns, 16'000'000);
  EXPECT_EQ(stats.arrival_offset_ns, 31'937'500);
}

TEST(FrameSlotTest, NoArrivalOffsetBeforeTheTickTimeIsKnown) {
  FrameSlot slot;
  slot.Put(Frame(1), 123, 5);  // No tick taken yet.
  slot.Take(0, 0);
  slot.Put(Frame(1), 456, 5);  // One tick known, not tick 5: no spacing to go on.
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.arrival_offset_samples, 0);
  EXPECT_EQ(stats.arrival_offset_ns, 0);
  EXPECT_EQ(stats.last_arrival_ns, 456);
}

TEST(FrameSlotTest, AFrameDrawnForALaterTickWaitsForIt) {
  FrameSlot slot;
  const auto zero = Frame(1);
  const auto two = Frame(2);
  slot.Put(zero, 1, 0);
  slot.Put(two, 2, 2);  // Ready early: drawn for tick 2.
  const FrameSlot::Taken at0 = slot.Take(0, 0);
  EXPECT_EQ(at0.picture, zero);
  EXPECT_TRUE(at0.is_new);
  const FrameSlot::Taken at1 = slot.Take(1, kPeriodNs);
  EXPECT_EQ(at1.picture, zero);  // Tick 1 has no frame of its own: a repeat, not tick 2's.
  EXPECT_FALSE(at1.is_new);
  const FrameSlot::Taken at2 = slot.Take(2, 2 * kPeriodNs);
  EXPECT_EQ(at2.picture, two);
  EXPECT_TRUE(at2.is_new);
  EXPECT_EQ(at2.for_tick, 2);
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.taken, 2);
  EXPECT_EQ(stats.repeated, 1);
  EXPECT_EQ(stats.discarded, 0);
}

TEST(FrameSlotTest, ArrivalBeforeItsTickIsANegativeOffset) {
  FrameSlot slot;
  slot.Take(0, 0);
  slot.Take(1, kPeriodNs);
  slot.Put(Frame(1), kPeriodNs + 30'000'000, 2);  // 10 ms before tick 2.
  EXPECT_EQ(slot.Stats().last_arrival_offset_ns, -10'000'000);
}

TEST(FrameSlotTest, TooManyWaitingFramesDropTheOldest) {
  FrameSlot slot;
  for (int64_t t = 1; t <= static_cast<int64_t>(FrameSlot::kMaxWaiting) + 2; ++t) slot.Put(Frame(1), t, t);
  EXPECT_EQ(slot.Stats().discarded, 2);
  EXPECT_EQ(slot.Take(3, 3 * kPeriodNs).for_tick, 3);
}

// A source thread puts frames as fast as it can, each for the tick the clock thread is at,
// while the clock thread takes; every frame is either taken or discarded, and pictures are
// read while the writer replaces them. Meant for the TSan build as much as for the plain one.
TEST(FrameSlotTest, OneWriterOneReaderSmoke) {
  FrameSlot slot;
  constexpr int64_t kFrames = 20000;
  std::atomic<bool> done = false;
  std::atomic<int64_t> reader_tick = 0;
  std::thread writer([&] {
    for (int64_t i = 0; i < kFrames; ++i) {
      auto picture = std::make_shared<Picture>(2, 1);
      picture->pixels[0] = static_cast<uint8_t>(i);
      slot.Put(std::move(picture), i, reader_tick.load());
    }
    done = true;
  });
  int64_t ticks = 0;
  int64_t new_frames = 0;
  int64_t last_for_tick = -1;
  uint32_t checksum = 0;
  while (!done.load() || ticks < 3) {
    const FrameSlot::Taken taken = slot.Take(ticks, ticks * kPeriodNs);
    ++ticks;
    reader_tick = ticks;
    if (taken.picture != nullptr) checksum += taken.picture->pixels[0];
    if (taken.is_new) {
      ++new_frames;
      EXPECT_GE(taken.for_tick, last_for_tick);
      last_for_tick = taken.for_tick;
    }
  }
  writer.join();
  const FrameSlot::Taken last = slot.Take(ticks, ticks * kPeriodNs);
  if (last.is_new) ++new_frames;
  ++ticks;
  const FrameSlotStats stats = slot.Stats();
  EXPECT_EQ(stats.put, kFrames);
  EXPECT_EQ(stats.taken, new_frames);
  EXPECT_EQ(stats.taken + stats.discarded, kFrames);
  EXPECT_EQ(stats.taken + stats.repeated + stats.empty, ticks);
  RecordProperty("checksum", static_cast<int>(checksum));
}

}  // namespace
}  // namespace pagereel::live
