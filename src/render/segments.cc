#include "render/segments.h"

#include <algorithm>
#include <cassert>

namespace pagereel::render {

int64_t DefaultSegmentFrames(int64_t frames, Rational fps) {
  const int64_t second = std::max<int64_t>(1, FramesInDuration(1.0, fps));
  const int64_t shortest = std::max<int64_t>(30, second);
  const int64_t longest = std::max(shortest, 10 * second);
  return std::clamp((frames + 7) / 8, shortest, longest);
}

std::vector<Segment> PlanSegments(int64_t frames, int64_t segment_frames) {
  assert(frames >= 0 && segment_frames > 0);
  std::vector<Segment> segments;
  for (int64_t first = 0, i = 0; first < frames; first += segment_frames, ++i) {
    segments.push_back(Segment{i, first, std::min(segment_frames, frames - first)});
  }
  return segments;
}

std::vector<Segment> ShardSegments(const std::vector<Segment>& plan, int shard, int shards) {
  assert(shards > 0 && shard >= 0 && shard < shards);
  const auto n = static_cast<int64_t>(plan.size());
  const int64_t begin = n * shard / shards;
  const int64_t end = n * (shard + 1) / shards;
  return std::vector<Segment>(plan.begin() + begin, plan.begin() + end);
}

SegmentQueue::SegmentQueue(const std::vector<Segment>& segments, int lanes, Stealing stealing)
    : blocks_(static_cast<size_t>(std::max(1, lanes))), stealing_(stealing) {
  int64_t total = 0;
  for (const Segment& s : segments) total += s.frame_count;
  // Segment i goes to the lane whose share of the frames its middle frame falls in.
  int64_t before = 0;
  const auto count = static_cast<int64_t>(blocks_.size());
  for (const Segment& s : segments) {
    const int64_t middle = before + s.frame_count / 2;
    const int64_t lane = total > 0 ? std::min(count - 1, middle * count / total) : 0;
    blocks_[static_cast<size_t>(lane)].push_back(s);
    before += s.frame_count;
  }
}

std::optional<Segment> SegmentQueue::Take(int lane) {
  MutexLock lock(&mu_);
  std::deque<Segment>& own = blocks_.at(static_cast<size_t>(lane));
  if (!own.empty()) {
    Segment s = own.front();
    own.pop_front();
    return s;
  }
  if (stealing_ == Stealing::kNo) return std::nullopt;
  std::deque<Segment>* victim = nullptr;
  int64_t most = 0;
  for (std::deque<Segment>& block : blocks_) {
    int64_t left = 0;
    for (const Segment& s : block) left += s.frame_count;
    if (left > most) {
      most = left;
      victim = &block;
    }
  }
  if (victim == nullptr) return std::nullopt;
  Segment s = victim->back();
  victim->pop_back();
  return s;
}

void SegmentQueue::set_stealing(Stealing stealing) {
  MutexLock lock(&mu_);
  stealing_ = stealing;
}

}  // namespace pagereel::render
