#include "render/slices.h"

#include <algorithm>
#include <cassert>

namespace pagereel::render {

std::vector<Slice> PlanSlices(int64_t frames, int64_t slice_frames) {
  assert(frames >= 0 && slice_frames > 0);
  std::vector<Slice> slices;
  for (int64_t first = 0, i = 0; first < frames; first += slice_frames, ++i) {
    slices.push_back(Slice{i, first, std::min(slice_frames, frames - first)});
  }
  return slices;
}

SliceQueue::SliceQueue(std::vector<Slice> slices) : slices_(slices.begin(), slices.end()) {}

std::optional<Slice> SliceQueue::Take() {
  std::lock_guard lock(mu_);
  if (slices_.empty()) return std::nullopt;
  Slice s = slices_.front();
  slices_.pop_front();
  return s;
}

void SliceQueue::GiveBack(Slice slice) {
  std::lock_guard lock(mu_);
  auto at = std::lower_bound(slices_.begin(), slices_.end(), slice,
                             [](const Slice& a, const Slice& b) { return a.index < b.index; });
  slices_.insert(at, slice);
}

}  // namespace pagereel::render
