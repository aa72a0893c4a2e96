#include "render/segments.h"

#include <set>
#include <thread>

#include <gtest/gtest.h>

namespace pagereel::render {
namespace {

TEST(SegmentsTest, PlanCoversTheFilmInOrder) {
  std::vector<Segment> plan = PlanSegments(95, 30);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[3].first_frame, 90);
  EXPECT_EQ(plan[3].frame_count, 5);
  EXPECT_TRUE(PlanSegments(0, 30).empty());
}

TEST(SegmentsTest, DefaultLengthDependsOnlyOnTheFilm) {
  EXPECT_EQ(DefaultSegmentFrames(90, Rational{30, 1}), 30);     // At least a second.
  EXPECT_EQ(DefaultSegmentFrames(800, Rational{30, 1}), 100);   // An eighth.
  EXPECT_EQ(DefaultSegmentFrames(18000, Rational{30, 1}), 300); // At most ten seconds.
  EXPECT_EQ(DefaultSegmentFrames(100, Rational{1, 1}), 30);     // And 30 frames.
}

TEST(SegmentsTest, ShardsSplitThePlanWithoutGapsOrOverlap) {
  std::vector<Segment> plan = PlanSegments(1000, 30);  // 34 segments.
  int64_t next = 0;
  for (int shard = 0; shard < 3; ++shard) {
    std::vector<Segment> part = ShardSegments(plan, shard, 3);
    ASSERT_FALSE(part.empty());
    EXPECT_EQ(part.front().index, next);
    next = part.back().index + 1;
    EXPECT_GE(part.size(), 11u);
  }
  EXPECT_EQ(next, 34);
  // More shards than segments: some shards have nothing to do.
  EXPECT_EQ(ShardSegments(PlanSegments(30, 30), 0, 2).size() +
                ShardSegments(PlanSegments(30, 30), 1, 2).size(),
            1u);
}

TEST(SegmentQueueTest, EachLaneGetsAContiguousBlock) {
  SegmentQueue queue(PlanSegments(240, 30), 2, Stealing::kNo);
  std::vector<int64_t> lane0, lane1;
  while (std::optional<Segment> s = queue.Take(0)) lane0.push_back(s->index);
  while (std::optional<Segment> s = queue.Take(1)) lane1.push_back(s->index);
  EXPECT_EQ(lane0, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(lane1, (std::vector<int64_t>{4, 5, 6, 7}));
}

TEST(SegmentQueueTest, AnIdleLaneStealsTheLastSegmentOfTheLongestBlock) {
  SegmentQueue queue(PlanSegments(240, 30), 2, Stealing::kYes);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(queue.Take(0).has_value());
  std::optional<Segment> stolen = queue.Take(0);
  ASSERT_TRUE(stolen.has_value());
  EXPECT_EQ(stolen->index, 7);
  EXPECT_EQ(queue.Take(1)->index, 4);

  SegmentQueue strict(PlanSegments(240, 30), 2, Stealing::kNo);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(strict.Take(0).has_value());
  EXPECT_FALSE(strict.Take(0).has_value());
}

TEST(SegmentQueueTest, MoreLanesThanSegmentsTakeEachSegmentOnce) {
  SegmentQueue queue(PlanSegments(60, 30), 4, Stealing::kNo);
  int taken = 0;
  for (int lane = 0; lane < 4; ++lane) {
    while (std::optional<Segment> s = queue.Take(lane)) ++taken;
  }
  EXPECT_EQ(taken, 2);
}

TEST(SegmentQueueTest, EverySegmentIsTakenOnceUnderContention) {
  SegmentQueue queue(PlanSegments(3000, 7), 3, Stealing::kYes);
  std::mutex mu;
  std::multiset<int64_t> seen;
  std::vector<std::jthread> lanes;
  for (int lane = 0; lane < 3; ++lane) {
    lanes.emplace_back([&, lane] {
      while (std::optional<Segment> s = queue.Take(lane)) {
        std::lock_guard lock(mu);
        seen.insert(s->index);
      }
    });
  }
  lanes.clear();
  ASSERT_EQ(seen.size(), 429u);
  for (int64_t i = 0; i < 429; ++i) EXPECT_EQ(seen.count(i), 1u);
}

}  // namespace
}  // namespace pagereel::render
