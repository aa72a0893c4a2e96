#include "encode/concat.h"

extern "C" {
#include <libavutil/mathematics.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "encode/av_util.h"
#include "encode/film_writer.h"
#include "encode/sequence.h"
#include "encode/sound_track.h"

namespace pagereel::encode {

namespace fs = std::filesystem;

namespace {

using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;

std::string Named(const std::string& path) { return "segment '" + path + "'"; }

std::string Size(int width, int height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

// One frame at `fps`, as a libav time base.
AVRational FrameBase(Rational fps) {
  return AVRational{static_cast<int>(fps.den), static_cast<int>(fps.num)};
}

Status Cancelled(const JoinOptions& options) {
  if (options.cancel != nullptr && options.cancel->load()) {
    return CancelledError("joining the segments was stopped");
  }
  return Status::Ok();
}

// The frame rate a stream states: its average, else the container's base rate.
AVRational StatedRate(const AVStream& stream) {
  if (stream.avg_frame_rate.num > 0 && stream.avg_frame_rate.den > 0) return stream.avg_frame_rate;
  return stream.r_frame_rate;
}

// A segment film opened for reading: its one video stream, read packet by packet with the
// checks every segment passes (the first packet a keyframe, no packet cut short, decode
// timestamps increasing, and at the end presentation timestamps exactly 0 to n - 1 frames).
class SegmentReader {
 public:
  // Opens `path` and reads its header and stream parameters. Errors name the segment.
  static Result<std::unique_ptr<SegmentReader>> Open(const std::string& path) {
    QuietenLibav();
    std::unique_ptr<SegmentReader> reader(new SegmentReader(path));
    PR_RETURN_IF_ERROR(reader->Init());
    return reader;
  }

  const AVCodecParameters& params() const { return *stream_->codecpar; }
  const AVStream& stream() const { return *stream_; }
  const std::string& path() const { return path_; }
  int64_t packets() const { return static_cast<int64_t>(pts_.size()); }

  // Reads the next packet of the video stream into `packet`, its pts and dts rewritten in
  // units of `frame_base` (one frame) from the segment's start. False at the end.
  Result<bool> Next(AVPacket* packet, AVRational frame_base) {
    for (;;) {
      av_packet_unref(packet);
      int err = av_read_frame(format_.get(), packet);
      if (err == AVERROR_EOF) return false;
      if (err < 0) return AvError(Named(path_) + " is unreadable", err);
      if (packet->stream_index == stream_->index) break;
    }
    const int64_t index = packets();
    if (packet->flags & AV_PKT_FLAG_CORRUPT) {
      return InvalidArgumentError(Named(path_) + " is cut short: frame " + std::to_string(index) +
                                  " is incomplete; render the segment again");
    }
    if (index == 0 && !(packet->flags & AV_PKT_FLAG_KEY)) {
      return InvalidArgumentError(Named(path_) +
                                  " does not begin with a keyframe, so it cannot "
                                  "be joined without encoding again");
    }
    if (packet->pts == AV_NOPTS_VALUE) {
      return InvalidArgumentError(Named(path_) + ": frame " + std::to_string(index) +
                                  " has no timestamp");
    }
    // Streams without reordering may leave decode timestamps out (Matroska does).
    if (packet->dts == AV_NOPTS_VALUE) packet->dts = packet->pts;
    packet->pts = av_rescale_q_rnd(packet->pts, stream_->time_base, frame_base, AV_ROUND_NEAR_INF);
    packet->dts = av_rescale_q_rnd(packet->dts, stream_->time_base, frame_base, AV_ROUND_NEAR_INF);
    packet->duration = 1;
    packet->stream_index = 0;
    packet->pos = -1;
    if (index > 0 && packet->dts <= last_dts_) {
      return InvalidArgumentError(Named(path_) + ": frame " + std::to_string(index) +
                                  " decodes no later than the frame before it");
    }
    last_dts_ = packet->dts;
    pts_.push_back(packet->pts);
    return true;
  }

  // After the last packet: checks the header promised no more frames than were read (a file
  // cut short) and the frames are exactly the timestamps 0 to n - 1 (in `frame_base`, as
  // given to Next()).
  Status Finish(AVRational frame_base) {
    const int64_t count = packets();
    int64_t promised = stream_->nb_frames;
    // Matroska lists no frames, but states the duration up front (through the end of the
    // last frame).
    if (promised == 0 && format_->duration > 0 &&
        format_->duration_estimation_method == AVFMT_DURATION_FROM_STREAM) {
      promised = av_rescale_q_rnd(format_->duration, AVRational{1, AV_TIME_BASE}, frame_base,
                                  AV_ROUND_NEAR_INF);
    }
    if (promised > count || (stream_->nb_frames > 0 && stream_->nb_frames != count)) {
      return InvalidArgumentError(
          Named(path_) + " is cut short: its header promises " + std::to_string(promised) +
          " frames but " + std::to_string(count) + " could be read; render the segment again");
    }
    std::sort(pts_.begin(), pts_.end());
    for (int64_t i = 0; i < count; ++i) {
      if (pts_[static_cast<size_t>(i)] != i) {
        return InvalidArgumentError(
            Named(path_) + " does not hold frames 0 to " + std::to_string(count - 1) +
            " one frame apart (found a frame at " + std::to_string(pts_[static_cast<size_t>(i)]) +
            " where frame " + std::to_string(i) + " should be)");
      }
    }
    return Status::Ok();
  }

 private:
  struct InputClose {
    void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
  };

  explicit SegmentReader(std::string path) : path_(std::move(path)) {}

  Status Init() {
    std::error_code ec;
    if (!fs::exists(path_, ec)) return NotFoundError(Named(path_) + " is missing");
    file_size_ = static_cast<int64_t>(fs::file_size(path_, ec));
    if (ec) return IoError(Named(path_) + " is unreadable: " + ec.message());
    AVFormatContext* raw = nullptr;
    int err = avformat_open_input(&raw, path_.c_str(), nullptr, nullptr);
    if (err < 0) return AvError(Named(path_) + " is unreadable", err);
    format_.reset(raw);
    err = avformat_find_stream_info(format_.get(), nullptr);
    if (err < 0) return AvError(Named(path_) + " is unreadable", err);
    const int index = av_find_best_stream(format_.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (index < 0) return InvalidArgumentError(Named(path_) + " holds no video");
    stream_ = format_->streams[index];
    // The container's index (every frame in MP4 and QuickTime, keyframes in Matroska) says
    // where frames lie: one past the end of the file means the file was cut short.
    const int entries = avformat_index_get_entries_count(stream_);
    for (int i = 0; i < entries; ++i) {
      const AVIndexEntry* entry = avformat_index_get_entry(stream_, i);
      if (entry->pos + entry->size > file_size_) {
        return InvalidArgumentError(Named(path_) +
                                    " is cut short: its index places frames past "
                                    "the end of the file; render the segment again");
      }
    }
    if (stream_->codecpar->format < 0) {
      return InvalidArgumentError(Named(path_) +
                                  " is damaged: its frames cannot be decoded; "
                                  "render the segment again");
    }
    return Status::Ok();
  }

  const std::string path_;
  std::unique_ptr<AVFormatContext, InputClose> format_;
  AVStream* stream_ = nullptr;  // Owned by format_.
  int64_t file_size_ = 0;
  int64_t last_dts_ = 0;
  std::vector<int64_t> pts_;  // Of every packet read, in frames.
};

// What a segment's header says, for messages.
struct SegmentInfo {
  std::string codec;         // libavcodec's name: "h264", "prores", "vp9", "ffv1".
  std::string pixel_format;  // "yuv420p", "bgr0", ...
  int width = 0;
  int height = 0;
  // The rate the container states. Matroska and WebM store a frame duration in whole
  // nanoseconds, so 30000/1001 reads back as a near neighbour.
  Rational fps;
  int64_t frames = 0;  // Video packets: one per frame for the codecs segments use.
};

SegmentInfo InfoOf(const SegmentReader& reader) {
  const AVCodecParameters& p = reader.params();
  SegmentInfo info;
  info.codec = avcodec_get_name(p.codec_id);
  const char* pix_fmt = av_get_pix_fmt_name(static_cast<AVPixelFormat>(p.format));
  info.pixel_format = pix_fmt != nullptr ? pix_fmt : "unknown";
  info.width = p.width;
  info.height = p.height;
  const AVRational rate = StatedRate(reader.stream());
  if (rate.num > 0 && rate.den > 0) info.fps = Rational::Make(rate.num, rate.den);
  info.frames = reader.packets();
  return info;
}

enum class JoinKind {
  kCopy,    // Packets copied: everything the decoder reads must match.
  kDecode,  // Frames decoded: only what the frames look like must match.
};

// Why `segment` cannot be joined to a film whose first segment is `first`; OK when it can.
Status CheckLike(const SegmentReader& first, const SegmentReader& segment, Rational fps,
                 JoinKind kind) {
  const AVCodecParameters& a = first.params();
  const AVCodecParameters& b = segment.params();
  const std::string name = Named(segment.path());
  // "..., but the first segment, 'seg-0.mp4', is h264".
  auto but_first = [&](const std::string& what) {
    return ", but the first segment, '" + first.path() + "', " + what;
  };
  const SegmentInfo info_a = InfoOf(first);
  const SegmentInfo info_b = InfoOf(segment);
  if (a.codec_id != b.codec_id) {
    return InvalidArgumentError(name + " is " + info_b.codec + but_first("is " + info_a.codec));
  }
  if (a.width != b.width || a.height != b.height) {
    return InvalidArgumentError(name + " is " + Size(b.width, b.height) +
                                but_first("is " + Size(a.width, a.height)));
  }
  if (a.format != b.format) {
    return InvalidArgumentError(name + " has pixel format " + info_b.pixel_format +
                                but_first("has " + info_a.pixel_format));
  }
  const AVRational rate = StatedRate(segment.stream());
  const double stated = rate.den > 0 ? av_q2d(rate) : 0;
  // Within a thousandth: Matroska states the rate only to the nanosecond of a frame.
  if (std::abs(stated - fps.ToDouble()) > fps.ToDouble() * 1e-3) {
    char stated_text[32];
    std::snprintf(stated_text, sizeof stated_text, "%.5g", stated);
    return InvalidArgumentError(name + " runs at " + stated_text + " fps, not the film's " +
                                fps.ToString());
  }
  if (kind == JoinKind::kDecode) return Status::Ok();
  const bool same_extradata =
      a.extradata_size == b.extradata_size &&
      (a.extradata_size == 0 ||
       std::equal(a.extradata, a.extradata + a.extradata_size, b.extradata));
  if (!same_extradata || a.profile != b.profile || a.codec_tag != b.codec_tag ||
      a.color_primaries != b.color_primaries || a.color_trc != b.color_trc ||
      a.color_space != b.color_space || a.color_range != b.color_range ||
      a.field_order != b.field_order) {
    return InvalidArgumentError(
        name + " was encoded with other settings than the first segment, '" + first.path() +
        "' (their codec parameters differ): their frames "
        "cannot share one stream; render the segments with one encoder setup");
  }
  return Status::Ok();
}

// Frames `segment` holds, against those it should.
Status CheckCount(const SegmentFile& segment, int64_t count) {
  if (count == segment.frame_count) return Status::Ok();
  return InvalidArgumentError(Named(segment.path) + " holds " + std::to_string(count) +
                              " frames, not the " + std::to_string(segment.frame_count) +
                              " of film frames " + std::to_string(segment.first_frame) + " to " +
                              std::to_string(segment.first_frame + segment.frame_count - 1));
}

// Opens every segment's header and checks it against the first, before anything is written.
// A container that lists its frames (MP4, QuickTime) must list the expected count; others
// are counted as their packets are read.
Status CheckHeaders(const std::vector<SegmentFile>& segments, Rational fps, JoinKind kind) {
  PR_ASSIGN_OR_RETURN(auto first, SegmentReader::Open(segments.front().path));
  for (const SegmentFile& segment : segments) {
    PR_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(segment.path));
    PR_RETURN_IF_ERROR(CheckLike(*first, *reader, fps, kind));
    const int64_t listed = reader->stream().nb_frames;
    if (listed > 0) PR_RETURN_IF_ERROR(CheckCount(segment, listed));
  }
  return Status::Ok();
}

// Segments in film order, contiguous from frame 0, none empty.
Status CheckRanges(const std::vector<SegmentFile>& segments, const std::string& output) {
  if (segments.empty()) return InvalidArgumentError("no segments to join into '" + output + "'");
  int64_t next = 0;
  for (const SegmentFile& s : segments) {
    if (s.frame_count <= 0) {
      return InvalidArgumentError(Named(s.path) + " is given " + std::to_string(s.frame_count) +
                                  " frames; a segment holds at least one");
    }
    if (s.first_frame > next) {
      const std::string missing = s.first_frame - 1 == next
                                      ? "film frame " + std::to_string(next) + " is"
                                      : "film frames " + std::to_string(next) + " to " +
                                            std::to_string(s.first_frame - 1) + " are";
      return InvalidArgumentError(missing + " in no segment: " + Named(s.path) +
                                  " starts at frame " + std::to_string(s.first_frame));
    }
    if (s.first_frame < next) {
      return InvalidArgumentError(
          Named(s.path) + " starts at frame " + std::to_string(s.first_frame) +
          ", inside the segment before it (which ends at frame " + std::to_string(next - 1) + ")");
    }
    next = s.first_frame + s.frame_count;
  }
  return Status::Ok();
}

// The muxer side of a stream copy: one video stream with the first segment's parameters,
// and the film's sound track where it has one, in a file written under a hidden partial
// name and renamed into place by Finish(). Destroyed unfinished, the partial file is removed.
class CopyOutput {
 public:
  // Packets come with timestamps in units of `frame_base` (one frame).
  CopyOutput(const std::string& target, AVRational frame_base)
      : target_(target), partial_(PartialPath(target).string()), frame_base_(frame_base) {}

  ~CopyOutput() {
    format_.reset();  // Closes the file before it is removed.
    std::error_code ec;
    if (!finished_) fs::remove(partial_, ec);
  }

  // `sound`: the film's sound track (may be null), its stream added before the header.
  Status Open(const char* muxer, const AVCodecParameters& params, const SoundTrack* sound) {
    AVFormatContext* fmt = nullptr;
    int err = avformat_alloc_output_context2(&fmt, nullptr, muxer, partial_.c_str());
    if (err < 0) return AvError("setting up the " + std::string(muxer) + " muxer", err);
    format_.reset(fmt);
    if (avformat_query_codec(format_->oformat, params.codec_id, FF_COMPLIANCE_NORMAL) == 0) {
      return InvalidArgumentError("'" + target_ + "' cannot hold " +
                                  avcodec_get_name(params.codec_id) + " segments");
    }
    stream_ = avformat_new_stream(format_.get(), nullptr);
    if (stream_ == nullptr) return InternalError("could not add a video stream");
    err = avcodec_parameters_copy(stream_->codecpar, &params);
    if (err < 0) return AvError("copying the segments' stream parameters", err);
    // The tag the segments' container used, where this muxer writes the same tag for the
    // codec (ProRes keeps apch or ap4h); else the muxer chooses.
    const AVCodecTag* const* tags = format_->oformat->codec_tag;
    unsigned int own_tag = 0;
    if (tags != nullptr && av_codec_get_id(tags, params.codec_tag) != params.codec_id &&
        av_codec_get_tag2(tags, params.codec_id, &own_tag)) {
      stream_->codecpar->codec_tag = 0;
    }
    stream_->time_base = frame_base_;
    stream_->avg_frame_rate = av_inv_q(frame_base_);
    if (sound != nullptr) {
      sound_stream_ = avformat_new_stream(format_.get(), nullptr);
      if (sound_stream_ == nullptr) return InternalError("could not add a sound stream");
      sound_stream_->time_base = sound->codec()->time_base;
      err = avcodec_parameters_from_context(sound_stream_->codecpar, sound->codec());
      if (err < 0) return AvError("copying the sound encoder's parameters", err);
    }
    err = avio_open2(&format_->pb, partial_.c_str(), AVIO_FLAG_WRITE, nullptr, nullptr);
    if (err < 0) return AvError("creating " + partial_, err);
    AVDictionary* options = nullptr;
    // The index in front, as the encoder writes MP4 and QuickTime films.
    if (std::string_view(muxer) == "mp4" || std::string_view(muxer) == "mov") {
      av_dict_set(&options, "movflags", "+faststart", 0);
      if (sound != nullptr) av_dict_set(&options, "movie_timescale", kSoundMovieTimescale, 0);
    }
    err = avformat_write_header(format_.get(), &options);
    av_dict_free(&options);
    if (err < 0) return AvError("writing the header of " + partial_, err);
    return Status::Ok();
  }

  // Writes a packet whose timestamps are in frames of the film.
  Status Write(AVPacket* packet) {
    av_packet_rescale_ts(packet, frame_base_, stream_->time_base);
    packet->stream_index = stream_->index;
    int err = av_interleaved_write_frame(format_.get(), packet);
    if (err < 0) return AvError("writing " + partial_, err);
    return Status::Ok();
  }

  // Writes a packet of the sound track, timestamps in the sound encoder's time base.
  Status WriteSound(AVPacket* packet) {
    av_packet_rescale_ts(packet, AVRational{1, kSoundRate}, sound_stream_->time_base);
    packet->stream_index = sound_stream_->index;
    int err = av_interleaved_write_frame(format_.get(), packet);
    if (err < 0) return AvError("writing the sound of " + partial_, err);
    return Status::Ok();
  }

  Status Finish() {
    int err = av_write_trailer(format_.get());
    if (err < 0) return AvError("finishing " + partial_, err);
    err = avio_closep(&format_->pb);
    if (err < 0) return AvError("closing " + partial_, err);
    PR_RETURN_IF_ERROR(RenameIntoPlace(partial_, target_));
    finished_ = true;
    return Status::Ok();
  }

 private:
  const std::string target_;
  const std::string partial_;
  const AVRational frame_base_;
  std::unique_ptr<AVFormatContext, FormatContextFree> format_;
  AVStream* stream_ = nullptr;  // Owned by format_.
  AVStream* sound_stream_ = nullptr;  // Owned by format_; null without sound.
  bool finished_ = false;
};

// MP4, QuickTime, WebM: the segments' packets one after another, each segment's timestamps
// moved on by its first frame; the film's sound (if any) encoded as they go, each packet's
// sound up to the end of its frame first, so the muxer interleaves them with little held.
Status JoinByCopy(const std::vector<SegmentFile>& segments, const std::string& output,
                  const char* muxer, const JoinOptions& options) {
  PR_RETURN_IF_ERROR(CheckHeaders(segments, options.fps, JoinKind::kCopy));
  const AVRational frame_base = FrameBase(options.fps);
  CopyOutput out(output, frame_base);
  std::unique_ptr<SoundTrack> sound;
  if (options.sound != nullptr) {
    PR_ASSIGN_OR_RETURN(SoundCodec codec, ChooseSoundCodec(options.kind, options.sound_codec));
    const AVOutputFormat* format = av_guess_format(muxer, nullptr, nullptr);
    const bool global_header = format != nullptr && (format->flags & AVFMT_GLOBALHEADER);
    PR_ASSIGN_OR_RETURN(sound, SoundTrack::Open(options.sound, codec, global_header));
  }
  const SoundPacketWriter write_sound = [&](AVPacket* packet) { return out.WriteSound(packet); };
  PacketPtr packet(av_packet_alloc());
  int64_t last_dts = 0;
  bool any = false;  // Packets written so far.
  for (const SegmentFile& segment : segments) {
    PR_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(segment.path));
    if (&segment == &segments.front()) {
      PR_RETURN_IF_ERROR(out.Open(muxer, reader->params(), sound.get()));
    }
    for (;;) {
      PR_RETURN_IF_ERROR(Cancelled(options));
      PR_ASSIGN_OR_RETURN(bool more, reader->Next(packet.get(), frame_base));
      if (!more) break;
      packet->pts += segment.first_frame;
      packet->dts += segment.first_frame;
      // B-frames put a segment's first decode timestamps before its first frame; the same
      // encoder setup gives every segment the same delay, so they still follow the last
      // segment's. Another delay would make them overlap.
      if (any && packet->dts <= last_dts) {
        return InvalidArgumentError(Named(segment.path) +
                                    " cannot follow the segment before it: "
                                    "its frames decode from film frame " +
                                    std::to_string(packet->dts) + ", before that segment's last (" +
                                    std::to_string(last_dts) + "); were they encoded alike?");
      }
      last_dts = packet->dts;
      any = true;
      if (sound) {
        PR_RETURN_IF_ERROR(sound->EncodeUntil(SoundSamples(packet->dts + 1, options.fps), write_sound));
      }
      PR_RETURN_IF_ERROR(out.Write(packet.get()));
    }
    PR_RETURN_IF_ERROR(reader->Finish(frame_base));
    PR_RETURN_IF_ERROR(CheckCount(segment, reader->packets()));
  }
  if (sound) PR_RETURN_IF_ERROR(sound->Finish(write_sound));
  return out.Finish();
}

// RGBA copies of decoded frames, for the GIF encoder.
class RgbaFrames {
 public:
  // Converts `frame` and returns a view of it, valid until the next call.
  Result<RgbaView> Convert(const AVFrame& frame) {
    const auto format = static_cast<AVPixelFormat>(frame.format);
    sws_.reset(sws_getCachedContext(sws_.release(), frame.width, frame.height, format, frame.width,
                                    frame.height, AV_PIX_FMT_RGBA, SWS_BILINEAR | SWS_ACCURATE_RND,
                                    nullptr, nullptr, nullptr));
    if (!sws_) return InternalError("could not set up pixel conversion from a segment's frames");
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
    if (desc != nullptr && !(desc->flags & AV_PIX_FMT_FLAG_RGB)) {
      // YUV as the encoder writes it: BT.709, limited range.
      sws_setColorspaceDetails(sws_.get(), sws_getCoefficients(SWS_CS_ITU709),
                               frame.color_range == AVCOL_RANGE_JPEG ? 1 : 0,
                               sws_getCoefficients(SWS_CS_ITU709), 1, 0, 1 << 16, 1 << 16);
    }
    const int stride = frame.width * 4;
    rgba_.resize(static_cast<size_t>(stride) * static_cast<size_t>(frame.height));
    uint8_t* dst[1] = {rgba_.data()};
    int dst_stride[1] = {stride};
    sws_scale(sws_.get(), frame.data, frame.linesize, 0, frame.height, dst, dst_stride);
    return RgbaView{rgba_.data(), frame.width, frame.height, stride};
  }

 private:
  std::unique_ptr<SwsContext, SwsFree> sws_;
  std::vector<uint8_t> rgba_;
};

// GIF: every segment's frames decoded, in order, into one GIF encoder, which builds the
// palette from the whole film.
Status JoinToGif(const std::vector<SegmentFile>& segments, const std::string& output,
                 const JoinOptions& options) {
  PR_RETURN_IF_ERROR(CheckHeaders(segments, options.fps, JoinKind::kDecode));
  const AVRational frame_base = FrameBase(options.fps);
  std::unique_ptr<FilmWriter> writer;
  PacketPtr packet(av_packet_alloc());
  FramePtr frame(av_frame_alloc());
  RgbaFrames rgba;
  for (const SegmentFile& segment : segments) {
    PR_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(segment.path));
    const AVCodecParameters& params = reader->params();
    if (!writer) {
      FilmWriterOptions writer_options;
      writer_options.film.kind = FilmKind::kGif;
      writer_options.film.width = params.width;
      writer_options.film.height = params.height;
      writer_options.film.fps = options.fps;
      writer_options.path = output;
      PR_ASSIGN_OR_RETURN(writer, FilmWriter::Open(writer_options));
    }
    const AVCodec* codec = avcodec_find_decoder(params.codec_id);
    if (codec == nullptr) {
      return InvalidArgumentError(Named(segment.path) + " is " + avcodec_get_name(params.codec_id) +
                                  ", which this FFmpeg cannot decode");
    }
    std::unique_ptr<AVCodecContext, CodecContextFree> decoder(avcodec_alloc_context3(codec));
    int err = avcodec_parameters_to_context(decoder.get(), &params);
    if (err < 0) return AvError("setting up a decoder for " + Named(segment.path), err);
    decoder->pkt_timebase = frame_base;
    err = avcodec_open2(decoder.get(), codec, nullptr);
    if (err < 0) return AvError("opening a decoder for " + Named(segment.path), err);

    int64_t decoded = 0;
    auto drain = [&]() -> Status {
      for (;;) {
        int e = avcodec_receive_frame(decoder.get(), frame.get());
        if (e == AVERROR(EAGAIN) || e == AVERROR_EOF) return Status::Ok();
        if (e < 0) return AvError("decoding " + Named(segment.path), e);
        ++decoded;
        PR_ASSIGN_OR_RETURN(RgbaView view, rgba.Convert(*frame));
        PR_RETURN_IF_ERROR(writer->Write(view));
      }
    };
    for (;;) {
      PR_RETURN_IF_ERROR(Cancelled(options));
      PR_ASSIGN_OR_RETURN(bool more, reader->Next(packet.get(), frame_base));
      if (!more) break;
      err = avcodec_send_packet(decoder.get(), packet.get());
      if (err < 0) return AvError("decoding " + Named(segment.path), err);
      PR_RETURN_IF_ERROR(drain());
    }
    err = avcodec_send_packet(decoder.get(), nullptr);
    if (err < 0) return AvError("decoding " + Named(segment.path), err);
    PR_RETURN_IF_ERROR(drain());
    PR_RETURN_IF_ERROR(reader->Finish(frame_base));
    PR_RETURN_IF_ERROR(CheckCount(segment, decoded));
  }
  return writer->Finish();
}

Status CheckSequenceSegment(const SegmentFile& segment, const SequencePattern& pattern) {
  std::error_code ec;
  if (!fs::is_directory(pattern.Folder(), ec)) {
    return NotFoundError(Named(segment.path) + " is missing: there is no folder '" +
                         pattern.Folder().string() + "'");
  }
  for (int64_t i = 0; i < segment.frame_count; ++i) {
    if (!fs::exists(pattern.Name(i), ec)) {
      return NotFoundError(Named(segment.path) + " is missing frame " + std::to_string(i) + " ('" +
                           pattern.Name(i).string() + "') of its " +
                           std::to_string(segment.frame_count));
    }
  }
  return CheckCount(segment, static_cast<int64_t>(ExistingSequenceFiles(segment.path).size()));
}

// Partial files not yet renamed into place; removed unless Release()d.
class PartialFiles {
 public:
  ~PartialFiles() {
    std::error_code ec;
    for (const auto& [partial, target] : files_) fs::remove(partial, ec);
  }
  void Add(fs::path partial, fs::path target) {
    files_.emplace_back(std::move(partial), std::move(target));
  }
  const std::vector<std::pair<fs::path, fs::path>>& files() const { return files_; }
  void Release() { files_.clear(); }

 private:
  std::vector<std::pair<fs::path, fs::path>> files_;  // Partial name, final name.
};

Status CopyFile(const fs::path& from, const fs::path& to) {
  auto fail = [&](int err) {
    return ErrnoError("copying " + from.string() + " to " + to.string(), err);
  };
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return fail(errno);
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) return fail(errno);
  std::vector<char> buffer(1 << 16);
  for (;;) {
    ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out.get(), buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return fail(errno);
      done += w;
    }
  }
  if (::close(out.release()) != 0) return fail(errno);
  return Status::Ok();
}

// A second name for `from` at `to`: a hard link, or a copy where the file systems differ
// or links are not allowed.
Status LinkOrCopy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (!ec) return Status::Ok();
  const int err = ec.value();
  if (err != EXDEV && err != EPERM && err != EMLINK && err != ENOTSUP) {
    return IoError("linking " + from.string() + " to " + to.string() + ": " + ec.message());
  }
  // Copied by hand: libstdc++'s copy_file reports any failure of its fallback path as EIO,
  // which would hide a full disk.
  Status copied = CopyFile(from, to);
  if (!copied.ok()) fs::remove(to, ec);
  return copied;
}

// Image sequences: every segment's files linked under partial names of the output's files,
// then renamed into place together, then the files of an older sequence of the same pattern
// that are not part of this one removed (as the sequence encoder does).
Status JoinSequences(const std::vector<SegmentFile>& segments, const std::string& output,
                     const JoinOptions& options) {
  const std::string extension = "." + std::string(FileExtension(options.kind));
  std::optional<SequencePattern> parsed = SequencePattern::Parse(output);
  if (!parsed || parsed->Extension() != extension) {
    return InvalidArgumentError("'" + output + "' is not a pattern of " + extension +
                                " files such as frames/%05d" + extension);
  }
  const SequencePattern& out = *parsed;
  std::vector<SequencePattern> patterns;
  for (const SegmentFile& segment : segments) {
    std::optional<SequencePattern> pattern = SequencePattern::Parse(segment.path);
    if (!pattern || pattern->Extension() != extension) {
      return InvalidArgumentError(Named(segment.path) + " is not a pattern of " + extension +
                                  " files such as seg/%05d" + extension + ", as '" + output +
                                  "' is");
    }
    patterns.push_back(*pattern);
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    const SegmentFile& segment = segments[i];
    std::error_code ec;
    if (fs::equivalent(patterns[i].Folder(), out.Folder(), ec)) {
      return InvalidArgumentError(Named(segment.path) +
                                  " is in the output's folder; each "
                                  "segment's files belong in a folder of their own");
    }
    PR_RETURN_IF_ERROR(CheckSequenceSegment(segment, patterns[i]));
  }

  PartialFiles partials;
  for (size_t i = 0; i < segments.size(); ++i) {
    for (int64_t f = 0; f < segments[i].frame_count; ++f) {
      PR_RETURN_IF_ERROR(Cancelled(options));
      const fs::path target = out.Name(segments[i].first_frame + f);
      const fs::path partial = PartialPath(target);
      PR_RETURN_IF_ERROR(LinkOrCopy(patterns[i].Name(f), partial));
      partials.Add(partial, target);
    }
  }
  std::unordered_set<std::string> placed;
  for (const auto& [partial, target] : partials.files()) {
    PR_RETURN_IF_ERROR(RenameIntoPlace(partial, target));
    placed.insert(target.filename().string());
  }
  partials.Release();
  for (const std::string& old : ExistingSequenceFiles(output)) {
    std::error_code ec;
    if (!placed.contains(fs::path(old).filename().string())) fs::remove(old, ec);
  }
  return Status::Ok();
}

}  // namespace

Status JoinSegments(const std::vector<SegmentFile>& segments, const std::string& output,
                    const JoinOptions& options) {
  PR_RETURN_IF_ERROR(CheckRanges(segments, output));
  if (options.sound != nullptr) {
    PR_RETURN_IF_ERROR(ChooseSoundCodec(options.kind, options.sound_codec).status());
    const int64_t frames = segments.empty() ? 0 : segments.back().first_frame + segments.back().frame_count;
    PR_RETURN_IF_ERROR(CheckSoundLength(*options.sound, frames, options.fps));
  }
  switch (options.kind) {
    case FilmKind::kMp4:
      return JoinByCopy(segments, output, "mp4", options);
    case FilmKind::kMov:
      return JoinByCopy(segments, output, "mov", options);
    case FilmKind::kWebm:
      return JoinByCopy(segments, output, "webm", options);
    case FilmKind::kMkv:
      return JoinByCopy(segments, output, "matroska", options);
    case FilmKind::kGif:
      return JoinToGif(segments, output, options);
    case FilmKind::kPngSequence:
    case FilmKind::kJpegSequence:
      return JoinSequences(segments, output, options);
  }
  return InternalError("unhandled film kind");
}

}  // namespace pagereel::encode
