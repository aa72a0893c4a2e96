// FilmKind and FilmSpec: what a film is, as one value from the command line to the finished
// file. The output path's extension is read once, by FilmKindForPath; from there on the kind
// travels as this enum (render's work folder stores its name, FilmKindName), and whatever
// follows from it (a segment's kind, a file's extension) is derived here.
//
// Pure functions; any thread.
#ifndef PAGEREEL_ENCODE_FILM_H_
#define PAGEREEL_ENCODE_FILM_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "encode/image.h"

namespace pagereel::encode {

enum class FilmKind {
  kMp4,            // H.264 in MP4: yuv420p, BT.709, faststart.
  kMov,            // ProRes in QuickTime: 422 HQ, or 4444 with alpha.
  kWebm,           // VP9 in WebM; yuva420p with alpha.
  kMkv,            // FFV1 in Matroska: lossless (BGRA with alpha).
  kGif,            // One palette built from the whole film, dithered.
  kPngSequence,    // Frame n is file n of a pattern such as frames/%05d.png.
  kJpegSequence,   // The same with .jpg files.
};

// The kind's stable name ("h264-mp4", "prores-mov", "vp9-webm", "ffv1-mkv", "gif",
// "png-sequence", "jpeg-sequence"): what a work folder's film.json stores.
std::string_view FilmKindName(FilmKind kind);
std::optional<FilmKind> FilmKindNamed(std::string_view name);

// The extension of the kind's files, without the dot: "mp4", ..., "png", "jpg".
std::string_view FileExtension(FilmKind kind);

bool IsSequence(FilmKind kind);
bool CanCarryAlpha(FilmKind kind);

// The kind `path` asks for: .mp4, .mov, .webm, .mkv, .gif, or a pattern with one
// frame-number field (%d, %5d, %05d) ending in .png or .jpg. Checks that the folder exists
// and is writable and that `alpha` can be carried. Errors name the path and say what is
// accepted.
Result<FilmKind> FilmKindForPath(const std::string& path, bool alpha);

// Whether a film of `kind` can be `width` x `height` pixels. H.264 and VP9 films keep their
// colour at half resolution (yuv420p), so MP4 and WebM need an even width and height; the
// error (kInvalidArgument) names the size, the nearest even one and the kinds that take any.
Status CheckFilmSize(FilmKind kind, int width, int height);

// The kind of a film's segments (encode/concat.h): the film's own, except a GIF's, which
// are lossless FFV1 films joined through one palette built from every frame.
FilmKind SegmentKind(FilmKind film);

// What the writer makes of the pictures: everything that decides a segment's bytes except
// where it goes. A film's sound is not part of it: segments carry pictures only, and the
// join (or, for a film written in one piece, its writer) encodes the one sound track
// beside them (encode/sound.h, FilmWriterOptions::sound, JoinOptions::sound).
struct FilmSpec {
  FilmKind kind = FilmKind::kMp4;
  int width = 0;
  int height = 0;
  Rational fps{30, 1};
  bool alpha = false;
  // 1 (smallest) to 100 (best): CRF for H.264 and VP9, JPEG quality for sequences.
  int quality = 90;
  // H.264 only: x264's speed preset; empty: veryfast.
  std::string preset;
};

// The screenshots `film` needs from the browser. kPng, exact pixels, for every kind whose
// output should hold what the page drew: lossless FFV1, GIF (its palette is built from the
// frames), image sequences (a .jpg sequence is compressed once, by the encoder, not twice),
// ProRes (a mastering codec: --quality does not lower it), alpha, and H.264 or VP9 at
// quality 100. kJpeg, at the film's quality, for H.264 and VP9 below 100: there the codec
// loses far more than the JPEG does, and JPEG screenshots are quicker to take and decode
// (bench/RESULTS.md, "frame truth (issue 18)", says both by how much).
ImageFormat ScreenshotFormatFor(const FilmSpec& film);

// What a writer of `film` makes (codec, settings, libavcodec's version), for manifests that
// must tell whether two files were made alike.
std::string DescribeFilm(const FilmSpec& film);

// The files already in place for the sequence `pattern` (e.g. frames/%05d.png) names,
// sorted; empty for a film path or an empty folder.
std::vector<std::string> ExistingSequenceFiles(const std::string& pattern);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_FILM_H_
