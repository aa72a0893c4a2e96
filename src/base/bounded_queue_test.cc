#include "base/bounded_queue.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace pagereel {
namespace {

TEST(BoundedQueueTest, TryPushRefusesWhenFull) {
  BoundedQueue<int> q(2);
  EXPECT_TRUE(q.TryPush(1));
  EXPECT_TRUE(q.TryPush(2));
  EXPECT_FALSE(q.TryPush(3));
  EXPECT_EQ(*q.Pop(), 1);
  EXPECT_TRUE(q.TryPush(3));
}

TEST(BoundedQueueTest, CloseDrainsThenEnds) {
  BoundedQueue<int> q(4);
  ASSERT_TRUE(q.Push(7));
  q.Close();
  EXPECT_FALSE(q.Push(8));
  EXPECT_EQ(*q.Pop(), 7);
  EXPECT_FALSE(q.Pop().has_value());
}

TEST(BoundedQueueTest, ProducerWaitsForConsumerAndOrderHolds) {
  BoundedQueue<int> q(1);
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(q.Push(i));
    q.Close();
  });
  std::vector<int> got;
  while (auto v = q.Pop()) got.push_back(*v);
  producer.join();
  ASSERT_EQ(got.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(got[i], i);
}

}  // namespace
}  // namespace pagereel
