#include "encode/av_util.h"

extern "C" {
#include <libavutil/error.h>
}
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace pagereel::encode {

namespace fs = std::filesystem;

Status AvError(std::string_view context, int err) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, text, sizeof text);
  std::string message = std::string(context) + ": " + text;
  if (err == AVERROR(ENOSPC) || err == AVERROR(EDQUOT) || err == AVERROR(ENOMEM)) {
    return ResourceExhaustedError(std::move(message));
  }
  if (err == AVERROR(EACCES) || err == AVERROR(EROFS)) {
    return InvalidArgumentError(std::move(message));
  }
  return IoError(std::move(message));
}

fs::path PartialPath(const fs::path& target) {
  fs::path p = target;
  return p.replace_filename("." + target.stem().string() + ".partial-" +
                            std::to_string(::getpid()) + target.extension().string());
}

Status RenameIntoPlace(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) return IoError("moving " + from.string() + " to " + to.string() + ": " + ec.message());
  return Status::Ok();
}

std::vector<uint8_t> PackRgba(const uint8_t* data, int width, int height, int stride) {
  const size_t row = static_cast<size_t>(width) * 4;
  std::vector<uint8_t> packed(row * static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) {
    std::copy_n(data + static_cast<size_t>(y) * stride, row, packed.data() + y * row);
  }
  return packed;
}

void FormatContextFree::operator()(AVFormatContext* f) const {
  if (f->pb != nullptr && !(f->oformat->flags & AVFMT_NOFILE)) avio_closep(&f->pb);
  avformat_free_context(f);
}

AvOutput::AvOutput(fs::path target) : target_(std::move(target)), partial_(PartialPath(target_)) {}

AvOutput::~AvOutput() {
  if (!finished_) {
    format_.reset();  // Closes the file before it is removed.
    std::error_code ec;
    fs::remove(partial_, ec);
  }
}

Status AvOutput::Open(const char* format_name, const char* codec_name,
                      const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
                      AVDictionary** muxer_options) {
  const AVCodec* codec = avcodec_find_encoder_by_name(codec_name);
  if (codec == nullptr) {
    return NotFoundError(std::string("this FFmpeg has no ") + codec_name +
                         " encoder; install Debian's FFmpeg libraries (apt-get install "
                         "libavcodec-dev)");
  }
  AVFormatContext* fmt = nullptr;
  int err = avformat_alloc_output_context2(&fmt, nullptr, format_name, partial_.c_str());
  if (err < 0) return AvError("setting up the " + std::string(format_name) + " muxer", err);
  format_.reset(fmt);

  codec_.reset(avcodec_alloc_context3(codec));
  if (format_->oformat->flags & AVFMT_GLOBALHEADER) {
    codec_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  }
  AVDictionary* codec_options = nullptr;
  configure(codec_.get(), &codec_options);
  err = avcodec_open2(codec_.get(), codec, &codec_options);
  av_dict_free(&codec_options);
  if (err < 0) return AvError(std::string("opening the ") + codec_name + " encoder", err);

  stream_ = avformat_new_stream(format_.get(), nullptr);
  if (stream_ == nullptr) return InternalError("could not add a video stream");
  stream_->time_base = codec_->time_base;
  stream_->avg_frame_rate = codec_->framerate;
  err = avcodec_parameters_from_context(stream_->codecpar, codec_.get());
  if (err < 0) return AvError("copying encoder parameters", err);

  err = avio_open(&format_->pb, partial_.c_str(), AVIO_FLAG_WRITE);
  if (err < 0) return AvError("creating " + partial_.string(), err);
  err = avformat_write_header(format_.get(), muxer_options);
  if (err < 0) return AvError("writing the header of " + partial_.string(), err);
  packet_.reset(av_packet_alloc());
  return Status::Ok();
}

Status AvOutput::Send(AVFrame* frame) {
  int err = avcodec_send_frame(codec_.get(), frame);
  if (err < 0) return AvError("encoding a frame", err);
  for (;;) {
    err = avcodec_receive_packet(codec_.get(), packet_.get());
    if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return Status::Ok();
    if (err < 0) return AvError("encoding a frame", err);
    av_packet_rescale_ts(packet_.get(), codec_->time_base, stream_->time_base);
    packet_->stream_index = stream_->index;
    err = av_interleaved_write_frame(format_.get(), packet_.get());
    if (err < 0) return AvError("writing " + partial_.string(), err);
  }
}

Status AvOutput::Finish() {
  PR_RETURN_IF_ERROR(Send(nullptr));
  int err = av_write_trailer(format_.get());
  if (err < 0) return AvError("finishing " + partial_.string(), err);
  err = avio_closep(&format_->pb);
  if (err < 0) return AvError("closing " + partial_.string(), err);
  PR_RETURN_IF_ERROR(RenameIntoPlace(partial_, target_));
  finished_ = true;
  return Status::Ok();
}

}  // namespace pagereel::encode
