// FrameSlot: one live source's frame slot, where the thread that makes the source's frames
// hands them to the clock thread that composites each tick. Each frame is drawn for a tick
// (its page's frame time is that tick's instant) and usually arrives before it: the slot
// holds it until its tick, and a tick shows the newest frame drawn for it or an earlier
// tick. A frame that a newer one overtook before any tick showed it is discarded, and a tick
// that finds nothing new shows the last frame again (a repeat). Both are counted, with when
// frames arrive against the tick they were drawn for.
//
// Threads: Put() from the source's thread (one writer), Take() from the clock thread (one
// reader, once per tick), Stats() from any thread. Each call holds a mutex only to move a
// few pointers and counters; pictures are never copied, and a replaced picture is freed
// after the mutex is released.
#ifndef PAGEREEL_LIVE_FRAME_SLOT_H_
#define PAGEREEL_LIVE_FRAME_SLOT_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>

#include "base/mutex.h"
#include "live/picture.h"

namespace pagereel::live {

// Counters since the slot was made. Times are CLOCK_MONOTONIC nanoseconds, as given to
// Put() and Take().
struct FrameSlotStats {
  int64_t put = 0;        // Frames handed in.
  int64_t taken = 0;      // Ticks that took a new frame.
  int64_t repeated = 0;   // Ticks after the first frame that found no new one.
  int64_t empty = 0;      // Ticks before the first frame: nothing to show.
  int64_t discarded = 0;  // Frames overtaken by a newer one before any tick took them.
  // Arrival offset: arrival_ns minus the time of the tick the frame was drawn for
  // (negative: it was ready before its tick).
  // Smoothed as an exponential moving average with weight 1/16 for each new frame (the
  // first frame sets it). Frames whose tick time is unknown (see Put) are left out.
  int64_t arrival_offset_ns = 0;
  int64_t last_arrival_offset_ns = 0;
  int64_t arrival_offset_samples = 0;  // Frames in the average.
  int64_t last_arrival_ns = 0;         // When the newest frame arrived; 0 before any.
};

class FrameSlot {
 public:
  // How many recent ticks' times Put() can look up.
  static constexpr int kRememberedTicks = 64;
  // Frames waiting for their ticks; beyond this the oldest waiting one is discarded.
  static constexpr size_t kMaxWaiting = 8;

  // What a tick gets.
  struct Taken {
    std::shared_ptr<const Picture> picture;  // The frame shown; null before the first.
    bool is_new = false;                     // Not shown by any earlier tick.
    int64_t for_tick = -1;                   // The tick the frame was drawn for.
  };

  FrameSlot() = default;
  FrameSlot(const FrameSlot&) = delete;
  FrameSlot& operator=(const FrameSlot&) = delete;

  // Source thread: the next frame, drawn for tick `for_tick`, arrived at `arrival_ns`.
  // The tick's time is known when a Take() for that tick came in the last
  // kRememberedTicks ticks; otherwise it is extrapolated from the last two ticks taken;
  // before two ticks there is no arrival offset.
  // REQUIRES: picture != nullptr.
  void Put(std::shared_ptr<const Picture> picture, int64_t arrival_ns, int64_t for_tick);

  // Clock thread, once per tick, with tick indices increasing: the frame to show at tick
  // `tick`, due at `tick_ns` (the newest one drawn for `tick` or before; frames for later
  // ticks wait). A second call for the same (or an older) tick returns the same frame, not
  // new, and counts nothing.
  Taken Take(int64_t tick, int64_t tick_ns);

  FrameSlotStats Stats() const;

 private:
  struct TickTime {
    bool known = false;
    int64_t tick = 0;
    int64_t ns = 0;
  };

  // The time of tick `tick`, or false when it cannot be known.
  bool TickNs(int64_t tick, int64_t* ns) const REQUIRES(mu_);

  struct Waiting {
    std::shared_ptr<const Picture> picture;
    int64_t for_tick;
  };

  mutable Mutex mu_;
  std::shared_ptr<const Picture> shown_ GUARDED_BY(mu_);  // The last tick's frame.
  int64_t shown_for_tick_ GUARDED_BY(mu_) = -1;
  std::deque<Waiting> waiting_ GUARDED_BY(mu_);  // In order of for_tick.
  bool any_take_ GUARDED_BY(mu_) = false;
  int64_t last_take_tick_ GUARDED_BY(mu_) = 0;
  // Indexed by tick % kRememberedTicks.
  std::array<TickTime, kRememberedTicks> tick_times_ GUARDED_BY(mu_);
  TickTime newest_tick_ GUARDED_BY(mu_);
  TickTime previous_tick_ GUARDED_BY(mu_);
  double arrival_offset_ns_ GUARDED_BY(mu_) = 0;  // The moving average, unrounded.
  FrameSlotStats stats_ GUARDED_BY(mu_);
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_FRAME_SLOT_H_
