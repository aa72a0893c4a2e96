#include "encode/encoder.h"

#include "encode/av_util.h"
#include "encode/gif_encoder.h"
#include "encode/stream.h"

#include <spng.h>
#include <turbojpeg.h>

extern "C" {
#include <libavcodec/avcodec.h>
}
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <vector>

namespace pagereel::encode {

namespace fs = std::filesystem;

namespace {

const char kFormatsHelp[] =
    "use .mp4 (H.264), .mov (ProRes), .webm (VP9), .mkv (FFV1, lossless), .gif, or an image "
    "sequence pattern such as "
    "frames/%05d.png or frames/%05d.jpg";

std::string LibraryVersions() {
  const unsigned v = avcodec_version();
  return "libavcodec " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 255) + "." +
         std::to_string(v & 255);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Status CheckFolder(const fs::path& file) {
  fs::path folder = file.parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!fs::exists(folder, ec)) {
    return InvalidArgumentError("output folder '" + folder.string() +
                                "' does not exist; create it first (mkdir -p " + folder.string() +
                                ")");
  }
  if (!fs::is_directory(folder, ec)) {
    return InvalidArgumentError("'" + folder.string() + "' is not a folder");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    return ErrnoError("cannot write to output folder '" + folder.string() + "'", errno);
  }
  return Status::Ok();
}

// The frame-number field of a sequence pattern: %d, %5d or %05d (two digits of width at
// most), with the zero flag and the width captured.
const std::regex& FrameNumberField() {
  static const std::regex field("%(0?)([0-9]{0,2})d");
  return field;
}

// A film: one VideoStream into a file that appears only when complete, frames numbered in
// the order they come.
class VideoEncoder final : public Encoder {
 public:
  Status Init(const EncoderOptions& options, OutputKind kind) {
    StreamSpec spec;
    spec.sink = Sink{Sink::Kind::kFile, options.path, nullptr};
    spec.width = options.width;
    spec.height = options.height;
    spec.fps = options.fps;
    spec.alpha = options.alpha;
    spec.quality = options.quality;
    spec.preset = options.preset;
    if (kind == OutputKind::kMov) {
      spec.container = Container::kMov;
      spec.codec = Codec::kProRes;
    } else if (kind == OutputKind::kWebm) {
      spec.container = Container::kWebm;
      spec.codec = Codec::kVp9;
    } else if (kind == OutputKind::kMkv) {
      spec.container = Container::kMatroska;
      spec.codec = Codec::kFfv1;
    } else {
      spec.container = Container::kMp4;
      spec.codec = Codec::kH264;
    }
    PR_ASSIGN_OR_RETURN(stream_, VideoStream::Open(spec));
    return Status::Ok();
  }

  std::unique_ptr<Converter> NewConverter() const override { return stream_->NewConverter(); }

  Status WritePrepared(std::unique_ptr<PreparedFrame> prepared) override {
    return stream_->Write(std::move(prepared), next_pts_++);
  }

  Status Finish() override { return stream_->Finish(); }

  std::string final_path() const override { return stream_->target(); }

 private:
  std::unique_ptr<VideoStream> stream_;
  int64_t next_pts_ = 0;
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
  SequenceConverter(OutputKind kind, int quality) : kind_(kind), quality_(quality) {}

  Result<std::unique_ptr<PreparedFrame>> Convert(const RgbaView& view) override {
    auto out = std::make_unique<ImageBytes>();
    PR_RETURN_IF_ERROR(kind_ == OutputKind::kPngSequence ? EncodePng(view, &out->bytes)
                                                         : EncodeJpeg(view, quality_, &out->bytes));
    return std::unique_ptr<PreparedFrame>(std::move(out));
  }

 private:
  const OutputKind kind_;
  const int quality_;
};

// The files of the sequence `pattern` names (a %05d-style field), by frame number.
class SequenceNames {
 public:
  explicit SequenceNames(const std::string& pattern) {
    // InspectOutputPath checked there is exactly one %[0][width]d field.
    std::smatch m;
    std::regex_search(pattern, m, FrameNumberField());
    prefix_ = m.prefix();
    suffix_ = m.suffix();
    zero_pad_ = m[1].length() > 0;
    pad_width_ = m[2].length() > 0 ? std::stoi(m[2]) : 0;
  }

  fs::path Name(int64_t index) const {
    std::string number = std::to_string(index);
    if (static_cast<int>(number.size()) < pad_width_) {
      number.insert(0, static_cast<size_t>(pad_width_) - number.size(), zero_pad_ ? '0' : ' ');
    }
    return prefix_ + number + suffix_;
  }

  fs::path Folder() const {
    fs::path folder = fs::path(prefix_ + "0" + suffix_).parent_path();
    return folder.empty() ? fs::path(".") : folder;
  }

  // The frame number `file` (a name in Folder()) stands for, if it is one of ours.
  std::optional<int64_t> IndexOf(const std::string& file) const {
    std::string head = fs::path(prefix_ + "0").filename().string();
    head.pop_back();
    if (file.size() <= head.size() + suffix_.size() || file.rfind(head, 0) != 0 ||
        file.compare(file.size() - suffix_.size(), suffix_.size(), suffix_) != 0) {
      return std::nullopt;
    }
    std::string digits = file.substr(head.size(), file.size() - head.size() - suffix_.size());
    size_t first = digits.find_first_not_of(' ');
    if (first == std::string::npos || digits.size() > 18) return std::nullopt;
    digits = digits.substr(first);
    if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoll(digits);
  }

  std::vector<fs::path> Existing() const {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(Folder(), ec)) {
      if (IndexOf(entry.path().filename().string())) found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  std::string prefix_;
  std::string suffix_;
  bool zero_pad_ = false;
  int pad_width_ = 0;
};

// Frame n goes to pattern % n. Frames are written under hidden partial names and renamed
// into place together by Finish(), which also removes the files of an earlier sequence
// numbered beyond this one, so the folder holds one whole sequence or the one it held
// before. Abandoned, it removes every partial file it wrote.
class SequenceEncoder final : public Encoder {
 public:
  SequenceEncoder(std::string pattern, OutputKind kind, int quality)
      : pattern_(std::move(pattern)), names_(pattern_), kind_(kind), quality_(quality) {}

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

  std::string final_path() const override { return pattern_; }

 private:
  const std::string pattern_;
  const SequenceNames names_;
  const OutputKind kind_;
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

std::vector<std::string> ExistingSequenceFiles(const std::string& pattern) {
  std::vector<std::string> out;
  for (const fs::path& p : SequenceNames(pattern).Existing()) out.push_back(p.string());
  return out;
}

Result<OutputSpec> InspectOutputPath(const std::string& path, bool alpha) {
  if (path.empty()) return InvalidArgumentError("no output given; " + std::string(kFormatsHelp));
  fs::path p = path;
  std::string ext = Lower(p.extension().string());
  OutputSpec spec{};
  bool is_pattern = path.find('%') != std::string::npos;
  if (is_pattern) {
    std::string name = p.filename().string();
    auto fields = std::distance(std::sregex_iterator(name.begin(), name.end(), FrameNumberField()),
                                std::sregex_iterator());
    size_t percents = static_cast<size_t>(std::count(path.begin(), path.end(), '%'));
    if (fields != 1 || percents != 1) {
      return InvalidArgumentError("image sequence pattern '" + path +
                                  "' needs exactly one frame-number field such as %05d (at most "
                                  "two digits of width) in its file name, e.g. frames/%05d.png");
    }
    if (ext == ".png") {
      spec = {OutputKind::kPngSequence, true};
    } else if (ext == ".jpg" || ext == ".jpeg") {
      spec = {OutputKind::kJpegSequence, false};
    } else {
      return InvalidArgumentError("image sequences are .png or .jpg, not '" + path + "'");
    }
  } else if (ext == ".mp4") {
    spec = {OutputKind::kMp4, false};
  } else if (ext == ".mov") {
    spec = {OutputKind::kMov, true};
  } else if (ext == ".webm") {
    spec = {OutputKind::kWebm, true};
  } else if (ext == ".gif") {
    spec = {OutputKind::kGif, false};
  } else if (ext == ".mkv") {
    spec = {OutputKind::kMkv, true};
  } else {
    return InvalidArgumentError("don't know how to write '" + path + "': " + kFormatsHelp);
  }
  if (alpha && !spec.carries_alpha) {
    return InvalidArgumentError("--alpha needs an output that can carry an alpha channel: .mov "
                                "(ProRes 4444), .webm (VP9) or a .png sequence; '" +
                                path + "' cannot");
  }
  PR_RETURN_IF_ERROR(CheckFolder(p));
  return spec;
}

std::string DescribeEncoder(const EncoderOptions& options) {
  Result<OutputSpec> spec = InspectOutputPath(options.path, options.alpha);
  std::string what = "unknown";
  if (spec.ok()) {
    switch (spec->kind) {
      case OutputKind::kMp4:
        what = "H.264 (libx264 " + (options.preset.empty() ? std::string("veryfast") : options.preset) + ")";
        break;
      case OutputKind::kMov: what = options.alpha ? "ProRes 4444" : "ProRes 422 HQ"; break;
      case OutputKind::kWebm: what = "VP9"; break;
      case OutputKind::kMkv: what = "FFV1"; break;
      case OutputKind::kGif: what = "GIF"; break;
      case OutputKind::kPngSequence: what = "PNG"; break;
      case OutputKind::kJpegSequence: what = "JPEG"; break;
    }
  }
  return what + ", quality " + std::to_string(options.quality) + (options.alpha ? ", alpha" : "") +
         ", " + LibraryVersions();
}

Status Encoder::Write(const RgbaView& frame) {
  if (!own_converter_) own_converter_ = NewConverter();
  PR_ASSIGN_OR_RETURN(std::unique_ptr<PreparedFrame> prepared, own_converter_->Convert(frame));
  return WritePrepared(std::move(prepared));
}

Result<std::unique_ptr<Encoder>> Encoder::Open(const EncoderOptions& options) {
  QuietenLibav();
  PR_ASSIGN_OR_RETURN(OutputSpec spec, InspectOutputPath(options.path, options.alpha));
  if (spec.kind == OutputKind::kPngSequence || spec.kind == OutputKind::kJpegSequence) {
    SequenceNames names(options.path);
    RemoveStalePartials(names.Folder(), [&](const std::string& name) {
      return names.IndexOf(name).has_value();
    });
  } else {
    fs::path target = options.path;
    fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    RemoveStalePartials(folder, [&](const std::string& name) {
      return name == target.filename().string();
    });
  }
  switch (spec.kind) {
    case OutputKind::kPngSequence:
    case OutputKind::kJpegSequence:
      return std::unique_ptr<Encoder>(new SequenceEncoder(options.path, spec.kind, options.quality));
    case OutputKind::kGif:
      return OpenGifEncoder(options);
    case OutputKind::kMp4:
    case OutputKind::kMov:
    case OutputKind::kWebm:
    case OutputKind::kMkv: {
      auto encoder = std::make_unique<VideoEncoder>();
      PR_RETURN_IF_ERROR(encoder->Init(options, spec.kind));
      return std::unique_ptr<Encoder>(std::move(encoder));
    }
  }
  return InternalError("unhandled output kind");
}

}  // namespace pagereel::encode
