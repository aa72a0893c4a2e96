#include "live/frame_slot.h"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <utility>

namespace pagereel::live {
namespace {

size_t SlotOf(int64_t tick) {
  const int64_t n = FrameSlot::kRememberedTicks;
  return static_cast<size_t>((tick % n + n) % n);
}

}  // namespace

void FrameSlot::Put(std::shared_ptr<const Picture> picture, int64_t arrival_ns, int64_t for_tick) {
  assert(picture != nullptr);
  std::shared_ptr<const Picture> dropped;  // Freed after the lock is released.
  MutexLock lock(&mu_);
  ++stats_.put;
  auto at = waiting_.end();
  while (at != waiting_.begin() && std::prev(at)->for_tick > for_tick) --at;
  waiting_.insert(at, Waiting{std::move(picture), for_tick});
  if (waiting_.size() > kMaxWaiting) {
    dropped = std::move(waiting_.front().picture);
    waiting_.pop_front();
    ++stats_.discarded;
  }
  stats_.last_arrival_ns = arrival_ns;
  int64_t tick_ns = 0;
  if (TickNs(for_tick, &tick_ns)) {
    const int64_t offset = arrival_ns - tick_ns;
    if (stats_.arrival_offset_samples == 0) {
      arrival_offset_ns_ = static_cast<double>(offset);
    } else {
      arrival_offset_ns_ += (static_cast<double>(offset) - arrival_offset_ns_) / 16.0;
    }
    ++stats_.arrival_offset_samples;
    stats_.last_arrival_offset_ns = offset;
    stats_.arrival_offset_ns = std::llround(arrival_offset_ns_);
  }
}

FrameSlot::Taken FrameSlot::Take(int64_t tick, int64_t tick_ns) {
  std::deque<Waiting> overtaken;  // Freed after the lock is released.
  MutexLock lock(&mu_);
  if (any_take_ && tick <= last_take_tick_) return Taken{shown_, false, shown_for_tick_};
  any_take_ = true;
  last_take_tick_ = tick;
  const TickTime now{true, tick, tick_ns};
  tick_times_[SlotOf(tick)] = now;
  previous_tick_ = newest_tick_;
  newest_tick_ = now;
  // The newest frame drawn for this tick or an earlier one; those before it were overtaken.
  bool found = false;
  while (!waiting_.empty() && waiting_.front().for_tick <= tick) {
    if (found) ++stats_.discarded;  // Never shown.
    overtaken.push_back(Waiting{std::move(shown_), shown_for_tick_});
    shown_ = std::move(waiting_.front().picture);
    shown_for_tick_ = waiting_.front().for_tick;
    waiting_.pop_front();
    found = true;
  }
  if (found) {
    ++stats_.taken;
  } else if (shown_ != nullptr) {
    ++stats_.repeated;
  } else {
    ++stats_.empty;
  }
  return Taken{shown_, found, shown_for_tick_};
}

FrameSlotStats FrameSlot::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

bool FrameSlot::TickNs(int64_t tick, int64_t* ns) const {
  const TickTime& remembered = tick_times_[SlotOf(tick)];
  if (remembered.known && remembered.tick == tick) {
    *ns = remembered.ns;
    return true;
  }
  if (!previous_tick_.known) return false;
  // Ticks are evenly spaced: go on from the newest at the spacing of the last two.
  const double period = static_cast<double>(newest_tick_.ns - previous_tick_.ns) /
                        static_cast<double>(newest_tick_.tick - previous_tick_.tick);
  *ns = newest_tick_.ns + std::llround(period * static_cast<double>(tick - newest_tick_.tick));
  return true;
}

}  // namespace pagereel::live
