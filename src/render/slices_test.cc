#include "render/slices.h"

#include <gtest/gtest.h>

namespace pagereel::render {
namespace {

TEST(SlicesTest, CoversTheFilmExactlyOnce) {
  std::vector<Slice> slices = PlanSlices(150, 60);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].first_frame, 0);
  EXPECT_EQ(slices[1].first_frame, 60);
  EXPECT_EQ(slices[2].first_frame, 120);
  EXPECT_EQ(slices[2].frame_count, 30);
  EXPECT_TRUE(PlanSlices(0, 60).empty());
  EXPECT_EQ(PlanSlices(60, 60).size(), 1u);
}

TEST(SlicesTest, QueueHandsOutLowestFirstAndRetriesComeBackFirst) {
  SliceQueue queue(PlanSlices(200, 50));
  Slice a = *queue.Take();
  Slice b = *queue.Take();
  EXPECT_EQ(a.index, 0);
  EXPECT_EQ(b.index, 1);
  queue.GiveBack(a);
  EXPECT_EQ(queue.Take()->index, 0);
  EXPECT_EQ(queue.Take()->index, 2);
  EXPECT_EQ(queue.Take()->index, 3);
  EXPECT_FALSE(queue.Take().has_value());
}

}  // namespace
}  // namespace pagereel::render
