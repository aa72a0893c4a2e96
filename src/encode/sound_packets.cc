// SoundPacketEncoder: a live program's sound pushed in tick by tick, encoded through the
// film writer's SoundTrack (its sample conversion and codec framing), which pulls from a
// SoundSource: here one that hands over exactly what was pushed.
#include <algorithm>
#include <deque>

#include "encode/packets.h"
#include "encode/sound_track.h"

namespace pagereel::encode {

namespace {

// What Encode() was given and SoundTrack has not read yet. samples() is everything pushed
// so far, so SoundTrack::EncodeUntil(samples()) takes exactly that and Finish() ends there.
class PushedSound final : public SoundSource {
 public:
  void Push(const float* samples, int64_t count) {
    if (samples == nullptr) {
      queued_.insert(queued_.end(), static_cast<size_t>(count) * kSoundChannels, 0.0f);
    } else {
      queued_.insert(queued_.end(), samples, samples + count * kSoundChannels);
    }
    pushed_ += count;
  }
  int64_t samples() const override { return pushed_; }
  Result<int64_t> Read(float* out, int64_t count) override {
    const int64_t n = std::min<int64_t>(count, static_cast<int64_t>(queued_.size()) / kSoundChannels);
    const auto end = queued_.begin() + n * kSoundChannels;
    std::copy(queued_.begin(), end, out);
    queued_.erase(queued_.begin(), end);
    return n;
  }

 private:
  std::deque<float> queued_;
  int64_t pushed_ = 0;
};

class SoundPacketEncoderImpl final : public SoundPacketEncoder {
 public:
  explicit SoundPacketEncoderImpl(SoundCodec codec) : codec_(codec) {}

  Status Init(bool global_header) {
    if (codec_ != SoundCodec::kAac && codec_ != SoundCodec::kOpus) {
      return InvalidArgumentError("a live program's sound is AAC or Opus, not " +
                                  std::string(SoundCodecName(codec_)));
    }
    PR_ASSIGN_OR_RETURN(track_, SoundTrack::Open(&pushed_, codec_, global_header));
    return Status::Ok();
  }

  Status Encode(const float* samples, int64_t count, int64_t first, std::vector<PacketPtr>* out) override {
    if (first < pushed_.samples()) {
      return InternalError("live sound at sample " + std::to_string(first) + " after sample " +
                           std::to_string(pushed_.samples()));
    }
    pushed_.Push(nullptr, first - pushed_.samples());  // Ticks never given: silence.
    pushed_.Push(samples, count);
    return track_->EncodeUntil(pushed_.samples(), Writer(out));
  }

  Status Flush(std::vector<PacketPtr>* out) override { return track_->Finish(Writer(out)); }
  SoundCodec codec() const override { return codec_; }
  const AVCodecContext* context() const override { return track_->codec(); }

 private:
  static SoundPacketWriter Writer(std::vector<PacketPtr>* out) {
    return [out](AVPacket* packet) {
      out->push_back(std::make_shared<const EncodedPacket>(packet));
      return Status::Ok();
    };
  }

  const SoundCodec codec_;
  PushedSound pushed_;
  std::unique_ptr<SoundTrack> track_;
};

}  // namespace

Result<std::unique_ptr<SoundPacketEncoder>> SoundPacketEncoder::Open(SoundCodec codec, bool global_header) {
  auto encoder = std::make_unique<SoundPacketEncoderImpl>(codec);
  PR_RETURN_IF_ERROR(encoder->Init(global_header));
  return std::unique_ptr<SoundPacketEncoder>(std::move(encoder));
}

}  // namespace pagereel::encode
