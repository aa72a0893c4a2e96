// The frames encoders take: a view of RGBA pixels, and frames already converted (on a worker
// thread) to what one encoder consumes.
#ifndef PAGEREEL_ENCODE_FRAME_H_
#define PAGEREEL_ENCODE_FRAME_H_

#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"

namespace pagereel::encode {

// A view of one frame's pixels: 8-bit RGBA, `stride` bytes per row.
struct RgbaView {
  const uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  int stride = 0;
};

// A frame already converted to what its encoder consumes: YUV planes for a film, PNG or
// JPEG bytes for a sequence. Made on any thread by a Converter.
class PreparedFrame {
 public:
  virtual ~PreparedFrame() = default;
};

// Turns RGBA frames into PreparedFrames for one encoder, so colour conversion and image
// compression run on worker threads rather than the encoder's. One Converter per thread;
// destroy it before its encoder.
class Converter {
 public:
  virtual ~Converter() = default;
  virtual Result<std::unique_ptr<PreparedFrame>> Convert(const RgbaView& frame) = 0;

  // Whether ConvertJpeg() works here. Films in yuv420p (H.264, VP9 without alpha) take the
  // browser's JPEG screenshots as they come, which saves decoding them to RGBA first
  // (encode/jpeg_yuv.h); other outputs take RGBA only.
  virtual bool AcceptsJpeg() const { return false; }

  // Converts a JPEG of width x height, giving what Convert() gives for the JPEG decoded to
  // RGBA with libjpeg-turbo's fast DCT and fast upsampling (as capture decodes screenshots)
  // to within one level. Fails if the JPEG is corrupt or of another size, and (kFailedPrecondition)
  // where AcceptsJpeg() is false.
  virtual Result<std::unique_ptr<PreparedFrame>> ConvertJpeg(std::span<const uint8_t> /*jpeg*/,
                                                             int /*width*/, int /*height*/) {
    return FailedPreconditionError("this output takes RGBA frames only; decode the JPEG first");
  }
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_FRAME_H_
