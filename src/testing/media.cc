#include "testing/media.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

#include <memory>

namespace pagereel::testing {

namespace {

using InputPtr = std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)>;

Result<InputPtr> OpenInput(const std::string& path) {
  AVFormatContext* raw = nullptr;
  if (avformat_open_input(&raw, path.c_str(), nullptr, nullptr) < 0) {
    return NotFoundError("cannot open " + path);
  }
  InputPtr fmt(raw, [](AVFormatContext* f) { avformat_close_input(&f); });
  if (avformat_find_stream_info(fmt.get(), nullptr) < 0) return IoError("no stream info");
  return fmt;
}

}  // namespace

Result<DecodedVideo> DecodeVideo(const std::string& path, bool keep_pixels, int video_stream,
                                 bool keep_alpha) {
  PR_ASSIGN_OR_RETURN(InputPtr fmt, OpenInput(path));
  int index = -1;
  if (video_stream < 0) {
    index = av_find_best_stream(fmt.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  } else {
    for (unsigned i = 0, seen = 0; i < fmt->nb_streams; ++i) {
      if (fmt->streams[i]->codecpar->codec_type != AVMEDIA_TYPE_VIDEO) continue;
      if (static_cast<int>(seen++) == video_stream) {
        index = static_cast<int>(i);
        break;
      }
    }
  }
  if (index < 0) return NotFoundError("no video stream in " + path);
  AVStream* stream = fmt->streams[index];
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  // libvpx's own VP9 decoder is the one that reads the alpha channel.
  if (stream->codecpar->codec_id == AV_CODEC_ID_VP9) {
    if (const AVCodec* vpx = avcodec_find_decoder_by_name("libvpx-vp9")) codec = vpx;
  }
  std::unique_ptr<AVCodecContext, void (*)(AVCodecContext*)> ctx(
      avcodec_alloc_context3(codec), [](AVCodecContext* c) { avcodec_free_context(&c); });
  avcodec_parameters_to_context(ctx.get(), stream->codecpar);
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) return IoError("cannot open decoder");

  DecodedVideo out;
  out.codec = avcodec_get_name(stream->codecpar->codec_id);
  const char* pf = av_get_pix_fmt_name(static_cast<AVPixelFormat>(stream->codecpar->format));
  out.pixel_format = pf ? pf : "?";
  out.color_primaries = av_color_primaries_name(stream->codecpar->color_primaries);
  out.color_space = av_color_space_name(stream->codecpar->color_space);
  out.width = stream->codecpar->width;
  out.height = stream->codecpar->height;
  out.rate_num = stream->avg_frame_rate.num;
  out.rate_den = stream->avg_frame_rate.den;

  std::unique_ptr<AVPacket, void (*)(AVPacket*)> pkt(av_packet_alloc(),
                                                     [](AVPacket* p) { av_packet_free(&p); });
  std::unique_ptr<AVFrame, void (*)(AVFrame*)> frame(av_frame_alloc(),
                                                     [](AVFrame* f) { av_frame_free(&f); });
  SwsContext* sws = nullptr;
  auto take = [&]() {
    while (avcodec_receive_frame(ctx.get(), frame.get()) == 0) {
      out.pts_seconds.push_back(static_cast<double>(frame->best_effort_timestamp) *
                                av_q2d(stream->time_base));
      auto format = static_cast<AVPixelFormat>(frame->format);
      const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
      if (desc != nullptr && (desc->flags & AV_PIX_FMT_FLAG_ALPHA)) out.has_alpha = true;
      const bool with_alpha = keep_alpha && desc != nullptr && (desc->flags & AV_PIX_FMT_FLAG_ALPHA);
      if (keep_pixels) {
        sws = sws_getCachedContext(sws, frame->width, frame->height, format, frame->width,
                                   frame->height, with_alpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24,
                                   SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr, nullptr);
        sws_setColorspaceDetails(sws, sws_getCoefficients(SWS_CS_ITU709),
                                 frame->color_range == AVCOL_RANGE_JPEG ? 1 : 0,
                                 sws_getCoefficients(SWS_CS_ITU709), 1, 0, 1 << 16, 1 << 16);
        const int channels = with_alpha ? 4 : 3;
        std::vector<uint8_t> pixels(static_cast<size_t>(frame->width) * frame->height * channels);
        uint8_t* dst[1] = {pixels.data()};
        int dst_stride[1] = {frame->width * channels};
        sws_scale(sws, frame->data, frame->linesize, 0, frame->height, dst, dst_stride);
        if (with_alpha) {
          std::vector<uint8_t> rgb, alpha;
          rgb.reserve(pixels.size() / 4 * 3);
          alpha.reserve(pixels.size() / 4);
          for (size_t i = 0; i < pixels.size(); i += 4) {
            rgb.insert(rgb.end(), pixels.begin() + static_cast<std::ptrdiff_t>(i),
                       pixels.begin() + static_cast<std::ptrdiff_t>(i + 3));
            alpha.push_back(pixels[i + 3]);
          }
          out.rgb.push_back(std::move(rgb));
          out.alpha.push_back(std::move(alpha));
        } else {
          out.rgb.push_back(std::move(pixels));
        }
      }
    }
  };
  while (av_read_frame(fmt.get(), pkt.get()) >= 0) {
    if (pkt->stream_index == index) {
      avcodec_send_packet(ctx.get(), pkt.get());
      take();
    }
    av_packet_unref(pkt.get());
  }
  avcodec_send_packet(ctx.get(), nullptr);
  take();
  sws_freeContext(sws);
  return out;
}

Result<DecodedAudio> DecodeAudio(const std::string& path) {
  PR_ASSIGN_OR_RETURN(InputPtr fmt, OpenInput(path));
  const int index = av_find_best_stream(fmt.get(), AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  if (index < 0) return NotFoundError("no audio stream in " + path);
  AVStream* stream = fmt->streams[index];
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  std::unique_ptr<AVCodecContext, void (*)(AVCodecContext*)> ctx(
      avcodec_alloc_context3(codec), [](AVCodecContext* c) { avcodec_free_context(&c); });
  avcodec_parameters_to_context(ctx.get(), stream->codecpar);
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) return IoError("cannot open decoder");

  DecodedAudio out;
  out.codec = avcodec_get_name(stream->codecpar->codec_id);
  out.sample_rate = stream->codecpar->sample_rate;
  out.channels = stream->codecpar->ch_layout.nb_channels;
  if (stream->duration != AV_NOPTS_VALUE) {
    out.stated_samples = av_rescale_q(stream->duration, stream->time_base, AVRational{1, out.sample_rate});
  }
  std::unique_ptr<AVPacket, void (*)(AVPacket*)> pkt(av_packet_alloc(),
                                                     [](AVPacket* p) { av_packet_free(&p); });
  std::unique_ptr<AVFrame, void (*)(AVFrame*)> frame(av_frame_alloc(),
                                                     [](AVFrame* f) { av_frame_free(&f); });
  std::unique_ptr<SwrContext, void (*)(SwrContext*)> swr(nullptr, [](SwrContext* s) { swr_free(&s); });
  auto take = [&]() -> Status {
    while (avcodec_receive_frame(ctx.get(), frame.get()) == 0) {
      if (!swr) {
        SwrContext* s = nullptr;
        if (swr_alloc_set_opts2(&s, &frame->ch_layout, AV_SAMPLE_FMT_FLT, frame->sample_rate,
                                &frame->ch_layout, static_cast<AVSampleFormat>(frame->format),
                                frame->sample_rate, 0, nullptr) < 0 ||
            swr_init(s) < 0) {
          swr_free(&s);
          return IoError("cannot convert the decoded sound");
        }
        swr.reset(s);
      }
      const size_t at = out.samples.size();
      out.samples.resize(at + static_cast<size_t>(frame->nb_samples) * out.channels);
      uint8_t* dst[1] = {reinterpret_cast<uint8_t*>(out.samples.data() + at)};
      const int n = swr_convert(swr.get(), dst, frame->nb_samples,
                                const_cast<const uint8_t**>(frame->extended_data), frame->nb_samples);
      if (n != frame->nb_samples) return IoError("the sound's conversion held samples back");
      av_frame_unref(frame.get());
    }
    return Status::Ok();
  };
  while (av_read_frame(fmt.get(), pkt.get()) >= 0) {
    if (pkt->stream_index == index) {
      avcodec_send_packet(ctx.get(), pkt.get());
      PR_RETURN_IF_ERROR(take());
    }
    av_packet_unref(pkt.get());
  }
  avcodec_send_packet(ctx.get(), nullptr);
  PR_RETURN_IF_ERROR(take());
  return out;
}

}  // namespace pagereel::testing
