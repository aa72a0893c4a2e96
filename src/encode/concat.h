// Joining a film rendered in segments: contiguous runs of frames, each written on its own
// by a fresh encoder (so each begins with a keyframe and closes its own GOPs), joined into
// the output without encoding the frames again.
//
// What a segment is follows the output (its kind as InspectOutputPath decides it):
//   .mp4, .mov, .webm   a film of the same kind written by encode::Encoder, H.264, ProRes or
//                       VP9; its packets are copied (stream copy), renumbered to film frames.
//   .mkv                FFV1 in Matroska, copied likewise.
//   .gif                a lossless film (.mkv: FFV1 in Matroska, as Encoder writes it) whose
//                       frames are decoded and written through one GIF Encoder, which builds
//                       one palette from the whole film.
//   a %05d.png / .jpg   a sequence pattern in a folder of its own, numbered from 0 within the
//   pattern             segment; its files are hard-linked (copied across file systems) under
//                       the output's numbers.
// Segments are only read: removing them afterwards is the caller's business.
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

namespace pagereel::encode {

struct SegmentFile {
  std::string path;         // A film, or for sequences a pattern such as seg-3/%05d.png.
  int64_t first_frame = 0;  // The film frame its first frame is.
  int64_t frame_count = 0;  // The frames it must hold.
};

struct JoinOptions {
  Rational fps{30, 1};  // The film's frame rate; segments of another rate are refused.
  // Polled between packets; set it (from a signal handler too) to abandon the join.
  const std::atomic<bool>* cancel = nullptr;
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

// What InspectSegment finds in a segment film.
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

// Reads a segment film's stream parameters and every packet, without decoding: fails when
// the file is missing, unreadable, cut short (its index places a frame past the end of the
// file, a frame is incomplete, or fewer frames can be read than its header promises), does
// not begin with a keyframe, or its frames' timestamps are not one frame apart from 0.
Result<SegmentInfo> InspectSegment(const std::string& path);

// Whether `segment` is complete as it stands, so a resumed render can keep it: a film that
// InspectSegment accepts with exactly frame_count frames, or a sequence with exactly the
// files 0 to frame_count - 1.
Status CheckSegment(const SegmentFile& segment);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_CONCAT_H_
