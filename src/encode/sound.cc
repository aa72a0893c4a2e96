#include "encode/sound.h"

extern "C" {
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>
}

#include <algorithm>
#include <span>

#include "encode/sound_track.h"

namespace pagereel::encode {

namespace {

// 128-bit products keep frames * 48000 * den exact for any film length; __extension__ tells
// -Wpedantic the GCC/Clang type is intended.
__extension__ typedef __int128 Int128;

struct CodecNames {
  SoundCodec codec;
  std::string_view name;
  const char* encoder;
  AVSampleFormat format;
  int64_t bit_rate;
};
// AAC at 192 kb/s: FFmpeg's own AAC encoder (Debian has no fdk-aac) needs more bits than
// the usual 128 for music to come through clean. Opus is transparent for music at 128.
constexpr CodecNames kCodecs[] = {
    {SoundCodec::kAac, "aac", "aac", AV_SAMPLE_FMT_FLTP, 192000},
    {SoundCodec::kOpus, "opus", "libopus", AV_SAMPLE_FMT_FLT, 128000},
    {SoundCodec::kFlac, "flac", "flac", AV_SAMPLE_FMT_S16, 0},
    {SoundCodec::kPcm16, "pcm_s16le", "pcm_s16le", AV_SAMPLE_FMT_S16, 0},
    {SoundCodec::kPcm24, "pcm_s24le", "pcm_s24le", AV_SAMPLE_FMT_S32, 0},
};

const CodecNames* NamesOf(SoundCodec codec) {
  for (const CodecNames& c : kCodecs) {
    if (c.codec == codec) return &c;
  }
  return nullptr;
}

// The codecs each kind of film holds, its default first.
std::span<const SoundCodec> CodecsOf(FilmKind kind) {
  static constexpr SoundCodec kMp4[] = {SoundCodec::kAac, SoundCodec::kOpus};
  static constexpr SoundCodec kMov[] = {SoundCodec::kPcm24, SoundCodec::kPcm16, SoundCodec::kAac};
  static constexpr SoundCodec kWebm[] = {SoundCodec::kOpus};
  static constexpr SoundCodec kMkv[] = {SoundCodec::kFlac, SoundCodec::kOpus, SoundCodec::kPcm16,
                                        SoundCodec::kPcm24};
  switch (kind) {
    case FilmKind::kMp4: return kMp4;
    case FilmKind::kMov: return kMov;
    case FilmKind::kWebm: return kWebm;
    case FilmKind::kMkv: return kMkv;
    case FilmKind::kGif:
    case FilmKind::kPngSequence:
    case FilmKind::kJpegSequence:
      break;
  }
  return {};
}

// Samples per encoder frame for codecs that take any number (PCM).
constexpr int kPcmFrame = 1024;
// Samples taken from the source at a time.
constexpr int kReadChunk = 4096;

}  // namespace

int64_t SoundSamples(int64_t frames, Rational fps) {
  return static_cast<int64_t>(Int128{frames} * kSoundRate * fps.den / fps.num);
}

std::string_view SoundCodecName(SoundCodec codec) {
  const CodecNames* names = NamesOf(codec);
  return names == nullptr ? "auto" : names->name;
}

std::optional<SoundCodec> SoundCodecNamed(std::string_view name) {
  if (name == "auto") return SoundCodec::kAuto;
  for (const CodecNames& c : kCodecs) {
    if (c.name == name) return c.codec;
  }
  return std::nullopt;
}

std::optional<SoundCodec> DefaultSoundCodec(FilmKind kind) {
  std::span<const SoundCodec> codecs = CodecsOf(kind);
  if (codecs.empty()) return std::nullopt;
  return codecs.front();
}

Result<SoundCodec> ChooseSoundCodec(FilmKind kind, SoundCodec codec) {
  std::span<const SoundCodec> codecs = CodecsOf(kind);
  const std::string film = "a " + std::string(FilmKindName(kind)) + " film";
  if (codecs.empty()) {
    return InvalidArgumentError(film + " carries no sound; write .mp4, .mov, .webm or .mkv for a "
                                "film with sound");
  }
  if (codec == SoundCodec::kAuto) return codecs.front();
  if (std::find(codecs.begin(), codecs.end(), codec) != codecs.end()) return codec;
  std::string list;
  for (SoundCodec c : codecs) list += (list.empty() ? "" : ", ") + std::string(SoundCodecName(c));
  std::string why;
  if (kind == FilmKind::kMkv && codec == SoundCodec::kAac) {
    why = " (AAC in Matroska plays 1,024 samples late: Matroska cannot hide AAC's priming)";
  }
  return InvalidArgumentError(film + " cannot carry " + std::string(SoundCodecName(codec)) +
                              " sound" + why + "; it takes " + list);
}

Status CheckSoundLength(const SoundSource& sound, int64_t frames, Rational fps) {
  const int64_t want = SoundSamples(frames, fps);
  if (sound.samples() == want) return Status::Ok();
  return InternalError("the film's sound has " + std::to_string(sound.samples()) + " samples, but " +
                       std::to_string(frames) + " frames at " + fps.ToString() + " fps need " +
                       std::to_string(want));
}

void SoundTrack::SwrFree::operator()(SwrContext* s) const { swr_free(&s); }
void SoundTrack::FifoFree::operator()(AVAudioFifo* f) const { av_audio_fifo_free(f); }

SoundTrack::~SoundTrack() = default;

Result<std::unique_ptr<SoundTrack>> SoundTrack::Open(SoundSource* source, SoundCodec codec,
                                                     bool global_header) {
  QuietenLibav();
  std::unique_ptr<SoundTrack> track(new SoundTrack(source));
  PR_RETURN_IF_ERROR(track->Init(codec, global_header));
  return track;
}

Status SoundTrack::Init(SoundCodec codec, bool global_header) {
  const CodecNames* names = NamesOf(codec);
  if (names == nullptr || source_ == nullptr) return InternalError("a sound track without a codec or source");
  AVChannelLayout stereo = AV_CHANNEL_LAYOUT_STEREO;
  PR_RETURN_IF_ERROR(encoder_.Open(
      names->encoder,
      [&](AVCodecContext* c, AVDictionary** /*options*/) {
        c->sample_rate = kSoundRate;
        c->sample_fmt = names->format;
        av_channel_layout_copy(&c->ch_layout, &stereo);
        c->time_base = AVRational{1, kSoundRate};
        if (names->bit_rate > 0) c->bit_rate = names->bit_rate;
      },
      global_header));
  SwrContext* swr = nullptr;
  int err = swr_alloc_set_opts2(&swr, &stereo, names->format, kSoundRate, &stereo,
                                AV_SAMPLE_FMT_FLT, kSoundRate, 0, nullptr);
  convert_.reset(swr);
  if (err >= 0) err = swr_init(convert_.get());
  if (err < 0) return AvError("setting up the sound's sample conversion", err);
  fifo_.reset(av_audio_fifo_alloc(names->format, kSoundChannels, kReadChunk));
  frame_.reset(av_frame_alloc());
  if (!fifo_ || !frame_) return ResourceExhaustedError("no memory for the sound track");
  return Status::Ok();
}

Status SoundTrack::EncodeUntil(int64_t end, const SoundPacketWriter& write) {
  end = std::min(end, source_->samples());
  const AVCodecContext* c = encoder_.codec();
  while (read_samples_ < end) {
    const int64_t want = std::min<int64_t>(kReadChunk, end - read_samples_);
    read_.resize(static_cast<size_t>(want) * kSoundChannels);
    PR_ASSIGN_OR_RETURN(int64_t got, source_->Read(read_.data(), want));
    if (got <= 0 || got > want) {
      return InternalError("the film's sound gave out after " + std::to_string(read_samples_) +
                           " of its " + std::to_string(source_->samples()) + " samples");
    }
    // Into the encoder's sample format (same rate and layout: a conversion, no resampling,
    // so nothing stays behind in the converter).
    FramePtr converted(av_frame_alloc());
    converted->format = c->sample_fmt;
    converted->nb_samples = static_cast<int>(got);
    av_channel_layout_copy(&converted->ch_layout, &c->ch_layout);
    int err = av_frame_get_buffer(converted.get(), 0);
    if (err < 0) return AvError("allocating sound samples", err);
    const uint8_t* in[1] = {reinterpret_cast<const uint8_t*>(read_.data())};
    const int out = swr_convert(convert_.get(), converted->data, static_cast<int>(got), in, static_cast<int>(got));
    if (out < 0) return AvError("converting the film's sound", out);
    if (av_audio_fifo_write(fifo_.get(), reinterpret_cast<void**>(converted->data), out) < out) {
      return ResourceExhaustedError("no memory for the film's sound");
    }
    read_samples_ += got;
    PR_RETURN_IF_ERROR(Drain(/*last=*/false, write));
  }
  return Status::Ok();
}

Status SoundTrack::Drain(bool last, const SoundPacketWriter& write) {
  const AVCodecContext* c = encoder_.codec();
  const bool any_size = c->frame_size <= 0 || (c->codec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE);
  const int frame_size = any_size ? kPcmFrame : c->frame_size;
  for (;;) {
    const int queued = av_audio_fifo_size(fifo_.get());
    if (queued == 0 || (queued < frame_size && !last)) return Status::Ok();
    const int n = std::min(queued, frame_size);
    av_frame_unref(frame_.get());
    frame_->format = c->sample_fmt;
    frame_->nb_samples = n;
    frame_->sample_rate = kSoundRate;
    av_channel_layout_copy(&frame_->ch_layout, &c->ch_layout);
    int err = av_frame_get_buffer(frame_.get(), 0);
    if (err < 0) return AvError("allocating sound samples", err);
    if (av_audio_fifo_read(fifo_.get(), reinterpret_cast<void**>(frame_->data), n) < n) {
      return InternalError("the sound track's queue came up short");
    }
    frame_->pts = sent_samples_;
    sent_samples_ += n;
    PR_RETURN_IF_ERROR(encoder_.Send(frame_.get(), write));
  }
}

Status SoundTrack::Finish(const SoundPacketWriter& write) {
  PR_RETURN_IF_ERROR(EncodeUntil(source_->samples(), write));
  float extra[kSoundChannels];
  PR_ASSIGN_OR_RETURN(int64_t more, source_->Read(extra, 1));
  if (read_samples_ != source_->samples() || more != 0) {
    return InternalError("the film's sound has more samples than the " +
                         std::to_string(source_->samples()) + " it promised");
  }
  PR_RETURN_IF_ERROR(Drain(/*last=*/true, write));
  return encoder_.Send(nullptr, write);
}

}  // namespace pagereel::encode
