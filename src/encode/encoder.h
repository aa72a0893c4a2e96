// Encoder: writes RGBA frames, in order, to a film or an image sequence with FFmpeg's
// libraries (in-process) or libspng/libjpeg-turbo for sequences.
//
// The output kind follows the path: .mp4 (H.264, yuv420p, BT.709, faststart), .mov
// (ProRes 4444 with alpha, else ProRes 422 HQ), .webm (VP9; yuva420p with alpha), .mkv
// (FFV1, lossless; BGRA with alpha), .gif
// (palette built from the film), or a pattern with a printf field such as
// frames/%05d.png or frames/%05d.jpg (frame n goes to file n).
//
// Films are written to a hidden temporary file beside the target and renamed into place
// only by Finish(); an Encoder destroyed before Finish() removes what it wrote. A sequence
// is renamed into place as a whole by Finish(), which also removes the files of an older
// sequence of the same pattern numbered beyond the new one. Open() removes partial files
// of the same output left by pagereel processes that no longer run (killed mid-render).
// One thread at a time; libx264 and libvpx run their own worker threads inside.
#ifndef PAGEREEL_ENCODE_ENCODER_H_
#define PAGEREEL_ENCODE_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/rational.h"
#include "base/status.h"
#include "encode/frame.h"

namespace pagereel::encode {

enum class OutputKind { kMp4, kMov, kWebm, kMkv, kGif, kPngSequence, kJpegSequence };

struct OutputSpec {
  OutputKind kind;
  bool carries_alpha;  // Whether this kind can hold an alpha channel at all.
};

// Decides the output kind from `path`, and checks the folder exists and is writable.
// Errors name the path and list what is accepted.
Result<OutputSpec> InspectOutputPath(const std::string& path, bool alpha);

// The files already in place for the sequence `pattern` (e.g. frames/%05d.png) names,
// sorted; empty for a film path or an empty folder.
std::vector<std::string> ExistingSequenceFiles(const std::string& pattern);

struct EncoderOptions {
  std::string path;
  int width = 0;
  int height = 0;
  Rational fps{30, 1};
  bool alpha = false;
  // 1 (smallest) to 100 (best); maps to CRF for H.264/VP9 and to JPEG quality.
  int quality = 90;
  // H.264 only: x264's speed preset; empty: veryfast.
  std::string preset;
};

// What an encoder made with `options` writes, for manifests that must tell whether two
// files were made alike: codec, settings and the libraries' versions.
std::string DescribeEncoder(const EncoderOptions& options);

class Encoder {
 public:
  static Result<std::unique_ptr<Encoder>> Open(const EncoderOptions& options);
  virtual ~Encoder() = default;

  // A converter for this encoder, for another thread. Safe to call from any thread.
  virtual std::unique_ptr<Converter> NewConverter() const = 0;

  // Adds the next frame, made by one of this encoder's converters. Frames must come in
  // order, each of the size given at Open().
  virtual Status WritePrepared(std::unique_ptr<PreparedFrame> frame) = 0;

  // Converts on this thread, then WritePrepared.
  Status Write(const RgbaView& frame);

  // Flushes, finishes the container and moves the file into place.
  virtual Status Finish() = 0;

  // Where the finished output is.
  virtual std::string final_path() const = 0;

 private:
  std::unique_ptr<Converter> own_converter_;  // For Write().
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_ENCODER_H_
