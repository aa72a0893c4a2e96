#include "encode/stream.h"

#include "encode/av_util.h"
#include "encode/jpeg_yuv.h"

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

// Measured in bench/decode_bench.cc: the flags move the cost by under 10 %; accurate
// rounding keeps flat colours exact.
constexpr int kSwsFlags = SWS_BILINEAR | SWS_ACCURATE_RND;

// RGBA to the stream's pixel format: browser pixels are full-range sRGB; YUV streams are
// BT.709 limited range, RGB ones (FFV1) keep the pixels as they are. The size does not
// change, so the flags choose only how chroma is subsampled. yuv420p streams also take JPEG
// screenshots as they come (JpegToYuv420 gives what this swscale setup gives).
class VideoConverter final : public Converter {
 public:
  VideoConverter(int width, int height, AVPixelFormat pix_fmt)
      : width_(width), height_(height), pix_fmt_(pix_fmt) {}

  Result<std::unique_ptr<PreparedFrame>> Convert(const RgbaView& view) override {
    PR_RETURN_IF_ERROR(CheckSize(view.width, view.height));
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

  bool AcceptsJpeg() const override { return pix_fmt_ == AV_PIX_FMT_YUV420P; }

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

  const int width_;
  const int height_;
  const AVPixelFormat pix_fmt_;
  std::unique_ptr<SwsContext, SwsFree> sws_;
  JpegToYuv420 jpeg_;
};

struct CodecChoice {
  const char* encoder;
  AVPixelFormat pix_fmt;
};

Result<CodecChoice> ChooseCodec(const StreamSpec& spec) {
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

class StreamImpl final : public VideoStream {
 public:
  explicit StreamImpl(const StreamSpec& spec) : spec_(spec), output_(spec.sink, spec.should_stop) {}

  Status Init() {
    if (!Holds(spec_.container, spec_.codec)) {
      return InvalidArgumentError(std::string(ContainerName(spec_.container)) + " cannot hold " +
                                  std::string(CodecName(spec_.codec)) + " (" + spec_.sink.target +
                                  ")");
    }
    const bool whole_file =
        spec_.sink.kind == Sink::Kind::kFile || spec_.sink.kind == Sink::Kind::kMemoryFile;
    if (spec_.container == Container::kMp4 && !whole_file) {
      return InvalidArgumentError("plain MP4 is only for finished files; a stream or growing "
                                  "file needs fragmented MP4, Matroska or MPEG-TS (" +
                                  spec_.sink.target + ")");
    }
    if ((spec_.sink.kind == Sink::Kind::kMemory || spec_.sink.kind == Sink::Kind::kMemoryFile) &&
        !spec_.sink.write) {
      return InternalError("a memory sink without a writer");
    }
    PR_ASSIGN_OR_RETURN(CodecChoice choice, ChooseCodec(spec_));
    const bool subsampled =
        choice.pix_fmt == AV_PIX_FMT_YUV420P || choice.pix_fmt == AV_PIX_FMT_YUVA420P;
    if (spec_.width <= 0 || spec_.height <= 0 ||
        (subsampled && (spec_.width % 2 != 0 || spec_.height % 2 != 0))) {
      return InvalidArgumentError(std::string(CodecName(spec_.codec)) + " in " +
                                  std::string(ContainerName(spec_.container)) +
                                  " needs an even width and height, not " +
                                  std::to_string(spec_.width) + "x" + std::to_string(spec_.height));
    }
    pix_fmt_ = choice.pix_fmt;

    auto configure = [&](AVCodecContext* c, AVDictionary** opts) {
      const Rational& fps = spec_.fps;
      c->width = spec_.width;
      c->height = spec_.height;
      c->time_base = AVRational{static_cast<int>(fps.den), static_cast<int>(fps.num)};
      c->framerate = AVRational{static_cast<int>(fps.num), static_cast<int>(fps.den)};
      c->pix_fmt = choice.pix_fmt;
      TagColours(c, choice.pix_fmt);
      c->gop_size = spec_.gop_frames > 0
                        ? spec_.gop_frames
                        : std::max(1, static_cast<int>(fps.num / fps.den) * 2);
      const std::string crf = std::to_string(CrfForQuality(spec_.quality));
      switch (spec_.codec) {
        case Codec::kH264:
          av_dict_set(opts, "preset", spec_.preset.empty() ? "veryfast" : spec_.preset.c_str(), 0);
          if (spec_.latency == Latency::kLive) {
            // No B-frames and no lookahead: each frame comes out as it goes in, and a
            // keyframe every GOP exactly, so a receiver that joins late starts soon.
            av_dict_set(opts, "tune", "zerolatency", 0);
            c->max_b_frames = 0;
            av_dict_set(opts, "x264-params", "scenecut=0", 0);
          }
          if (spec_.bitrate_kbps > 0) {
            c->bit_rate = int64_t{spec_.bitrate_kbps} * 1000;
            c->rc_max_rate = c->bit_rate;
            c->rc_buffer_size = static_cast<int>(c->bit_rate);
          } else {
            av_dict_set(opts, "crf", crf.c_str(), 0);
          }
          break;
        case Codec::kVp9:
          av_dict_set(opts, "crf", crf.c_str(), 0);
          av_dict_set(opts, "b", "0", 0);
          av_dict_set(opts, "deadline", spec_.latency == Latency::kLive ? "realtime" : "good", 0);
          av_dict_set(opts, "cpu-used", spec_.latency == Latency::kLive ? "8" : "5", 0);
          av_dict_set(opts, "row-mt", "1", 0);
          break;
        case Codec::kProRes:
          av_dict_set(opts, "profile", spec_.alpha ? "4444" : "hq", 0);
          av_dict_set(opts, "vendor", "apl0", 0);
          break;
        case Codec::kFfv1:
          av_dict_set(opts, "level", "3", 0);
          av_dict_set(opts, "slices", "4", 0);
          break;
      }
    };

    AVDictionary* mux_opts = nullptr;
    switch (spec_.container) {
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
    for (const auto& [key, value] : spec_.muxer_options) av_dict_set(&mux_opts, key.c_str(), value.c_str(), 0);
    AVDictionary* protocol_opts = nullptr;
    for (const auto& [key, value] : spec_.protocol_options) {
      av_dict_set(&protocol_opts, key.c_str(), value.c_str(), 0);
    }
    Status opened =
        output_.Open(MuxerName(spec_.container), choice.encoder, configure, &mux_opts, &protocol_opts);
    av_dict_free(&mux_opts);
    av_dict_free(&protocol_opts);
    return opened;
  }

  std::unique_ptr<Converter> NewConverter() const override {
    return std::make_unique<VideoConverter>(spec_.width, spec_.height, pix_fmt_);
  }

  Status Write(std::unique_ptr<PreparedFrame> prepared, int64_t pts) override {
    auto* frame = dynamic_cast<VideoFrame*>(prepared.get());
    if (frame == nullptr) return InternalError("a frame prepared for another encoder");
    if (pts <= last_pts_) {
      return InternalError("frame timestamps must increase (" + std::to_string(pts) + " after " +
                           std::to_string(last_pts_) + ")");
    }
    last_pts_ = pts;
    frame->frame->pts = pts;
    return output_.Send(frame->frame.get());
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

}  // namespace

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
