// Segments: the film cut into fixed runs of frames, each rendered by one page from its
// start (one pre-roll, then every frame drawn) and encoded on its own, so a finished
// segment is a file that never changes. Which segments a film has depends only on the film
// (its frame count and rate, or --segment-frames), never on lanes or shards: the same
// command makes the same segment files however it is run.
//
// SegmentQueue hands a run's segments to its lanes: each lane owns a contiguous block (so a
// lane reaches a segment start by continuing the page it has, not by pre-roll), and a lane
// whose block is done may take the last segment of the longest block left, when reaching
// it is cheap (jump pre-roll). Thread-safe.
#ifndef PAGEREEL_RENDER_SEGMENTS_H_
#define PAGEREEL_RENDER_SEGMENTS_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "base/mutex.h"
#include "base/rational.h"

namespace pagereel::render {

struct Segment {
  int64_t index = 0;
  int64_t first_frame = 0;
  int64_t frame_count = 0;
  int64_t end_frame() const { return first_frame + frame_count; }
};

// Frames per segment for a film of `frames` at `fps`: about an eighth of the film, at least
// one second (and 30 frames) and at most ten seconds, so a lane's page loads and segment
// starts stay rare and a crash or kill loses at most ten seconds of film per lane.
int64_t DefaultSegmentFrames(int64_t frames, Rational fps);

// Cuts [0, frames) into segments of `segment_frames` (the last may be shorter).
// REQUIRES: frames >= 0, segment_frames > 0.
std::vector<Segment> PlanSegments(int64_t frames, int64_t segment_frames);

// The segments of shard `shard` of `shards`: a contiguous share of the plan, balanced by
// segment count. REQUIRES: 0 <= shard < shards.
std::vector<Segment> ShardSegments(const std::vector<Segment>& plan, int shard, int shards);

enum class Stealing { kNo, kYes };

class SegmentQueue {
 public:
  // `segments` in film order; split into `lanes` contiguous blocks of about equal frames.
  SegmentQueue(const std::vector<Segment>& segments, int lanes, Stealing stealing);

  // The next segment for `lane`: the first of its block, else (with stealing) the last of
  // the block with the most frames left.
  std::optional<Segment> Take(int lane);

  void set_stealing(Stealing stealing);

 private:
  Mutex mu_;
  std::vector<std::deque<Segment>> blocks_ GUARDED_BY(mu_);
  Stealing stealing_ GUARDED_BY(mu_);
};

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_SEGMENTS_H_
