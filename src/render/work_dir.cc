#include "render/work_dir.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/percent_encoding.h"

extern "C" {
#include <libavutil/mem.h>
#include <libavutil/sha.h>
}

namespace pagereel::render {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// 2: the film's kind is stored by its name (encode::FilmKindName), not an extension.
constexpr int kManifestVersion = 2;
constexpr char kFilmFile[] = "film.json";
constexpr char kMediaFolder[] = "media";  // audio::MediaStore's.
constexpr char kSoundSuffix[] = ".sound.json";

json ToJson(const FilmRecord& f) {
  return {{"version", kManifestVersion},
          {"url", f.url},
          {"page_files", f.page_files},
          {"width", f.width},
          {"height", f.height},
          {"fps", f.fps.ToString()},
          {"frames", f.frames},
          {"segment_frames", f.segment_frames},
          {"alpha", f.alpha},
          {"quality", f.quality},
          {"kind", encode::FilmKindName(f.kind)},
          {"encoder", f.encoder},
          {"timezone", f.timezone},
          {"locale", f.locale},
          {"browser", f.browser},
          {"fonts", f.fonts}};
}

Result<FilmRecord> FilmFromJson(const json& j) {
  if (!j.is_object() || j.value("version", 0) != kManifestVersion) {
    return FailedPreconditionError("was made by another version of pagereel");
  }
  FilmRecord f;
  f.url = j.value("url", "");
  f.page_files = j.value("page_files", "");
  f.width = j.value("width", 0);
  f.height = j.value("height", 0);
  Result<Rational> fps = ParseFrameRate(j.value("fps", ""));
  if (!fps.ok()) return FailedPreconditionError("has a bad frame rate");
  f.fps = *fps;
  f.frames = j.value("frames", int64_t{0});
  f.segment_frames = j.value("segment_frames", int64_t{0});
  f.alpha = j.value("alpha", false);
  f.quality = j.value("quality", 0);
  std::optional<encode::FilmKind> kind = encode::FilmKindNamed(j.value("kind", ""));
  if (!kind) return FailedPreconditionError("names no kind of film pagereel makes");
  f.kind = *kind;
  f.encoder = j.value("encoder", "");
  f.timezone = j.value("timezone", "");
  f.locale = j.value("locale", "");
  f.browser = j.value("browser", "");
  f.fonts = j.value("fonts", "");
  if (f.frames <= 0 || f.segment_frames <= 0 || f.width <= 0 || f.height <= 0) {
    return FailedPreconditionError("is incomplete");
  }
  return f;
}

json ToJson(const SegmentRecord& s) {
  return {{"index", s.index},           {"first_frame", s.first_frame},
          {"frame_count", s.frame_count}, {"file", s.file},
          {"bytes", s.bytes},           {"file_sha256", s.file_sha256},
          {"frames_sha256", s.frames_sha256}, {"reached_by", s.reached_by}};
}

std::optional<SegmentRecord> SegmentFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  SegmentRecord s;
  s.index = j.value("index", int64_t{-1});
  s.first_frame = j.value("first_frame", int64_t{-1});
  s.frame_count = j.value("frame_count", int64_t{0});
  s.file = j.value("file", "");
  s.bytes = j.value("bytes", int64_t{-1});
  s.file_sha256 = j.value("file_sha256", "");
  s.frames_sha256 = j.value("frames_sha256", "");
  s.reached_by = j.value("reached_by", "");
  if (s.index < 0 || s.first_frame < 0 || s.frame_count <= 0 || s.file.empty()) return std::nullopt;
  return s;
}

Result<json> ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("cannot read " + path.string());
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return FailedPreconditionError(path.string() + " is not valid JSON");
  return j;
}

// Writes `text` to `path` through a temporary file in the same folder, synced, then renamed:
// a reader sees the old file or the new one, never a part.
Status WriteAtomically(const fs::path& path, const std::string& text) {
  fs::path tmp = path.parent_path() / (".tmp-" + std::to_string(::getpid()) + "-" +
                                       path.filename().string());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return InternalError("cannot write " + tmp.string());
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  std::error_code ec;
  if (ok) fs::rename(tmp, path, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    return InternalError("cannot write " + path.string() + " (is the disk full?)");
  }
  return Status::Ok();
}

bool HashFileInto(const fs::path& path, Sha256& sha) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    sha.Update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  return !in.bad();
}

// Removes what renders put in a work folder, and nothing else: --work-dir may name a folder
// that holds other things.
void RemoveOurFiles(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> ours;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("seg-", 0) == 0 || name.rfind(".seg-", 0) == 0 ||
        name.rfind(".tmp-", 0) == 0 || name == kFilmFile || name == kMediaFolder) {
      ours.push_back(e.path());
    }
  }
  for (const fs::path& p : ours) fs::remove_all(p, ec);
}

}  // namespace

Sha256::Sha256() : ctx_(av_sha_alloc()) { av_sha_init(ctx_, 256); }
Sha256::~Sha256() { av_free(ctx_); }

void Sha256::Update(const void* data, size_t size) {
  av_sha_update(ctx_, static_cast<const uint8_t*>(data), size);
}

std::string Sha256::Hex() {
  uint8_t digest[32];
  av_sha_final(ctx_, digest);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::vector<std::string> DescribeChanges(const FilmRecord& was, const FilmRecord& now) {
  std::vector<std::string> out;
  json a = ToJson(was);
  json b = ToJson(now);
  for (const auto& [key, value] : b.items()) {
    if (a[key] == value) continue;
    if (key == "page_files") {
      out.push_back("the page's files changed");
    } else if (key == "fonts") {
      out.push_back("this machine's fonts differ from those of the machine that began the film "
                    "(every machine must have the same font packages)");
    } else if (key == "browser") {
      out.push_back("browser: was " + a[key].dump() + ", now " + value.dump() +
                    " (every machine must run the same browser build)");
    } else {
      out.push_back(key + ": was " + a[key].dump() + ", now " + value.dump());
    }
  }
  return out;
}

std::string HashLocalFiles(const std::vector<std::string>& urls) {
  std::vector<std::string> sorted = urls;
  std::sort(sorted.begin(), sorted.end());
  Sha256 sha;
  for (const std::string& url : sorted) {
    sha.Update(url.data(), url.size() + 1);  // With its NUL, so names cannot run together.
    if (!url.starts_with("file://")) continue;
    std::optional<std::string> path = PathOfFileUrl(url);
    std::error_code ec;
    if (!path || !fs::is_regular_file(*path, ec) || !HashFileInto(*path, sha)) {
      sha.Update("missing", 7);
    }
  }
  return sha.Hex();
}

std::string HashFontFiles() {
  std::vector<std::pair<std::string, uintmax_t>> files;
  std::vector<fs::path> roots = {"/usr/share/fonts", "/usr/local/share/fonts"};
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    roots.push_back(fs::path(home) / ".fonts");
    roots.push_back(fs::path(home) / ".local/share/fonts");
  }
  for (const fs::path& root : roots) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::string ext = it->path().extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
      if (ext != ".ttf" && ext != ".otf" && ext != ".ttc" && ext != ".pfb" && ext != ".woff" &&
          ext != ".woff2" && ext != ".pcf" && ext != ".gz") {
        continue;
      }
      files.emplace_back(it->path().filename().string(), it->file_size(ec));
    }
  }
  std::sort(files.begin(), files.end());
  Sha256 sha;
  for (const auto& [name, size] : files) {
    std::string line = name + " " + std::to_string(size) + "\n";
    sha.Update(line.data(), line.size());
  }
  return sha.Hex();
}

Result<std::string> HashPath(const std::string& path) {
  Sha256 sha;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::string name = f.filename().string();
      sha.Update(name.data(), name.size() + 1);
      if (!HashFileInto(f, sha)) return NotFoundError("cannot read " + f.string());
    }
  } else if (!HashFileInto(path, sha)) {
    return NotFoundError("cannot read " + path);
  }
  return sha.Hex();
}

Result<WorkDir> WorkDir::Open(const std::string& path, const FilmRecord& film,
                              OnChange on_change) {
  std::error_code ec;
  fs::path dir(path);
  fs::path manifest = dir / kFilmFile;
  if (fs::exists(manifest, ec)) {
    Result<json> j = ReadJson(manifest);
    Result<FilmRecord> was = j.ok() ? FilmFromJson(*j) : Result<FilmRecord>(j.status());
    std::vector<std::string> changes;
    if (!was.ok()) {
      changes.push_back(std::string(kFilmFile) + " " + std::string(was.status().message()));
    } else {
      changes = DescribeChanges(*was, film);
    }
    if (changes.empty()) return WorkDir(path, film);
    if (on_change == OnChange::kRefuse) {
      std::string list;
      for (const std::string& c : changes) list += (list.empty() ? "" : "; ") + c;
      // Bad input (exit 2): the command asks for another film than the folder holds.
      return InvalidArgumentError(
          "the work folder " + path + " holds segments of a different film (" + list +
          "); give --restart to discard them and start over, or another --work-dir");
    }
    RemoveOurFiles(dir);
  }
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return InvalidArgumentError("cannot create the work folder " + path + ": " +
                                (ec ? ec.message() : "not a folder"));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return InvalidArgumentError("the work folder " + path + " is not writable");
  }
  PR_RETURN_IF_ERROR(WriteAtomically(manifest, ToJson(film).dump(1) + "\n"));
  return WorkDir(path, film);
}

Result<WorkDir> WorkDir::OpenForJoin(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return InvalidArgumentError("'" + path + "' is not a folder of segments");
  }
  fs::path manifest = fs::path(path) / kFilmFile;
  if (!fs::exists(manifest, ec)) {
    return InvalidArgumentError("'" + path + "' has no " + kFilmFile +
                                ": it is not a pagereel work folder (made by render --work-dir)");
  }
  PR_ASSIGN_OR_RETURN(json j, ReadJson(manifest));
  Result<FilmRecord> film = FilmFromJson(j);
  if (!film.ok()) {
    return FailedPreconditionError(manifest.string() + " " + std::string(film.status().message()));
  }
  return WorkDir(path, *film);
}

std::string WorkDir::SegmentFileName(int64_t index) const {
  char name[32];
  std::snprintf(name, sizeof name, "seg-%06lld", static_cast<long long>(index));
  const encode::FilmKind kind = encode::SegmentKind(film_.kind);
  if (encode::IsSequence(kind)) return name;  // A folder of frames.
  return std::string(name) + "." + std::string(encode::FileExtension(kind));
}

std::string WorkDir::SegmentTarget(int64_t index) const {
  const encode::FilmKind kind = encode::SegmentKind(film_.kind);
  if (!encode::IsSequence(kind)) return SegmentPath(index);
  return SegmentPath(index) + "/%06d." + std::string(encode::FileExtension(kind));
}

std::string WorkDir::SegmentPath(int64_t index) const {
  return (fs::path(path_) / SegmentFileName(index)).string();
}

std::vector<SegmentRecord> WorkDir::Finished(bool verify_contents,
                                             std::vector<std::string>* problems) const {
  std::vector<SegmentRecord> out;
  std::error_code ec;
  std::vector<fs::path> records;
  for (const fs::directory_entry& e : fs::directory_iterator(path_, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("seg-", 0) == 0 && e.path().extension() == ".json" &&
        !name.ends_with(kSoundSuffix)) {
      records.push_back(e.path());
    }
  }
  std::sort(records.begin(), records.end());
  for (const fs::path& r : records) {
    Result<json> j = ReadJson(r);
    std::optional<SegmentRecord> s = j.ok() ? SegmentFromJson(*j) : std::nullopt;
    auto problem = [&](const std::string& what) {
      if (problems != nullptr) problems->push_back(r.filename().string() + ": " + what);
    };
    if (!s) {
      problem("unreadable; the segment will be made again");
      continue;
    }
    fs::path file = fs::path(path_) / s->file;
    int64_t bytes = 0;
    if (fs::is_directory(file, ec)) {
      for (const fs::directory_entry& e : fs::directory_iterator(file, ec)) {
        bytes += static_cast<int64_t>(e.file_size(ec));
      }
    } else if (fs::is_regular_file(file, ec)) {
      bytes = static_cast<int64_t>(fs::file_size(file, ec));
    } else {
      problem(s->file + " is missing; the segment will be made again");
      continue;
    }
    if (bytes != s->bytes) {
      problem(s->file + " has " + std::to_string(bytes) + " bytes, not the " +
              std::to_string(s->bytes) + " recorded; the segment will be made again");
      continue;
    }
    if (verify_contents) {
      Result<std::string> sha = HashPath(file.string());
      if (!sha.ok() || *sha != s->file_sha256) {
        problem(s->file + " changed since it was written; the segment will be made again");
        continue;
      }
    }
    out.push_back(*s);
  }
  return out;
}

Status WorkDir::Record(const SegmentRecord& segment) const {
  std::string name = SegmentFileName(segment.index);
  if (size_t dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  return WriteAtomically(fs::path(path_) / (name + ".json"), ToJson(segment).dump(1) + "\n");
}

std::string WorkDir::MediaPath() const { return (fs::path(path_) / kMediaFolder).string(); }

std::string WorkDir::SoundPath(int64_t index) const {
  char name[32];
  std::snprintf(name, sizeof name, "seg-%06lld", static_cast<long long>(index));
  return (fs::path(path_) / (name + std::string(kSoundSuffix))).string();
}

Status WorkDir::RecordSound(int64_t index, const std::string& timeline_json) const {
  return WriteAtomically(SoundPath(index), timeline_json);
}

Status WorkDir::Remove() const {
  RemoveOurFiles(path_);
  std::error_code ec;
  fs::remove(path_, ec);  // Only if nothing else is left in it.
  if (fs::exists(fs::path(path_) / kFilmFile, ec)) {
    return InternalError("cannot remove the work folder " + path_);
  }
  return Status::Ok();
}

}  // namespace pagereel::render
