#include "live/sound_buffer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

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

void SoundBuffer::CountGaps(int64_t gaps, int64_t samples) {
  MutexLock lock(&mu_);
  stats_.gaps += gaps;
  stats_.gap_samples += samples;
}

SoundBufferStats SoundBuffer::Stats() const {
  MutexLock lock(&mu_);
  SoundBufferStats stats = stats_;
  stats.level = level_;
  stats.started = started_;
  return stats;
}

namespace {
// The time at the front of a log line, "(   6.056|   0.287) D: ...": seconds since the
// server started, in ms; -1 without one.
double LogTimeMs(std::string_view line) {
  const size_t open = line.find('(');
  const size_t bar = line.find('|');
  if (open == std::string_view::npos || bar == std::string_view::npos || bar < open) return -1;
  // std::from_chars for double wants no leading spaces.
  std::string_view field = line.substr(open + 1, bar - open - 1);
  while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
  double seconds = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), seconds);
  return ec == std::errc() && end == field.data() + field.size() ? seconds * 1000 : -1;
}
}  // namespace

void GapFinder::Line(std::string_view line) {
  // protocol-native.c: "%s %s of '%s'" with Implicit/Actual and underrun/drain, then
  // "Requesting rewind due to end of underrun." when the stream's data came back.
  if (line.find(" underrun of '") != std::string_view::npos) {
    pending_ = true;
    pending_age_ = 0;
    dry_from_ms_ = LogTimeMs(line);
    dry_samples_ = -1;
  } else if (pending_ && dry_samples_ < 0 && line.find("end of underrun") != std::string_view::npos) {
    const double to_ms = LogTimeMs(line);
    if (to_ms >= 0 && dry_from_ms_ >= 0) {
      dry_samples_ = std::llround((to_ms - dry_from_ms_) * encode::kSoundRate / 1000);
    }
  }
}

GapFinder::Found GapFinder::Samples(const float* samples, int64_t count) {
  Found found;
  for (int64_t i = 0; i < count; ++i) {
    if (samples[kChannels * i] == 0.0f && samples[kChannels * i + 1] == 0.0f) {
      zeros_++;
      continue;
    }
    if (zeros_ >= kMinZeros && since_gap_ < kJoin) {
      // The same gap again, before the stream had filled.
      const int64_t more = std::min(zeros_, gap_left_);
      found.samples += more;
      gap_left_ -= more;
      since_gap_ = 0;
    } else if (pending_ && zeros_ >= kMinZeros) {
      // A page that was silent when its stream ran dry has zeros far longer than the gap.
      const int64_t cap = dry_samples_ >= 0 ? dry_samples_ + kSlack : zeros_;
      const int64_t gap = std::min(zeros_, cap);
      found.gaps++;
      found.samples += gap;
      gap_left_ = cap - gap;
      pending_ = false;
      since_gap_ = 0;
    } else if (pending_ && ++pending_age_ > kExpire) {
      pending_ = false;
    }
    if (since_gap_ < kJoin) since_gap_++;
    zeros_ = 0;
  }
  return found;
}

}  // namespace pagereel::live
