#include "encode/stream.h"

#include "encode/av_util.h"

extern "C" {
#include <libavutil/pixdesc.h>
}
#include "encode/jpeg_yuv.h"
#include "encode/packets.h"
#include "encode/sound_track.h"

#include <algorithm>

namespace pagereel::encode {

namespace {

int CrfForQuality(int quality) {
  // quality 100 -> CRF 10, 90 -> 14, 50 -> 30, 1 -> 50.
  return std::clamp(10 + (100 - quality) * 2 / 5, 0, 51);
}

bool IsRgb(AVPixelFormat pix_fmt) { return pix_fmt == AV_PIX_FMT_BGR0 || pix_fmt == AV_PIX_FMT_BGRA; }

// How the pixels are to be read: RGB as it is, YUV as BT.709 limited range. For frames and
// codec contexts alike.
template <typename T>
void TagColours(T* t, AVPixelFormat pix_fmt) {
  if (IsRgb(pix_fmt)) {
    t->colorspace = AVCOL_SPC_RGB;
    t->color_range = AVCOL_RANGE_JPEG;
  } else {
    t->color_primaries = AVCOL_PRI_BT709;
    t->color_trc = AVCOL_TRC_BT709;
    t->colorspace = AVCOL_SPC_BT709;
    t->color_range = AVCOL_RANGE_MPEG;
  }
}

// A frame in the stream encoder's pixel format.
struct VideoFrame final : PreparedFrame {
  FramePtr frame;
};

// Premultiplied RGBA to straight: c * 255 / a, rounded (a = 0: 0, so a fill is black where
// the picture is transparent). A table of every (alpha, colour) pair, built once.
void Unpremultiply(const RgbaView& view, std::vector<uint8_t>* out) {
  static const std::vector<uint8_t> table = [] {
    std::vector<uint8_t> t(256 * 256);
    for (int a = 1; a < 256; ++a) {
      for (int c = 0; c < 256; ++c) t[a * 256 + c] = static_cast<uint8_t>(std::min(255, (c * 255 + a / 2) / a));
    }
    return t;
  }();
  out->resize(static_cast<size_t>(view.width) * view.height * 4);
  uint8_t* dst = out->data();
  for (int y = 0; y < view.height; ++y) {
    const uint8_t* src = view.data + static_cast<size_t>(y) * view.stride;
    for (int x = 0; x < view.width; ++x, src += 4, dst += 4) {
      const uint8_t* row = &table[static_cast<size_t>(src[3]) * 256];
      dst[0] = row[src[0]];
      dst[1] = row[src[1]];
      dst[2] = row[src[2]];
      dst[3] = src[3];
    }
  }
}

// Measured in bench/decode_bench.cc: the flags move the cost by under 10 %; accurate
// rounding keeps flat colours exact.
constexpr int kSwsFlags = SWS_BILINEAR | SWS_ACCURATE_RND;

// RGBA to the stream's pixel format: browser pixels are full-range sRGB; YUV streams are
// BT.709 limited range, RGB ones (FFV1) keep the pixels as they are. The size does not
// change, so the flags choose only how chroma is subsampled. yuv420p streams also take JPEG
// screenshots as they come (JpegToYuv420 gives what this swscale setup gives).
//
// Live's key and fill (Signal): a fill un-premultiplies the colours; a key writes the alpha
// as luma with neutral chroma. Premultiplied frames are un-premultiplied before any
// stream with an alpha channel.
class VideoConverter final : public Converter {
 public:
  VideoConverter(int width, int height, AVPixelFormat pix_fmt, Signal signal = Signal::kPicture,
                 bool premultiplied = false)
      : width_(width),
        height_(height),
        pix_fmt_(pix_fmt),
        signal_(signal),
        unpremultiply_(premultiplied &&
                       (signal == Signal::kFill ||
                        (signal == Signal::kPicture && av_pix_fmt_desc_get(pix_fmt)->flags & AV_PIX_FMT_FLAG_ALPHA))) {}

  Result<std::unique_ptr<PreparedFrame>> Convert(const RgbaView& given) override {
    PR_RETURN_IF_ERROR(CheckSize(given.width, given.height));
    if (signal_ == Signal::kKey) return Key(given);
    RgbaView view = given;
    if (unpremultiply_) {
      Unpremultiply(given, &straight_);
      view = RgbaView{straight_.data(), width_, height_, width_ * 4};
    }
    if (!sws_) {
      sws_.reset(sws_getContext(width_, height_, AV_PIX_FMT_RGBA, width_, height_, pix_fmt_,
                                kSwsFlags, nullptr, nullptr, nullptr));
      if (!sws_) return InternalError("could not set up pixel conversion");
      if (!IsRgb(pix_fmt_)) {
        sws_setColorspaceDetails(sws_.get(), sws_getCoefficients(SWS_CS_ITU709), 1,
                                 sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16, 1 << 16);
      }
    }
    PR_ASSIGN_OR_RETURN(std::unique_ptr<VideoFrame> out, NewFrame());
    AVFrame* f = out->frame.get();
    const uint8_t* src[1] = {view.data};
    int src_stride[1] = {view.stride};
    sws_scale(sws_.get(), src, src_stride, 0, height_, f->data, f->linesize);
    return std::unique_ptr<PreparedFrame>(std::move(out));
  }

  bool AcceptsJpeg() const override {
    return pix_fmt_ == AV_PIX_FMT_YUV420P && signal_ == Signal::kPicture && !unpremultiply_;
  }

  Result<std::unique_ptr<PreparedFrame>> ConvertJpeg(std::span<const uint8_t> jpeg, int width,
                                                     int height) override {
    if (!AcceptsJpeg()) return Converter::ConvertJpeg(jpeg, width, height);
    PR_RETURN_IF_ERROR(CheckSize(width, height));
    PR_ASSIGN_OR_RETURN(std::unique_ptr<VideoFrame> out, NewFrame());
    AVFrame* f = out->frame.get();
    Yuv420Planes planes;
    for (int i = 0; i < 3; ++i) {
      planes.data[i] = f->data[i];
      planes.stride[i] = f->linesize[i];
    }
    PR_RETURN_IF_ERROR(jpeg_.Convert(jpeg, width_, height_, planes));
    return std::unique_ptr<PreparedFrame>(std::move(out));
  }

 private:
  Status CheckSize(int width, int height) const {
    if (width == width_ && height == height_) return Status::Ok();
    return InternalError("frame of " + std::to_string(width) + "x" + std::to_string(height) +
                         " in a stream of " + std::to_string(width_) + "x" +
                         std::to_string(height_));
  }

  Result<std::unique_ptr<VideoFrame>> NewFrame() const {
    auto out = std::make_unique<VideoFrame>();
    out->frame.reset(av_frame_alloc());
    AVFrame* f = out->frame.get();
    f->format = pix_fmt_;
    f->width = width_;
    f->height = height_;
    TagColours(f, pix_fmt_);
    int err = av_frame_get_buffer(f, 0);
    if (err < 0) return AvError("allocating a frame", err);
    return out;
  }

  // The key: luma 16 + alpha * 219 / 255 (BT.709 limited range: a decoder's RGB gives the
  // alpha back as grey), chroma neutral.
  Result<std::unique_ptr<PreparedFrame>> Key(const RgbaView& view) {
    PR_ASSIGN_OR_RETURN(std::unique_ptr<VideoFrame> out, NewFrame());
    AVFrame* f = out->frame.get();
    for (int y = 0; y < height_; ++y) {
      const uint8_t* src = view.data + static_cast<size_t>(y) * view.stride + 3;
      uint8_t* dst = f->data[0] + static_cast<size_t>(y) * f->linesize[0];
      for (int x = 0; x < width_; ++x) dst[x] = static_cast<uint8_t>(16 + (src[4 * x] * 219 + 127) / 255);
    }
    const int chroma_height = (height_ + 1) / 2;
    for (int plane = 1; plane <= 2; ++plane) {
      for (int y = 0; y < chroma_height; ++y) {
        std::fill_n(f->data[plane] + static_cast<size_t>(y) * f->linesize[plane], (width_ + 1) / 2, 128);
      }
    }
    return std::unique_ptr<PreparedFrame>(std::move(out));
  }

  const int width_;
  const int height_;
  const AVPixelFormat pix_fmt_;
  const Signal signal_;
  const bool unpremultiply_;
  std::vector<uint8_t> straight_;  // Un-premultiplied frame.
  std::unique_ptr<SwsContext, SwsFree> sws_;
  JpegToYuv420 jpeg_;
};

struct CodecChoice {
  const char* encoder;
  AVPixelFormat pix_fmt;
};

Result<CodecChoice> ChooseCodec(const StreamSpec& spec) {
  if (spec.signal != Signal::kPicture) {
    if (spec.codec != Codec::kH264 || spec.alpha) {
      return InvalidArgumentError(std::string("a key or fill stream is H.264 without alpha, not ") +
                                  std::string(CodecName(spec.codec)) + (spec.alpha ? " with alpha" : ""));
    }
    return CodecChoice{"libx264", AV_PIX_FMT_YUV420P};
  }
  switch (spec.codec) {
    case Codec::kH264:
      if (spec.alpha) break;
      return CodecChoice{"libx264", AV_PIX_FMT_YUV420P};
    case Codec::kProRes:
      return CodecChoice{"prores_ks", spec.alpha ? AV_PIX_FMT_YUVA444P10LE : AV_PIX_FMT_YUV422P10LE};
    case Codec::kFfv1:
      return CodecChoice{"ffv1", spec.alpha ? AV_PIX_FMT_BGRA : AV_PIX_FMT_BGR0};
    case Codec::kVp9:
      return CodecChoice{"libvpx-vp9", spec.alpha ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P};
  }
  return InvalidArgumentError(std::string(CodecName(spec.codec)) +
                              " cannot carry an alpha channel; use ProRes, FFV1 or VP9");
}

// The codecs each container holds (as far as players follow).
bool Holds(Container container, Codec codec) {
  switch (container) {
    case Container::kMp4:
    case Container::kFragmentedMp4:
      return codec == Codec::kH264 || codec == Codec::kVp9;
    case Container::kMov:
      return codec == Codec::kH264 || codec == Codec::kProRes;
    case Container::kMatroska:
      return true;
    case Container::kWebm:
      return codec == Codec::kVp9;
    case Container::kMpegTs:
    case Container::kFlv:
    case Container::kHls:
      return codec == Codec::kH264;
  }
  return false;
}

const char* MuxerName(Container container) {
  switch (container) {
    case Container::kMp4:
    case Container::kFragmentedMp4:
      return "mp4";
    case Container::kMov:
      return "mov";
    case Container::kMatroska:
      return "matroska";
    case Container::kWebm:
      return "webm";
    case Container::kMpegTs:
      return "mpegts";
    case Container::kFlv:
      return "flv";
    case Container::kHls:
      return "hls";
  }
  return "";
}

// What every stream of `spec` must satisfy whatever the sink: the container holds the
// codec, sizes suit the pixel format. The codec chosen.
Result<CodecChoice> CheckCodec(const StreamSpec& spec) {
  PR_ASSIGN_OR_RETURN(CodecChoice choice, ChooseCodec(spec));
  const bool subsampled =
      choice.pix_fmt == AV_PIX_FMT_YUV420P || choice.pix_fmt == AV_PIX_FMT_YUVA420P;
  if (spec.width <= 0 || spec.height <= 0 ||
      (subsampled && (spec.width % 2 != 0 || spec.height % 2 != 0))) {
    return InvalidArgumentError(std::string(CodecName(spec.codec)) + " in " +
                                std::string(ContainerName(spec.container)) +
                                " needs an even width and height, not " +
                                std::to_string(spec.width) + "x" + std::to_string(spec.height));
  }
  return choice;
}

// What the sink and container of `spec` must satisfy.
Status CheckSink(const StreamSpec& spec) {
  if (!Holds(spec.container, spec.codec)) {
    return InvalidArgumentError(std::string(ContainerName(spec.container)) + " cannot hold " +
                                std::string(CodecName(spec.codec)) + " (" + spec.sink.target +
                                ")");
  }
  const bool whole_file =
      spec.sink.kind == Sink::Kind::kFile || spec.sink.kind == Sink::Kind::kMemoryFile;
  if (spec.container == Container::kMp4 && !whole_file) {
    return InvalidArgumentError("plain MP4 is only for finished files; a stream or growing "
                                "file needs fragmented MP4, Matroska or MPEG-TS (" +
                                spec.sink.target + ")");
  }
  if ((spec.sink.kind == Sink::Kind::kMemory || spec.sink.kind == Sink::Kind::kMemoryFile) &&
      !spec.sink.write) {
    return InternalError("a memory sink without a writer");
  }
  return Status::Ok();
}

void ConfigureCodec(const StreamSpec& spec, const CodecChoice& choice, AVCodecContext* c,
                    AVDictionary** opts) {
  const Rational& fps = spec.fps;
  c->width = spec.width;
  c->height = spec.height;
  c->time_base = AVRational{static_cast<int>(fps.den), static_cast<int>(fps.num)};
  c->framerate = AVRational{static_cast<int>(fps.num), static_cast<int>(fps.den)};
  c->pix_fmt = choice.pix_fmt;
  TagColours(c, choice.pix_fmt);
  c->gop_size = spec.gop_frames > 0
                    ? spec.gop_frames
                    : std::max(1, static_cast<int>(fps.num / fps.den) * 2);
  const std::string crf = std::to_string(CrfForQuality(spec.quality));
  switch (spec.codec) {
    case Codec::kH264:
      av_dict_set(opts, "preset", spec.preset.empty() ? "veryfast" : spec.preset.c_str(), 0);
      if (spec.latency == Latency::kLive) {
        // No B-frames and no lookahead: each frame comes out as it goes in, and a
        // keyframe every GOP exactly, so a receiver that joins late starts soon.
        av_dict_set(opts, "tune", "zerolatency", 0);
        c->max_b_frames = 0;
        av_dict_set(opts, "x264-params", "scenecut=0", 0);
      }
      if (spec.bitrate_kbps > 0) {
        c->bit_rate = int64_t{spec.bitrate_kbps} * 1000;
        c->rc_max_rate = c->bit_rate;
        c->rc_buffer_size = static_cast<int>(c->bit_rate);
      } else {
        av_dict_set(opts, "crf", crf.c_str(), 0);
      }
      break;
    case Codec::kVp9:
      av_dict_set(opts, "crf", crf.c_str(), 0);
      av_dict_set(opts, "b", "0", 0);
      av_dict_set(opts, "deadline", spec.latency == Latency::kLive ? "realtime" : "good", 0);
      av_dict_set(opts, "cpu-used", spec.latency == Latency::kLive ? "8" : "5", 0);
      av_dict_set(opts, "row-mt", "1", 0);
      break;
    case Codec::kProRes:
      av_dict_set(opts, "profile", spec.alpha ? "4444" : "hq", 0);
      av_dict_set(opts, "vendor", "apl0", 0);
      break;
    case Codec::kFfv1:
      av_dict_set(opts, "level", "3", 0);
      av_dict_set(opts, "slices", "4", 0);
      break;
  }
}

// The container's options, then the caller's.
AVDictionary* MuxerOptions(const StreamSpec& spec, bool has_sound = false) {
  const bool whole_file =
      spec.sink.kind == Sink::Kind::kFile || spec.sink.kind == Sink::Kind::kMemoryFile;
  AVDictionary* mux_opts = nullptr;
  if ((spec.sound != nullptr || has_sound) && (spec.container == Container::kMp4 || spec.container == Container::kMov ||
                                 spec.container == Container::kFragmentedMp4)) {
    av_dict_set(&mux_opts, "movie_timescale", kSoundMovieTimescale, 0);
  }
  if (has_sound && (spec.container == Container::kMatroska || spec.container == Container::kWebm)) {
    // A live sound track starts with the codec's priming before 0 (Opus: 312 samples), and
    // libavformat would shift every stream to make it 0, the pictures too (first frame at
    // 7 ms). Matroska stores the negative start; FFmpeg reads it back with the pictures at 0.
    av_dict_set(&mux_opts, "avoid_negative_ts", "disabled", 0);
  }
  switch (spec.container) {
    case Container::kMp4:
      av_dict_set(&mux_opts, "movflags", "+faststart", 0);
      break;
    case Container::kMov:
      if (whole_file) {
        av_dict_set(&mux_opts, "movflags", "+faststart", 0);
        break;
      }
      [[fallthrough]];  // A growing QuickTime file is fragmented like MP4.
    case Container::kFragmentedMp4:
      // A fragment per keyframe, the header up front with no sample tables: readable as
      // far as the last complete fragment if the writer dies.
      av_dict_set(&mux_opts, "movflags", "+frag_keyframe+empty_moov+default_base_moof", 0);
      break;
    case Container::kFlv:
      av_dict_set(&mux_opts, "flvflags", "no_duration_filesize", 0);
      break;
    case Container::kHls:
      av_dict_set(&mux_opts, "hls_time", "2", 0);
      av_dict_set(&mux_opts, "hls_list_size", "6", 0);
      av_dict_set(&mux_opts, "hls_flags", "delete_segments+independent_segments", 0);
      break;
    default:
      break;
  }
  for (const auto& [key, value] : spec.muxer_options) av_dict_set(&mux_opts, key.c_str(), value.c_str(), 0);
  return mux_opts;
}

AVDictionary* ProtocolOptions(const StreamSpec& spec) {
  AVDictionary* protocol_opts = nullptr;
  for (const auto& [key, value] : spec.protocol_options) {
    av_dict_set(&protocol_opts, key.c_str(), value.c_str(), 0);
  }
  // SRT in live mode drops what is still unsent when its socket closes: a receiver missed
  // the last 6 frames of a show (120 ms at 50 fps) that the output had counted as sent. A
  // second of linger delivers them (a dead receiver's connection waits that long to close).
  // The URL's own ?linger= still wins.
  if (spec.sink.kind == Sink::Kind::kUrl && spec.sink.target.rfind("srt://", 0) == 0) {
    av_dict_set(&protocol_opts, "linger", "1", AV_DICT_DONT_OVERWRITE);
  }
  return protocol_opts;
}

// The frame a converter of this file made, given timestamp `pts`. REQUIRES: pts after
// *last_pts, which it becomes.
Result<AVFrame*> StampFrame(PreparedFrame* prepared, int64_t pts, int64_t* last_pts) {
  auto* frame = dynamic_cast<VideoFrame*>(prepared);
  if (frame == nullptr) return InternalError("a frame prepared for another encoder");
  if (pts <= *last_pts) {
    return InternalError("frame timestamps must increase (" + std::to_string(pts) + " after " +
                         std::to_string(*last_pts) + ")");
  }
  *last_pts = pts;
  frame->frame->pts = pts;
  return frame->frame.get();
}

class StreamImpl final : public VideoStream {
 public:
  explicit StreamImpl(const StreamSpec& spec) : spec_(spec), output_(spec.sink, spec.should_stop) {}

  Status Init() {
    PR_RETURN_IF_ERROR(CheckSink(spec_));
    PR_ASSIGN_OR_RETURN(CodecChoice choice, CheckCodec(spec_));
    pix_fmt_ = choice.pix_fmt;
    auto configure = [&](AVCodecContext* c, AVDictionary** opts) { ConfigureCodec(spec_, choice, c, opts); };
    AVDictionary* mux_opts = MuxerOptions(spec_);
    AVDictionary* protocol_opts = ProtocolOptions(spec_);
    if (spec_.sound != nullptr && spec_.sound_codec == SoundCodec::kAuto) {
      return InternalError("a sound track for " + spec_.sink.target + " without a codec");
    }
    Status opened = output_.Open(MuxerName(spec_.container), choice.encoder, configure, &mux_opts,
                                 &protocol_opts, spec_.sound, spec_.sound_codec);
    av_dict_free(&mux_opts);
    av_dict_free(&protocol_opts);
    return opened;
  }

  std::unique_ptr<Converter> NewConverter() const override {
    return std::make_unique<VideoConverter>(spec_.width, spec_.height, pix_fmt_, spec_.signal,
                                            spec_.premultiplied);
  }

  Status Write(std::unique_ptr<PreparedFrame> prepared, int64_t pts) override {
    PR_ASSIGN_OR_RETURN(AVFrame * frame, StampFrame(prepared.get(), pts, &last_pts_));
    return output_.Send(frame);
  }

  Status Finish() override { return output_.Finish(); }
  int64_t bytes_written() const override { return output_.bytes_written(); }
  const std::string& target() const override { return output_.target(); }

 private:
  const StreamSpec spec_;
  AvOutput output_;
  AVPixelFormat pix_fmt_ = AV_PIX_FMT_NONE;
  int64_t last_pts_ = -1;
};

class PacketEncoderImpl final : public PacketEncoder {
 public:
  explicit PacketEncoderImpl(const StreamSpec& spec) : spec_(spec) {}

  Status Init(bool global_header) {
    PR_ASSIGN_OR_RETURN(CodecChoice choice, CheckCodec(spec_));
    pix_fmt_ = choice.pix_fmt;
    PR_RETURN_IF_ERROR(encoder_.Open(
        choice.encoder,
        [&](AVCodecContext* c, AVDictionary** opts) { ConfigureCodec(spec_, choice, c, opts); },
        global_header));
    // What muxers copy, taken now: the encoder's context changes as it encodes.
    parameters_.reset(avcodec_parameters_alloc());
    if (!parameters_) return ResourceExhaustedError("no memory for codec parameters");
    int err = avcodec_parameters_from_context(parameters_.get(), encoder_.codec());
    if (err < 0) return AvError("copying encoder parameters", err);
    time_base_ = encoder_.codec()->time_base;
    frame_rate_ = encoder_.codec()->framerate;
    return Status::Ok();
  }

  std::unique_ptr<Converter> NewConverter() const override {
    return std::make_unique<VideoConverter>(spec_.width, spec_.height, pix_fmt_, spec_.signal,
                                            spec_.premultiplied);
  }

  Status Encode(std::unique_ptr<PreparedFrame> prepared, int64_t pts, bool keyframe,
                std::vector<PacketPtr>* out) override {
    PR_ASSIGN_OR_RETURN(AVFrame * frame, StampFrame(prepared.get(), pts, &last_pts_));
    frame->pict_type = keyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    return encoder_.Send(frame, [&](AVPacket* packet) {
      out->push_back(std::make_shared<const EncodedPacket>(packet));
      return Status::Ok();
    });
  }

  Status Flush(std::vector<PacketPtr>* out) override {
    return encoder_.Send(nullptr, [&](AVPacket* packet) {
      out->push_back(std::make_shared<const EncodedPacket>(packet));
      return Status::Ok();
    });
  }

  const StreamSpec& spec() const override { return spec_; }
  const AVCodecParameters* parameters() const { return parameters_.get(); }
  AVRational time_base() const { return time_base_; }
  AVRational frame_rate() const { return frame_rate_; }

 private:
  const StreamSpec spec_;
  AvEncoder encoder_;
  std::unique_ptr<AVCodecParameters, CodecParametersFree> parameters_;
  AVPixelFormat pix_fmt_ = AV_PIX_FMT_NONE;
  AVRational time_base_{1, 1};
  AVRational frame_rate_{1, 1};
  int64_t last_pts_ = -1;
};

class PacketMuxerImpl final : public PacketMuxer {
 public:
  explicit PacketMuxerImpl(const StreamSpec& spec) : spec_(spec), muxer_(spec.sink, spec.should_stop) {}

  Status Init(const std::vector<const PacketEncoder*>& encoders, const SoundPacketEncoder* sound) {
    if (encoders.empty()) return InternalError("a muxer without streams");
    PR_RETURN_IF_ERROR(muxer_.Create(MuxerName(spec_.container)));
    for (const PacketEncoder* e : encoders) {
      StreamSpec checked = e->spec();
      checked.container = spec_.container;
      checked.sink = spec_.sink;
      PR_RETURN_IF_ERROR(CheckSink(checked));
      const auto* encoder = dynamic_cast<const PacketEncoderImpl*>(e);
      if (encoder == nullptr) return InternalError("an encoder of another kind");
      if (muxer_.WantsGlobalHeader() && encoder->parameters()->extradata_size == 0 &&
          e->spec().codec == Codec::kH264) {
        return InternalError("H.264 for " + spec_.sink.target + " needs its headers out of band");
      }
      PR_ASSIGN_OR_RETURN(int index, muxer_.AddStream(encoder->parameters(), encoder->time_base(),
                                                      encoder->frame_rate()));
      time_bases_.push_back(encoder->time_base());
      (void)index;
    }
    if (sound != nullptr) {
      PR_RETURN_IF_ERROR(muxer_.AddStream(sound->context()).status());
      time_bases_.push_back(AVRational{1, kSoundRate});
    }
    AVDictionary* mux_opts = MuxerOptions(spec_, sound != nullptr);
    AVDictionary* protocol_opts = ProtocolOptions(spec_);
    Status started = muxer_.Start(&mux_opts, &protocol_opts);
    av_dict_free(&mux_opts);
    av_dict_free(&protocol_opts);
    packet_.reset(av_packet_alloc());
    return started;
  }

  Status Write(const EncodedPacket& packet, int stream) override {
    if (stream < 0 || static_cast<size_t>(stream) >= time_bases_.size()) {
      return InternalError("no stream " + std::to_string(stream) + " in " + spec_.sink.target);
    }
    int err = av_packet_ref(packet_.get(), packet.packet());
    if (err < 0) return AvError("writing " + spec_.sink.target, err);
    Status written = muxer_.Write(packet_.get(), time_bases_[static_cast<size_t>(stream)], stream);
    av_packet_unref(packet_.get());
    return written;
  }

  Status Finish() override { return muxer_.Finish(); }
  int64_t bytes_written() const override { return muxer_.bytes_written(); }
  std::optional<int64_t> unacknowledged_from() const override { return muxer_.unacknowledged_from(); }
  std::optional<SrtLinkStats> link() const override { return muxer_.link(); }

 private:
  const StreamSpec spec_;
  AvMuxer muxer_;
  std::vector<AVRational> time_bases_;
  std::unique_ptr<AVPacket, PacketFree> packet_;
};

}  // namespace

EncodedPacket::EncodedPacket(AVPacket* packet) : packet_(av_packet_clone(packet)) {}
EncodedPacket::~EncodedPacket() { av_packet_free(&packet_); }
bool EncodedPacket::keyframe() const { return packet_ != nullptr && (packet_->flags & AV_PKT_FLAG_KEY) != 0; }
int64_t EncodedPacket::size() const { return packet_ == nullptr ? 0 : packet_->size; }

std::string EncoderKey(const StreamSpec& spec) {
  std::string key = std::string(CodecName(spec.codec)) + " " + std::to_string(spec.width) + "x" +
                    std::to_string(spec.height) + " " + spec.fps.ToString() +
                    (spec.alpha ? " alpha" : "") + " signal " +
                    std::to_string(static_cast<int>(spec.signal)) +
                    (spec.premultiplied ? " premultiplied" : "") + " latency " +
                    std::to_string(static_cast<int>(spec.latency)) + " gop " +
                    std::to_string(spec.gop_frames);
  if (spec.codec == Codec::kH264) key += " preset " + (spec.preset.empty() ? std::string("veryfast") : spec.preset);
  if (spec.codec == Codec::kH264 && spec.bitrate_kbps > 0) {
    key += " bitrate " + std::to_string(spec.bitrate_kbps);
  } else if (spec.codec == Codec::kH264 || spec.codec == Codec::kVp9) {
    key += " crf " + std::to_string(CrfForQuality(spec.quality));
  }
  return key;
}

bool WantsGlobalHeader(Container container) {
  const AVOutputFormat* format = av_guess_format(MuxerName(container), nullptr, nullptr);
  return format != nullptr && (format->flags & AVFMT_GLOBALHEADER) != 0;
}

Result<std::unique_ptr<PacketEncoder>> PacketEncoder::Open(const StreamSpec& spec, bool global_header) {
  QuietenLibav();
  auto encoder = std::make_unique<PacketEncoderImpl>(spec);
  PR_RETURN_IF_ERROR(encoder->Init(global_header));
  return std::unique_ptr<PacketEncoder>(std::move(encoder));
}

Result<std::unique_ptr<PacketMuxer>> PacketMuxer::Open(const StreamSpec& spec,
                                                       const std::vector<const PacketEncoder*>& encoders,
                                                       const SoundPacketEncoder* sound) {
  QuietenLibav();
  auto muxer = std::make_unique<PacketMuxerImpl>(spec);
  PR_RETURN_IF_ERROR(muxer->Init(encoders, sound));
  return std::unique_ptr<PacketMuxer>(std::move(muxer));
}

std::string_view ContainerName(Container container) {
  switch (container) {
    case Container::kMp4:
      return "MP4";
    case Container::kFragmentedMp4:
      return "fragmented MP4";
    case Container::kMov:
      return "QuickTime";
    case Container::kMatroska:
      return "Matroska";
    case Container::kWebm:
      return "WebM";
    case Container::kMpegTs:
      return "MPEG-TS";
    case Container::kFlv:
      return "FLV";
    case Container::kHls:
      return "HLS";
  }
  return "?";
}

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kH264:
      return "H.264";
    case Codec::kProRes:
      return "ProRes";
    case Codec::kFfv1:
      return "FFV1";
    case Codec::kVp9:
      return "VP9";
  }
  return "?";
}

Result<std::unique_ptr<VideoStream>> VideoStream::Open(const StreamSpec& spec) {
  QuietenLibav();
  auto stream = std::make_unique<StreamImpl>(spec);
  PR_RETURN_IF_ERROR(stream->Init());
  return std::unique_ptr<VideoStream>(std::move(stream));
}

}  // namespace pagereel::encode
