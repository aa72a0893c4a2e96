#include "encode/encoder.h"

#include "encode/av_util.h"
#include "encode/gif_encoder.h"
#include "encode/sequence.h"
#include "encode/stream.h"

#include <spng.h>
#include <turbojpeg.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <span>
#include <vector>

namespace pagereel::encode {

namespace fs = std::filesystem;

namespace {

// A film: one VideoStream into a file that appears only when complete, or into memory,
// frames numbered in the order they come.
class VideoEncoder final : public Encoder {
 public:
  Status Init(const FilmWriterOptions& options) {
    const FilmSpec& film = options.film;
    StreamSpec spec;
    if (options.to == WriteTo::kMemory) {
      spec.sink = Sink{Sink::Kind::kMemoryFile, "the film in memory",
                       [this](std::span<const uint8_t> bytes) {
                         bytes_.assign(bytes.begin(), bytes.end());
                         return Status::Ok();
                       }};
    } else {
      spec.sink = Sink{Sink::Kind::kFile, options.path, nullptr};
    }
    spec.width = film.width;
    spec.height = film.height;
    spec.fps = film.fps;
    spec.alpha = film.alpha;
    spec.quality = film.quality;
    spec.preset = film.preset;
    if (options.sound != nullptr) {
      spec.sound = options.sound;
      PR_ASSIGN_OR_RETURN(spec.sound_codec, ChooseSoundCodec(film.kind, options.sound_codec));
    }
    switch (film.kind) {
      case FilmKind::kMov:
        spec.container = Container::kMov;
        spec.codec = Codec::kProRes;
        break;
      case FilmKind::kWebm:
        spec.container = Container::kWebm;
        spec.codec = Codec::kVp9;
        break;
      case FilmKind::kMkv:
        spec.container = Container::kMatroska;
        spec.codec = Codec::kFfv1;
        break;
      default:
        spec.container = Container::kMp4;
        spec.codec = Codec::kH264;
        break;
    }
    PR_ASSIGN_OR_RETURN(stream_, VideoStream::Open(spec));
    return Status::Ok();
  }

  std::unique_ptr<Converter> NewConverter() const override { return stream_->NewConverter(); }

  Status WritePrepared(std::unique_ptr<PreparedFrame> prepared) override {
    return stream_->Write(std::move(prepared), next_pts_++);
  }

  Status Finish() override { return stream_->Finish(); }

  const std::string& final_path() const override { return stream_->target(); }
  std::string TakeBytes() override { return std::move(bytes_); }

 private:
  std::unique_ptr<VideoStream> stream_;
  int64_t next_pts_ = 0;
  std::string bytes_;  // kMemoryFile: the finished film.
};

Status EncodePng(const RgbaView& view, std::vector<uint8_t>* out) {
  std::unique_ptr<spng_ctx, void (*)(spng_ctx*)> ctx(spng_ctx_new(SPNG_CTX_ENCODER),
                                                     spng_ctx_free);
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  // Fast zlib level: sequences are intermediate files, speed matters more than size.
  spng_set_option(ctx.get(), SPNG_IMG_COMPRESSION_LEVEL, 1);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(view.width);
  ihdr.height = static_cast<uint32_t>(view.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  spng_set_ihdr(ctx.get(), &ihdr);
  std::vector<uint8_t> packed;
  const uint8_t* data = view.data;
  size_t row = static_cast<size_t>(view.width) * 4;
  if (static_cast<size_t>(view.stride) != row) {
    packed = PackRgba(view.data, view.width, view.height, view.stride);
    data = packed.data();
  }
  int err = spng_encode_image(ctx.get(), data, row * view.height, SPNG_FMT_PNG,
                              SPNG_ENCODE_FINALIZE);
  if (err != 0) return InternalError(std::string("PNG encoding failed: ") + spng_strerror(err));
  size_t size = 0;
  void* buffer = spng_get_png_buffer(ctx.get(), &size, &err);
  if (buffer == nullptr) return InternalError(std::string("PNG encoding failed: ") + spng_strerror(err));
  out->assign(static_cast<uint8_t*>(buffer), static_cast<uint8_t*>(buffer) + size);
  std::free(buffer);
  return Status::Ok();
}

Status EncodeJpeg(const RgbaView& view, int quality, std::vector<uint8_t>* out) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  int subsamp = quality >= 90 ? TJSAMP_444 : TJSAMP_420;
  if (tjCompress2(tj.get(), view.data, view.width, view.stride, view.height, TJPF_RGBA, &jpeg,
                  &size, subsamp, quality, TJFLAG_FASTDCT) != 0) {
    return InternalError(std::string("JPEG encoding failed: ") + tjGetErrorStr2(tj.get()));
  }
  out->assign(jpeg, jpeg + size);
  tjFree(jpeg);
  return Status::Ok();
}
// Compressed image bytes for one file of a sequence.
struct ImageBytes final : PreparedFrame {
  std::vector<uint8_t> bytes;
};

class SequenceConverter final : public Converter {
 public:
  SequenceConverter(FilmKind kind, int quality) : kind_(kind), quality_(quality) {}

  Result<std::unique_ptr<PreparedFrame>> Convert(const RgbaView& view) override {
    auto out = std::make_unique<ImageBytes>();
    PR_RETURN_IF_ERROR(kind_ == FilmKind::kPngSequence ? EncodePng(view, &out->bytes)
                                                         : EncodeJpeg(view, quality_, &out->bytes));
    return std::unique_ptr<PreparedFrame>(std::move(out));
  }

 private:
  const FilmKind kind_;
  const int quality_;
};

// Frame n goes to pattern % n. Frames are written under hidden partial names and renamed
// into place together by Finish(), which also removes the files of an earlier sequence
// numbered beyond this one, so the folder holds one whole sequence or the one it held
// before. Abandoned, it removes every partial file it wrote.
class SequenceEncoder final : public Encoder {
 public:
  SequenceEncoder(std::string pattern, SequencePattern names, FilmKind kind, int quality)
      : pattern_(std::move(pattern)), names_(std::move(names)), kind_(kind), quality_(quality) {}

  ~SequenceEncoder() override {
    std::error_code ec;
    for (const auto& f : partials_) fs::remove(f, ec);
  }

  std::unique_ptr<Converter> NewConverter() const override {
    return std::make_unique<SequenceConverter>(kind_, quality_);
  }

  Status WritePrepared(std::unique_ptr<PreparedFrame> prepared) override {
    auto* image = dynamic_cast<ImageBytes*>(prepared.get());
    if (image == nullptr) return InternalError("a frame prepared for another encoder");
    const std::vector<uint8_t>& bytes = image->bytes;
    fs::path partial = PartialPath(names_.Name(static_cast<int64_t>(partials_.size())));
    std::FILE* f = std::fopen(partial.c_str(), "wb");
    if (f == nullptr) return ErrnoError("creating " + partial.string(), errno);
    partials_.push_back(partial);
    errno = 0;
    size_t wrote = std::fwrite(bytes.data(), 1, bytes.size(), f);
    int write_errno = wrote != bytes.size() ? errno : 0;
    // A full disk often shows only when the buffered bytes are flushed, at fclose.
    if (std::fclose(f) != 0 && write_errno == 0) write_errno = errno;
    if (write_errno != 0 || wrote != bytes.size()) {
      return ErrnoError("writing " + partial.string(), write_errno != 0 ? write_errno : EIO);
    }
    return Status::Ok();
  }

  Status Finish() override {
    const int64_t frames = static_cast<int64_t>(partials_.size());
    for (int64_t i = 0; i < frames; ++i) {
      PR_RETURN_IF_ERROR(RenameIntoPlace(partials_[static_cast<size_t>(i)], names_.Name(i)));
    }
    partials_.clear();
    for (const fs::path& old : names_.Existing()) {
      std::optional<int64_t> index = names_.IndexOf(old.filename().string());
      std::error_code ec;
      if (index && *index >= frames) fs::remove(old, ec);
    }
    return Status::Ok();
  }

  const std::string& final_path() const override { return pattern_; }
  std::string TakeBytes() override { return std::string(); }

 private:
  const std::string pattern_;
  const SequencePattern names_;
  const FilmKind kind_;
  const int quality_;
  std::vector<fs::path> partials_;  // Frame n's file is partials_[n] until Finish().
};

// Partial files (PartialPath) in `target`'s folder left by pagereel processes that are
// gone (killed, or the machine stopped), for outputs that `ours` accepts by name.
void RemoveStalePartials(const fs::path& folder, const std::function<bool(const std::string&)>& ours) {
  static const std::regex partial(R"(^\.(.+)\.partial-([0-9]+)(\.[^.]*)?(\.frames)?$)");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, partial)) continue;
    if (!ours(m[1].str() + m[3].str())) continue;
    pid_t pid = static_cast<pid_t>(std::stoll(m[2].str().substr(0, 9)));
    // Alive (or someone else's and not ours to judge): leave it.
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    fs::remove(entry.path(), ec);
  }
}

}  // namespace

Result<std::unique_ptr<Encoder>> Encoder::Open(const FilmWriterOptions& options) {
  QuietenLibav();
  const FilmKind kind = options.film.kind;
  if (IsSequence(kind)) {
    std::optional<SequencePattern> names = SequencePattern::Parse(options.path);
    if (options.to != WriteTo::kPath || !names) {
      return InvalidArgumentError("an image sequence is written to files named by a pattern "
                                  "such as frames/%05d.png, not '" + options.path + "'");
    }
    RemoveStalePartials(names->Folder(), [&](const std::string& name) {
      return names->IndexOf(name).has_value();
    });
    return std::unique_ptr<Encoder>(
        new SequenceEncoder(options.path, *names, kind, options.film.quality));
  }
  if (options.to == WriteTo::kPath) {
    fs::path target = options.path;
    fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    RemoveStalePartials(folder, [&](const std::string& name) {
      return name == target.filename().string();
    });
  }
  if (kind == FilmKind::kGif) return OpenGifEncoder(options);
  auto encoder = std::make_unique<VideoEncoder>();
  PR_RETURN_IF_ERROR(encoder->Init(options));
  return std::unique_ptr<Encoder>(std::move(encoder));
}

}  // namespace pagereel::encode
