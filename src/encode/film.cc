#include "encode/film.h"

extern "C" {
#include <libavcodec/avcodec.h>
}
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "encode/sequence.h"

namespace pagereel::encode {

namespace fs = std::filesystem;

namespace {

const char kFormatsHelp[] =
    "use .mp4 (H.264), .mov (ProRes), .webm (VP9), .mkv (FFV1, lossless), .gif, or an image "
    "sequence pattern such as "
    "frames/%05d.png or frames/%05d.jpg";

struct KindNames {
  FilmKind kind;
  std::string_view name;
  std::string_view extension;
};
constexpr KindNames kKinds[] = {
    {FilmKind::kMp4, "h264-mp4", "mp4"},
    {FilmKind::kMov, "prores-mov", "mov"},
    {FilmKind::kWebm, "vp9-webm", "webm"},
    {FilmKind::kMkv, "ffv1-mkv", "mkv"},
    {FilmKind::kGif, "gif", "gif"},
    {FilmKind::kPngSequence, "png-sequence", "png"},
    {FilmKind::kJpegSequence, "jpeg-sequence", "jpg"},
};

const KindNames& NamesOf(FilmKind kind) {
  for (const KindNames& k : kKinds) {
    if (k.kind == kind) return k;
  }
  return kKinds[0];  // Unreachable: every kind is listed.
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

std::string LibraryVersions() {
  const unsigned v = avcodec_version();
  return "libavcodec " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 255) + "." +
         std::to_string(v & 255);
}

}  // namespace

std::string_view FilmKindName(FilmKind kind) { return NamesOf(kind).name; }

std::optional<FilmKind> FilmKindNamed(std::string_view name) {
  for (const KindNames& k : kKinds) {
    if (k.name == name) return k.kind;
  }
  return std::nullopt;
}

std::string_view FileExtension(FilmKind kind) { return NamesOf(kind).extension; }

bool IsSequence(FilmKind kind) {
  return kind == FilmKind::kPngSequence || kind == FilmKind::kJpegSequence;
}

bool CanCarryAlpha(FilmKind kind) {
  switch (kind) {
    case FilmKind::kMov:
    case FilmKind::kWebm:
    case FilmKind::kMkv:
    case FilmKind::kPngSequence:
      return true;
    case FilmKind::kMp4:
    case FilmKind::kGif:
    case FilmKind::kJpegSequence:
      return false;
  }
  return false;
}

Status CheckFilmSize(FilmKind kind, int width, int height) {
  if (kind != FilmKind::kMp4 && kind != FilmKind::kWebm) return Status::Ok();
  if (width % 2 == 0 && height % 2 == 0) return Status::Ok();
  const std::string codec = kind == FilmKind::kMp4 ? "H.264" : "VP9";
  return InvalidArgumentError(
      "a ." + std::string(FileExtension(kind)) + " film (" + codec +
      ", colour at half resolution) needs an even width and height, not " +
      std::to_string(width) + "x" + std::to_string(height) + ": make it " +
      std::to_string(width + width % 2) + "x" + std::to_string(height + height % 2) +
      ", or write a .mov, .mkv, .gif or image sequence, which take any size");
}

FilmKind SegmentKind(FilmKind film) { return film == FilmKind::kGif ? FilmKind::kMkv : film; }

Result<FilmKind> FilmKindForPath(const std::string& path, bool alpha) {
  if (path.empty()) return InvalidArgumentError("no output given; " + std::string(kFormatsHelp));
  fs::path p = path;
  const std::string ext = Lower(p.extension().string());
  FilmKind kind = FilmKind::kMp4;
  if (path.find('%') != std::string::npos) {
    const size_t percents = static_cast<size_t>(std::count(path.begin(), path.end(), '%'));
    if (CountFrameNumberFields(p.filename().string()) != 1 || percents != 1) {
      return InvalidArgumentError("image sequence pattern '" + path +
                                  "' needs exactly one frame-number field such as %05d (at most "
                                  "two digits of width) in its file name, e.g. frames/%05d.png");
    }
    if (ext == ".png") {
      kind = FilmKind::kPngSequence;
    } else if (ext == ".jpg" || ext == ".jpeg") {
      kind = FilmKind::kJpegSequence;
    } else {
      return InvalidArgumentError("image sequences are .png or .jpg, not '" + path + "'");
    }
  } else if (ext == ".mp4") {
    kind = FilmKind::kMp4;
  } else if (ext == ".mov") {
    kind = FilmKind::kMov;
  } else if (ext == ".webm") {
    kind = FilmKind::kWebm;
  } else if (ext == ".gif") {
    kind = FilmKind::kGif;
  } else if (ext == ".mkv") {
    kind = FilmKind::kMkv;
  } else {
    return InvalidArgumentError("don't know how to write '" + path + "': " + kFormatsHelp);
  }
  if (alpha && !CanCarryAlpha(kind)) {
    return InvalidArgumentError("--alpha needs an output that can carry an alpha channel: .mov "
                                "(ProRes 4444), .webm (VP9) or a .png sequence; '" +
                                path + "' cannot");
  }
  PR_RETURN_IF_ERROR(CheckFolder(p));
  return kind;
}

ImageFormat ScreenshotFormatFor(const FilmSpec& film) {
  const bool lossy_video = film.kind == FilmKind::kMp4 || film.kind == FilmKind::kWebm;
  if (lossy_video && !film.alpha && film.quality < 100) return ImageFormat::kJpeg;
  return ImageFormat::kPng;
}

std::string DescribeFilm(const FilmSpec& film) {
  std::string what;
  switch (film.kind) {
    case FilmKind::kMp4:
      what = "H.264 (libx264 " + (film.preset.empty() ? std::string("veryfast") : film.preset) + ")";
      break;
    case FilmKind::kMov: what = film.alpha ? "ProRes 4444" : "ProRes 422 HQ"; break;
    case FilmKind::kWebm: what = "VP9"; break;
    case FilmKind::kMkv: what = "FFV1"; break;
    case FilmKind::kGif: what = "GIF"; break;
    case FilmKind::kPngSequence: what = "PNG"; break;
    case FilmKind::kJpegSequence: what = "JPEG"; break;
  }
  return what + ", quality " + std::to_string(film.quality) + (film.alpha ? ", alpha" : "") + ", " +
         LibraryVersions();
}

std::vector<std::string> ExistingSequenceFiles(const std::string& pattern) {
  std::vector<std::string> out;
  std::optional<SequencePattern> p = SequencePattern::Parse(pattern);
  if (!p) return out;
  for (const fs::path& file : p->Existing()) out.push_back(file.string());
  return out;
}

}  // namespace pagereel::encode
