#include "live/frame_slot.h"

#include <cassert>
#include <cmath>
#include <cstddef>
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
  MutexLock lock(&mu_);
  ++stats_.put;
  if (latest_is_new_) ++stats_.discarded;
  // The replaced picture is freed with the parameter `picture`, which outlives the lock.
  latest_.swap(picture);
  latest_for_tick_ = for_tick;
  latest_is_new_ = true;
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
  MutexLock lock(&mu_);
  Taken taken{latest_, false, latest_for_tick_};
  if (any_take_ && tick <= last_take_tick_) return taken;
  any_take_ = true;
  last_take_tick_ = tick;
  const TickTime now{true, tick, tick_ns};
  tick_times_[SlotOf(tick)] = now;
  previous_tick_ = newest_tick_;
  newest_tick_ = now;
  if (latest_is_new_) {
    latest_is_new_ = false;
    taken.is_new = true;
    ++stats_.taken;
  } else if (latest_ != nullptr) {
    ++stats_.repeated;
  } else {
    ++stats_.empty;
  }
  return taken;
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
