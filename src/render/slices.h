// Slices: a film cut into fixed runs of frames that lanes take in order from one shared
// list, so which frames a film holds cannot depend on how many lanes rendered it.
// SliceQueue is thread-safe.
#ifndef PAGEREEL_RENDER_SLICES_H_
#define PAGEREEL_RENDER_SLICES_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace pagereel::render {

inline constexpr int64_t kDefaultSliceFrames = 60;

struct Slice {
  int64_t index = 0;
  int64_t first_frame = 0;
  int64_t frame_count = 0;
  int64_t end_frame() const { return first_frame + frame_count; }
};

// Cuts [0, frames) into slices of `slice_frames` (the last may be shorter).
// REQUIRES: frames >= 0, slice_frames > 0.
std::vector<Slice> PlanSlices(int64_t frames, int64_t slice_frames);

// Hands slices out lowest first. A slice given back after a failure comes out again
// before any later one.
class SliceQueue {
 public:
  explicit SliceQueue(std::vector<Slice> slices);

  std::optional<Slice> Take();
  void GiveBack(Slice slice);

 private:
  std::mutex mu_;
  std::deque<Slice> slices_;  // Guarded by mu_; kept sorted by index.
};

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_SLICES_H_
