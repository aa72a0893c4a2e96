// WorkDir: a film's finished segments and its manifest on disk, so a render can resume
// after a crash, a kill or a power cut, and shards on several machines can fill one folder.
//
// The folder holds film.json (what the film is: page, files, size, rate, encoder) and, per
// finished segment, its file and seg-NNNNNN.json (frame range, file size, SHA-256 of the
// file and of the screenshots it was made from), its sound timeline seg-NNNNNN.sound.json,
// and the media of the film's sounds in media/ (by SHA-256). Every file is written under a temporary
// name and renamed, and a segment's record is written only after its file is complete, so
// a record always describes a whole file; nothing is ever rewritten in place, so shards
// never race on a shared file.
//
// Thread-safe: the methods touch only the files they name.
#ifndef PAGEREEL_RENDER_WORK_DIR_H_
#define PAGEREEL_RENDER_WORK_DIR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "encode/film.h"

struct AVSHA;  // libavutil/sha.h

namespace pagereel::render {

// What makes two renders the same film. Two records that differ in any field make
// different segments.
struct FilmRecord {
  std::string url;
  std::string page_files;  // SHA-256 over the page's local files (HashLocalFiles).
  int width = 0;
  int height = 0;
  Rational fps{30, 1};
  int64_t frames = 0;
  int64_t segment_frames = 0;
  bool alpha = false;
  int quality = 0;
  encode::FilmKind kind = encode::FilmKind::kMp4;
  std::string encoder;      // Codec and its settings, as encode describes them.
  std::string timezone;
  std::string locale;
  std::string browser;      // The browser's product and version.
  std::string fonts;        // HashFontFiles() of the machine that made it.
};

struct SegmentRecord {
  int64_t index = 0;
  int64_t first_frame = 0;
  int64_t frame_count = 0;
  std::string file;           // Name inside the folder.
  int64_t bytes = 0;          // Files of a sequence segment summed.
  std::string file_sha256;    // Of the file (a sequence segment: of its files in order).
  std::string frames_sha256;  // Of the browser's screenshots, in order.
  std::string reached_by;     // "start", "run" (exact pre-roll), "jump" or "continued".
};

// "what: was A, now B" for each field that differs.
std::vector<std::string> DescribeChanges(const FilmRecord& was, const FilmRecord& now);

// SHA-256 over the files behind the file:// URLs in `urls` (names and contents, in URL
// order); other URLs count by name only. A file that cannot be read counts as missing.
std::string HashLocalFiles(const std::vector<std::string>& urls);

// SHA-256 over the names and sizes of the font files Chromium can find on this machine
// (/usr/share/fonts, /usr/local/share/fonts, ~/.fonts, ~/.local/share/fonts): two machines
// with other fonts draw other glyphs, so their segments must not be joined.
std::string HashFontFiles();

// SHA-256 of a file, or of the files in a folder (names and contents, sorted by name).
Result<std::string> HashPath(const std::string& path);

// Incremental SHA-256 (FFmpeg's).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* data, size_t size);
  std::string Hex();  // Ends the hash.

 private:
  ::AVSHA* ctx_;
};

enum class OnChange { kRefuse, kStartOver };

class WorkDir {
 public:
  // Creates `path` (and film.json) or opens it. A folder made for another film is refused
  // with the changes named (kInvalidArgument), unless `on_change` is kStartOver, which
  // empties it first.
  static Result<WorkDir> Open(const std::string& path, const FilmRecord& film, OnChange on_change);

  // Reads an existing folder for joining; kNotFound-like errors name what is missing.
  static Result<WorkDir> OpenForJoin(const std::string& path);

  const std::string& path() const { return path_; }
  const FilmRecord& film() const { return film_; }

  // Where segment `index`'s file goes: seg-NNNNNN.EXT, the extension of the segments' kind
  // (encode::SegmentKind); for sequences the folder seg-NNNNNN.
  std::string SegmentPath(int64_t index) const;
  std::string SegmentFileName(int64_t index) const;
  // What the segment's writer is given: SegmentPath, or for sequences the pattern of the
  // frames in its folder (seg-NNNNNN/%06d.png).
  std::string SegmentTarget(int64_t index) const;

  // The segments recorded as finished whose files are still whole (size and, if
  // `verify_contents`, SHA-256 checked); a record whose file is gone or changed is dropped
  // with a note in `problems`.
  std::vector<SegmentRecord> Finished(bool verify_contents, std::vector<std::string>* problems) const;

  Status Record(const SegmentRecord& segment) const;

  // A segment's sound timeline (audio/timeline.h, JSON), seg-NNNNNN.sound.json, written
  // before its record so a record always has its timeline; and the folder of the media its
  // sounds play (an audio::MediaStore, shared by every segment and shard).
  std::string SoundPath(int64_t index) const;
  Status RecordSound(int64_t index, const std::string& timeline_json) const;
  std::string MediaPath() const;

  // Removes the segments and records, and the folder if nothing else is in it.
  Status Remove() const;

 private:
  WorkDir(std::string path, FilmRecord film) : path_(std::move(path)), film_(std::move(film)) {}

  std::string path_;
  FilmRecord film_;
};

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_WORK_DIR_H_
