#include "live/sound_buffer.h"

#include <algorithm>

#include "encode/sound.h"

namespace pagereel::live {

namespace {
constexpr int kChannels = encode::kSoundChannels;
}  // namespace

int64_t TickSamples(int64_t n, Rational fps) {
  return encode::SoundSamples(n + 1, fps) - encode::SoundSamples(n, fps);
}

SoundBuffer::SoundBuffer(int64_t cushion_samples, int64_t max_samples)
    : cushion_(cushion_samples), max_(max_samples) {
  MutexLock lock(&mu_);
  ring_.assign(static_cast<size_t>(max_ + 1) * kChannels, 0.0f);
}

void SoundBuffer::Put(const float* samples, int64_t count) {
  MutexLock lock(&mu_);
  stats_.received += count;
  const auto capacity = static_cast<int64_t>(ring_.size()) / kChannels;
  if (count > max_) {  // Only the newest fit.
    stats_.overruns++;
    stats_.dropped += level_ + count - cushion_;
    samples += (count - cushion_) * kChannels;
    count = cushion_;
    head_ = 0;
    level_ = 0;
  } else if (level_ + count > max_) {
    // Waited too long: back to the cushion, dropping the oldest.
    const int64_t drop = level_ + count - cushion_;
    stats_.overruns++;
    stats_.dropped += drop;
    const int64_t from_ring = std::min(drop, level_);
    PopLocked(nullptr, from_ring, 0, 0);
    samples += (drop - from_ring) * kChannels;
    count -= drop - from_ring;
  }
  int64_t at = (head_ + level_) % capacity;
  while (count > 0) {
    const int64_t n = std::min(count, capacity - at);
    std::copy(samples, samples + n * kChannels, ring_.begin() + at * kChannels);
    samples += n * kChannels;
    count -= n;
    level_ += n;
    at = (at + n) % capacity;
  }
}

void SoundBuffer::PopLocked(float* out, int64_t count, float gain_from, float step) {
  const auto capacity = static_cast<int64_t>(ring_.size()) / kChannels;
  float gain = gain_from;
  for (int64_t i = 0; i < count; ++i) {
    if (out != nullptr) {
      const size_t at = static_cast<size_t>(head_) * kChannels;
      out[i * kChannels] += ring_[at] * gain;
      out[i * kChannels + 1] += ring_[at + 1] * gain;
      gain += step;
    }
    head_ = head_ + 1 == capacity ? 0 : head_ + 1;
  }
  level_ -= count;
}

void SoundBuffer::Take(float* out, int64_t count, float gain_from, float gain_to) {
  MutexLock lock(&mu_);
  stats_.taken += count;
  if (!started_) {
    if (level_ < cushion_) return;  // Silence until the cushion has gathered.
    started_ = true;
  }
  const float step = count > 1 ? (gain_to - gain_from) / static_cast<float>(count - 1) : 0;
  const int64_t n = std::min(count, level_);
  PopLocked(out, n, gain_from, step);
  if (n < count) {
    stats_.underruns++;
    stats_.padded += count - n;
    started_ = false;  // Gather the cushion again, or the next burst's delay is a gap too.
  }
  stats_.started = started_;
}

void SoundBuffer::Restart() {
  MutexLock lock(&mu_);
  level_ = 0;
  head_ = 0;
  started_ = false;
  stats_.started = false;
}

SoundBufferStats SoundBuffer::Stats() const {
  MutexLock lock(&mu_);
  SoundBufferStats stats = stats_;
  stats.level = level_;
  stats.started = started_;
  return stats;
}

}  // namespace pagereel::live
