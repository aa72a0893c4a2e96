#include "encode/av_util.h"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/log.h>
}
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "encode/sound_track.h"

namespace pagereel::encode {

namespace fs = std::filesystem;

void QuietenLibav() {
  static std::once_flag quiet;
  std::call_once(quiet, [] { av_log_set_level(AV_LOG_ERROR); });
}

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

namespace {

// The SRT latency an srt:// URL asks for (FFmpeg's `latency` option, in microseconds), or
// SRT's default of 120 ms.
std::chrono::microseconds SrtLatency(const std::string& url) {
  const size_t query = url.find('?');
  if (query != std::string::npos) {
    for (size_t at = url.find("latency=", query); at != std::string::npos; at = url.find("latency=", at + 1)) {
      const char before = url[at - 1];
      if (before != '?' && before != '&') continue;  // rcvlatency=, peerlatency=.
      const long long micros = std::atoll(url.c_str() + at + 8);
      if (micros > 0) return std::chrono::microseconds(std::min<long long>(micros, 10'000'000));
    }
  }
  return std::chrono::milliseconds(120);
}

}  // namespace

void FormatContextFree::operator()(AVFormatContext* f) const {
  // A custom (memory) AVIOContext belongs to its AvMuxer, not to the format.
  if (f->pb != nullptr && !(f->oformat->flags & AVFMT_NOFILE) &&
      !(f->flags & AVFMT_FLAG_CUSTOM_IO)) {
    avio_closep(&f->pb);
  }
  avformat_free_context(f);
}

// A file held in memory for a kMemoryFile sink: seekable, so muxers that go back to fill in
// an index (MP4's moov, Matroska's cues and duration) write what they write to a file; MP4's
// faststart pass reopens the output for reading, through the format's io_open, as a Reader.
struct AvMuxer::MemoryFile {
  std::vector<uint8_t> bytes;
  size_t pos = 0;

  struct Reader {
    const MemoryFile* file;
    size_t pos = 0;
  };

  static int Write(void* opaque, uint8_t* data, int size) {
    auto* f = static_cast<MemoryFile*>(opaque);
    const size_t end = f->pos + static_cast<size_t>(size);
    if (end > f->bytes.size()) f->bytes.resize(end);
    std::copy_n(data, size, f->bytes.begin() + static_cast<std::ptrdiff_t>(f->pos));
    f->pos = end;
    return size;
  }

  static int64_t Seek(void* opaque, int64_t offset, int whence) {
    auto* f = static_cast<MemoryFile*>(opaque);
    return SeekIn(f->bytes.size(), &f->pos, offset, whence);
  }

  static int Read(void* opaque, uint8_t* data, int size) {
    auto* r = static_cast<Reader*>(opaque);
    const std::vector<uint8_t>& bytes = r->file->bytes;
    if (r->pos >= bytes.size()) return AVERROR_EOF;
    const size_t n = std::min(bytes.size() - r->pos, static_cast<size_t>(size));
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(r->pos), n, data);
    r->pos += n;
    return static_cast<int>(n);
  }

  static int64_t SeekReader(void* opaque, int64_t offset, int whence) {
    auto* r = static_cast<Reader*>(opaque);
    return SeekIn(r->file->bytes.size(), &r->pos, offset, whence);
  }

  static int64_t SeekIn(size_t size, size_t* pos, int64_t offset, int whence) {
    whence &= ~AVSEEK_FORCE;
    int64_t to = 0;
    switch (whence) {
      case AVSEEK_SIZE: return static_cast<int64_t>(size);
      case SEEK_SET: to = offset; break;
      case SEEK_CUR: to = static_cast<int64_t>(*pos) + offset; break;
      case SEEK_END: to = static_cast<int64_t>(size) + offset; break;
      default: return AVERROR(EINVAL);
    }
    if (to < 0) return AVERROR(EINVAL);
    *pos = static_cast<size_t>(to);
    return to;
  }

  // AVFormatContext::io_open for the faststart pass: the only file a muxer reopens is its
  // own output, for reading.
  static int OpenForReading(AVFormatContext* s, AVIOContext** pb, const char* /*url*/, int flags,
                            AVDictionary** /*options*/) {
    if (flags != AVIO_FLAG_READ) return AVERROR(EPERM);
    auto* reader = new Reader{static_cast<const MemoryFile*>(s->opaque)};
    constexpr int kBufferSize = 64 * 1024;
    auto* buffer = static_cast<uint8_t*>(av_malloc(kBufferSize));
    *pb = buffer == nullptr ? nullptr
                            : avio_alloc_context(buffer, kBufferSize, 0, reader, &Read, nullptr,
                                                 &SeekReader);
    if (*pb == nullptr) {
      av_free(buffer);
      delete reader;
      return AVERROR(ENOMEM);
    }
    return 0;
  }

  static int CloseReader(AVFormatContext* /*s*/, AVIOContext* pb) {
    delete static_cast<Reader*>(pb->opaque);
    av_freep(&pb->buffer);
    avio_context_free(&pb);
    return 0;
  }
};

AvMuxer::AvMuxer(Sink sink, std::function<bool()> should_stop)
    : sink_(std::move(sink)),
      should_stop_(std::move(should_stop)),
      write_path_(sink_.kind == Sink::Kind::kFile ? PartialPath(sink_.target).string()
                                                  : sink_.target) {}

AvMuxer::~AvMuxer() {
  const bool remove = !finished_ && sink_.kind == Sink::Kind::kFile;
  format_.reset();  // Closes the file before it is removed.
  if (memory_io_ != nullptr) {
    av_freep(&memory_io_->buffer);
    avio_context_free(&memory_io_);
  }
  if (remove) {
    std::error_code ec;
    fs::remove(write_path_, ec);
  }
}

int AvMuxer::WriteToMemory(void* opaque, uint8_t* data, int size) {
  auto* self = static_cast<AvMuxer*>(opaque);
  if (!self->memory_status_.ok()) return AVERROR(EIO);
  self->memory_status_ = self->sink_.write(std::span<const uint8_t>(data, static_cast<size_t>(size)));
  if (!self->memory_status_.ok()) return AVERROR(EIO);
  self->memory_bytes_ += size;
  return size;
}

int AvMuxer::WriteToSrt(void* opaque, uint8_t* data, int size) {
  auto* self = static_cast<AvMuxer*>(opaque);
  if (!self->memory_status_.ok()) return AVERROR(EIO);
  self->memory_status_ = self->srt_->Send(std::span<const uint8_t>(data, static_cast<size_t>(size)));
  if (!self->memory_status_.ok()) return AVERROR(EIO);
  self->memory_bytes_ += size;
  return size;
}

int AvMuxer::Interrupted(void* opaque) {
  auto* self = static_cast<AvMuxer*>(opaque);
  return self->should_stop_ && self->should_stop_() ? 1 : 0;
}

namespace {

// A media file a muxer opens of its own (HLS's segments), not its playlist.
bool IsMediaFile(const char* url) {
  const std::string_view name(url == nullptr ? "" : url);
  for (std::string_view ext : {".ts", ".m4s", ".mp4"}) {
    if (name.size() >= ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) return true;
  }
  return false;
}

}  // namespace

int AvMuxer::OpenCounted(AVFormatContext* s, AVIOContext** pb, const char* url, int flags,
                         AVDictionary** options) {
  auto* self = static_cast<AvMuxer*>(s->opaque);
  const int err = self->own_open_(s, pb, url, flags, options);
  if (err >= 0 && (flags & AVIO_FLAG_WRITE) && IsMediaFile(url)) self->open_segment_ = *pb;
  return err;
}

int AvMuxer::CloseCounted(AVFormatContext* s, AVIOContext* pb) {
  auto* self = static_cast<AvMuxer*>(s->opaque);
  if (pb != nullptr && pb == self->open_segment_) {
    avio_flush(pb);
    self->segment_bytes_ += avio_tell(pb);
    self->open_segment_ = nullptr;
  }
  return self->own_close_(s, pb);
}

int64_t AvMuxer::bytes_written() const {
  if (sink_.kind == Sink::Kind::kMemory || srt_) return memory_bytes_;
  if (memory_file_) return static_cast<int64_t>(memory_file_->bytes.size());
  if (own_open_ != nullptr) {
    return segment_bytes_ + (open_segment_ != nullptr ? avio_tell(open_segment_) : 0);
  }
  if (!format_ || format_->pb == nullptr) return closed_bytes_;
  return avio_tell(format_->pb);
}

std::optional<int64_t> AvMuxer::unacknowledged_from() const {
  if (!srt_) return std::nullopt;
  return srt_->unacknowledged_from();
}

std::optional<SrtLinkStats> AvMuxer::link() const {
  if (!srt_) return std::nullopt;
  return srt_->Stats();
}

Status AvMuxer::Create(const char* format_name) {
  AVFormatContext* fmt = nullptr;
  int err = avformat_alloc_output_context2(&fmt, nullptr, format_name, write_path_.c_str());
  if (err < 0) return AvError("setting up the " + std::string(format_name) + " muxer", err);
  format_.reset(fmt);
  format_->interrupt_callback = AVIOInterruptCB{&AvMuxer::Interrupted, this};
  // UDP sends a datagram per flush: flushed per packet, a frame's last datagram would be
  // short. Filled instead, every datagram is the URL's pkt_size (7 TS packets, 1316 bytes,
  // as receivers expect); a frame's tail then leaves with the next frame.
  const bool udp = sink_.kind == Sink::Kind::kUrl && sink_.target.rfind("udp://", 0) == 0;
  if ((sink_.kind == Sink::Kind::kGrowingFile || sink_.kind == Sink::Kind::kUrl) && !udp) {
    // Each packet reaches the kernel as it is muxed: a live recording is playable up to its
    // last packet if the process dies, and a peer gets frames without buffering delay.
    format_->flags |= AVFMT_FLAG_FLUSH_PACKETS;
  }
  if (udp) format_->flush_packets = 0;  // Not even at a packet's end when the buffer is small.
  if ((format_->oformat->flags & AVFMT_NOFILE) && sink_.kind == Sink::Kind::kGrowingFile) {
    // The muxer writes files of its own (HLS): count their bytes as they are closed.
    own_open_ = format_->io_open;
    own_close_ = format_->io_close2;
    format_->opaque = this;
    format_->io_open = &AvMuxer::OpenCounted;
    format_->io_close2 = &AvMuxer::CloseCounted;
  }
  return Status::Ok();
}

bool AvMuxer::WantsGlobalHeader() const {
  return format_ && (format_->oformat->flags & AVFMT_GLOBALHEADER) != 0;
}

Result<int> AvMuxer::AddStream(const AVCodecContext* encoder) {
  AVStream* stream = avformat_new_stream(format_.get(), nullptr);
  if (stream == nullptr) return InternalError("could not add a video stream");
  stream->time_base = encoder->time_base;
  stream->avg_frame_rate = encoder->framerate;
  int err = avcodec_parameters_from_context(stream->codecpar, encoder);
  if (err < 0) return AvError("copying encoder parameters", err);
  return stream->index;
}

Result<int> AvMuxer::AddStream(const AVCodecParameters* parameters, AVRational time_base,
                               AVRational frame_rate) {
  AVStream* stream = avformat_new_stream(format_.get(), nullptr);
  if (stream == nullptr) return InternalError("could not add a video stream");
  stream->time_base = time_base;
  stream->avg_frame_rate = frame_rate;
  int err = avcodec_parameters_copy(stream->codecpar, parameters);
  if (err < 0) return AvError("copying encoder parameters", err);
  return stream->index;
}

Status AvMuxer::Start(AVDictionary** muxer_options, AVDictionary** protocol_options) {
  if (!(format_->oformat->flags & AVFMT_NOFILE)) {
    if (sink_.kind == Sink::Kind::kMemory || sink_.kind == Sink::Kind::kMemoryFile) {
      PR_RETURN_IF_ERROR(OpenMemory());
    } else if (sink_.kind == Sink::Kind::kUrl && write_path_.rfind("srt://", 0) == 0 && SrtSender::Available()) {
      PR_RETURN_IF_ERROR(OpenSrt(protocol_options));
    } else {
      // Without libsrt, libavformat's SRT sends it, but the URL's options are checked all the
      // same: libavformat would ignore one it does not know (a misspelt passphrase).
      if (sink_.kind == Sink::Kind::kUrl && write_path_.rfind("srt://", 0) == 0) {
        PR_RETURN_IF_ERROR(ParseSrtUrl(write_path_).status());
      }
      int err = avio_open2(&format_->pb, write_path_.c_str(), AVIO_FLAG_WRITE,
                           &format_->interrupt_callback, protocol_options);
      if (err < 0) {
        return AvError((sink_.kind == Sink::Kind::kUrl ? "connecting to " : "creating ") +
                           write_path_, err);
      }
    }
  }
  int err = avformat_write_header(format_.get(), muxer_options);
  if (err < 0) {
    if (!memory_status_.ok()) return memory_status_;
    return AvError("writing the header of " + write_path_, err);
  }
  return Status::Ok();
}

Status AvMuxer::OpenSrt(AVDictionary** protocol_options) {
  std::vector<std::pair<std::string, std::string>> extra;
  const AVDictionaryEntry* entry = nullptr;
  while (protocol_options != nullptr &&
         (entry = av_dict_get(*protocol_options, "", entry, AV_DICT_IGNORE_SUFFIX)) != nullptr) {
    extra.emplace_back(entry->key, entry->value);
  }
  PR_ASSIGN_OR_RETURN(SrtUrl url, ParseSrtUrl(write_path_, extra));
  Result<std::unique_ptr<SrtSender>> sender = SrtSender::Open(url, should_stop_);
  if (!sender.ok()) {
    return Status(sender.status().code(), "connecting to " + write_path_ + ": " + std::string(sender.status().message()));
  }
  srt_ = std::move(sender).value();
  // A buffer of one SRT message: the muxer's bytes leave in messages of the payload size (7
  // transport packets), and a packet's tail as a shorter one when the muxer flushes.
  const int size = srt_->payload_size();
  auto* buffer = static_cast<uint8_t*>(av_malloc(static_cast<size_t>(size)));
  if (buffer == nullptr) return ResourceExhaustedError("no memory for an output buffer");
  memory_io_ = avio_alloc_context(buffer, size, 1, this, nullptr, &AvMuxer::WriteToSrt, nullptr);
  if (memory_io_ == nullptr) {
    av_free(buffer);
    return ResourceExhaustedError("no memory for an output buffer");
  }
  memory_io_->max_packet_size = size;
  format_->pb = memory_io_;
  format_->flags |= AVFMT_FLAG_CUSTOM_IO;
  return Status::Ok();
}

Status AvMuxer::OpenMemory() {
  constexpr int kBufferSize = 64 * 1024;
  auto* buffer = static_cast<uint8_t*>(av_malloc(kBufferSize));
  if (buffer == nullptr) return ResourceExhaustedError("no memory for an output buffer");
  if (sink_.kind == Sink::Kind::kMemoryFile) {
    memory_file_ = std::make_unique<MemoryFile>();
    memory_io_ = avio_alloc_context(buffer, kBufferSize, 1, memory_file_.get(), nullptr,
                                    &MemoryFile::Write, &MemoryFile::Seek);
    format_->opaque = memory_file_.get();
    format_->io_open = &MemoryFile::OpenForReading;
    format_->io_close2 = &MemoryFile::CloseReader;
  } else {
    memory_io_ = avio_alloc_context(buffer, kBufferSize, 1, this, nullptr,
                                    &AvMuxer::WriteToMemory, nullptr);
  }
  if (memory_io_ == nullptr) {
    av_free(buffer);
    return ResourceExhaustedError("no memory for an output buffer");
  }
  format_->pb = memory_io_;
  format_->flags |= AVFMT_FLAG_CUSTOM_IO;
  return Status::Ok();
}

Status AvMuxer::Write(AVPacket* packet, AVRational time_base, int stream) {
  AVStream* s = format_->streams[stream];
  av_packet_rescale_ts(packet, time_base, s->time_base);
  packet->stream_index = stream;
  int err = av_interleaved_write_frame(format_.get(), packet);
  if (err < 0) {
    if (!memory_status_.ok()) return memory_status_;
    return AvError("writing " + write_path_, err);
  }
  return Status::Ok();
}

Status AvMuxer::Finish() {
  int err = av_write_trailer(format_.get());
  if (err < 0) {
    if (!memory_status_.ok()) return memory_status_;
    return AvError("finishing " + write_path_, err);
  }
  if (memory_io_ != nullptr) {
    avio_flush(memory_io_);
    if (!memory_status_.ok()) return memory_status_;
    if (srt_) srt_->Close();  // Once the receiver can have played out every frame sent.
    if (memory_file_) {
      PR_RETURN_IF_ERROR(sink_.write(std::span<const uint8_t>(memory_file_->bytes)));
      memory_file_.reset();
    }
  } else if (!(format_->oformat->flags & AVFMT_NOFILE)) {
    closed_bytes_ = avio_tell(format_->pb);
    if (sink_.kind == Sink::Kind::kUrl && write_path_.rfind("srt://", 0) == 0) {
      avio_flush(format_->pb);
      // An SRT receiver hands packets on only once its latency has passed since they were
      // sent, and drops what it still holds when the connection closes: closed at once, the
      // show's last 120 ms never reached it. Closed after the latency (and a margin for the
      // last acknowledgements), every frame counted as sent has been delivered.
      std::this_thread::sleep_for(SrtLatency(write_path_) + std::chrono::milliseconds(100));
    }
    err = avio_closep(&format_->pb);
    if (err < 0) return AvError("closing " + write_path_, err);
  }
  if (sink_.kind == Sink::Kind::kFile) PR_RETURN_IF_ERROR(RenameIntoPlace(write_path_, sink_.target));
  finished_ = true;
  return Status::Ok();
}

Status AvEncoder::Open(const char* codec_name,
                       const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
                       bool global_header) {
  const AVCodec* codec = avcodec_find_encoder_by_name(codec_name);
  if (codec == nullptr) {
    return NotFoundError(std::string("this FFmpeg has no ") + codec_name +
                         " encoder; install Debian's FFmpeg libraries (apt-get install "
                         "libavcodec-dev)");
  }
  codec_.reset(avcodec_alloc_context3(codec));
  if (global_header) codec_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  AVDictionary* codec_options = nullptr;
  configure(codec_.get(), &codec_options);
  int err = avcodec_open2(codec_.get(), codec, &codec_options);
  av_dict_free(&codec_options);
  if (err < 0) return AvError(std::string("opening the ") + codec_name + " encoder", err);
  packet_.reset(av_packet_alloc());
  return Status::Ok();
}

Status AvEncoder::Send(AVFrame* frame, const std::function<Status(AVPacket*)>& each) {
  int err = avcodec_send_frame(codec_.get(), frame);
  if (err < 0) return AvError("encoding a frame", err);
  for (;;) {
    err = avcodec_receive_packet(codec_.get(), packet_.get());
    if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return Status::Ok();
    if (err < 0) return AvError("encoding a frame", err);
    Status written = each(packet_.get());
    av_packet_unref(packet_.get());
    PR_RETURN_IF_ERROR(written);
  }
}

AvOutput::AvOutput(Sink sink, std::function<bool()> should_stop)
    : muxer_(std::move(sink), std::move(should_stop)) {}

AvOutput::~AvOutput() = default;

Status AvOutput::Open(const char* format_name, const char* codec_name,
                      const std::function<void(AVCodecContext*, AVDictionary**)>& configure,
                      AVDictionary** muxer_options, AVDictionary** protocol_options,
                      SoundSource* sound, SoundCodec sound_codec) {
  PR_RETURN_IF_ERROR(muxer_.Create(format_name));
  PR_RETURN_IF_ERROR(encoder_.Open(codec_name, configure, muxer_.WantsGlobalHeader()));
  PR_ASSIGN_OR_RETURN(stream_, muxer_.AddStream(encoder_.codec()));
  if (sound != nullptr) {
    PR_ASSIGN_OR_RETURN(sound_, SoundTrack::Open(sound, sound_codec, muxer_.WantsGlobalHeader()));
    PR_ASSIGN_OR_RETURN(sound_stream_, muxer_.AddStream(sound_->codec()));
  }
  return muxer_.Start(muxer_options, protocol_options);
}

Status AvOutput::WriteSound(AVPacket* packet) {
  return muxer_.Write(packet, AVRational{1, kSoundRate}, sound_stream_);
}

Status AvOutput::Send(AVFrame* frame) {
  const AVRational time_base = encoder_.codec()->time_base;
  if (sound_ && frame != nullptr) {
    const int64_t end = av_rescale_q_rnd(frame->pts + 1, time_base, AVRational{1, kSoundRate}, AV_ROUND_DOWN);
    PR_RETURN_IF_ERROR(sound_->EncodeUntil(end, [&](AVPacket* p) { return WriteSound(p); }));
  }
  return encoder_.Send(frame, [&](AVPacket* packet) { return muxer_.Write(packet, time_base, stream_); });
}

Status AvOutput::Finish() {
  PR_RETURN_IF_ERROR(Send(nullptr));
  if (sound_) PR_RETURN_IF_ERROR(sound_->Finish([&](AVPacket* p) { return WriteSound(p); }));
  return muxer_.Finish();
}

}  // namespace pagereel::encode
