// Joining a film rendered in segments: contiguous runs of frames, each written on its own
// by a fresh encoder (so each begins with a keyframe and closes its own GOPs), joined into
// the output without encoding the frames again.
//
// A segment is a film of SegmentKind(the film's kind) (encode/film.h), written by a
// FilmWriter of its own:
//   MP4, QuickTime,     a film of the same kind, H.264, ProRes, VP9 or FFV1; its packets are
//   WebM, Matroska      copied (stream copy), renumbered to film frames.
//   GIF                 a lossless film (FFV1 in Matroska) whose frames are decoded and written
//                       through one GIF FilmWriter, which builds one palette from the whole film.
//   PNG/JPEG sequence   a pattern such as seg-3/%06d.png in a folder of its own, numbered from 0
//                       within the segment; its files are hard-linked (copied across file
//                       systems) under the output's numbers.
// Segments are only read: removing them afterwards is the caller's business. The join is
// where a film's sound track is encoded, once for the whole film, and muxed beside its
// pictures (it is the one place that writes the whole film's container).
//
// Any thread; calls share nothing.
#ifndef PAGEREEL_ENCODE_CONCAT_H_
#define PAGEREEL_ENCODE_CONCAT_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "encode/film.h"
#include "encode/sound.h"

namespace pagereel::encode {

struct SegmentFile {
  std::string path;         // A film, or for sequences a pattern such as seg-3/%05d.png.
  int64_t first_frame = 0;  // The film frame its first frame is.
  int64_t frame_count = 0;  // The frames it must hold.
};

struct JoinOptions {
  FilmKind kind = FilmKind::kMp4;  // The film's kind; `output` must be a path of that kind.
  Rational fps{30, 1};  // The film's frame rate; segments of another rate are refused.
  // Polled between packets; set it (from a signal handler too) to abandon the join.
  const std::atomic<bool>* cancel = nullptr;
  // The film's sound (nullptr: the film has none), with SoundSamples(frames, fps) samples,
  // and its codec (ChooseSoundCodec: GIF and image sequences take none).
  SoundSource* sound = nullptr;
  SoundCodec sound_codec = SoundCodec::kAuto;
};

// Joins `segments` (in film order, contiguous from frame 0) into `output`. The output is
// written under a hidden partial name and moved into place only when complete (a sequence:
// all its files renamed into place, then files of an older sequence of the same pattern
// that are not part of this one removed), so a failed or cancelled join leaves the output
// as it was. The frame ranges and every segment's header are checked before any output is
// written, the frames as they are joined. Errors name the segment file and what is wrong
// with it: missing, unreadable or cut short, a codec, size, pixel format, frame rate or
// encoder setting unlike the first segment's, another frame count than expected, or a gap
// or overlap in the frame ranges.
// In the output, frame n has the timestamp n / fps, as in a film encoded in one piece.
Status JoinSegments(const std::vector<SegmentFile>& segments, const std::string& output,
                    const JoinOptions& options);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_CONCAT_H_
