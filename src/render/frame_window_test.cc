#include "render/frame_window.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace pagereel::render {
namespace {

capture::EncodedFrame Frame(int64_t index) {
  capture::EncodedFrame f;
  f.index = index;
  return f;
}

TEST(FrameWindowTest, ClaimsInOrderWhateverTheArrivalOrder) {
  FrameWindow window(3, 10, nullptr);
  window.Put(2, Frame(2));
  window.Put(0, Frame(0));
  window.Put(1, Frame(1));
  window.Put(1, Frame(1));  // A retried lane's duplicate is dropped.
  EXPECT_EQ(window.Claim()->index, 0);
  EXPECT_EQ(window.Claim()->index, 1);
  EXPECT_EQ(window.Claim()->index, 2);
  EXPECT_FALSE(window.Claim().has_value());  // All claimed.
}

TEST(FrameWindowTest, RoomOpensOnlyAsTheEncoderAdvances) {
  FrameWindow window(100, 2, nullptr);
  EXPECT_TRUE(window.WaitForRoom(0));
  EXPECT_TRUE(window.WaitForRoom(1));
  std::atomic<bool> got_room{false};
  std::thread lane([&] {
    got_room = window.WaitForRoom(2);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got_room.load());  // Frame 2 must wait: the window holds 0 and 1.
  window.Encoded(0);
  lane.join();
  EXPECT_TRUE(got_room.load());
}

TEST(FrameWindowTest, ExternalCancelReleasesWaiters) {
  std::atomic<bool> cancel{false};
  FrameWindow window(10, 1, &cancel);
  std::thread encoder([&] { EXPECT_EQ(window.TakePrepared(0), nullptr); });
  cancel = true;
  encoder.join();
  EXPECT_FALSE(window.WaitForRoom(5));
  EXPECT_TRUE(window.cancelled());
}

TEST(FrameWindowTest, PeakTracksScreenshotsHeld) {
  FrameWindow window(10, 10, nullptr);
  window.Put(0, Frame(0));
  window.Put(1, Frame(1));
  window.Claim();
  window.Put(2, Frame(2));
  EXPECT_EQ(window.peak_held(), 2);
}

}  // namespace
}  // namespace pagereel::render
