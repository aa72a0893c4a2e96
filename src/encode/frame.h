// The frames encoders take: a view of RGBA pixels, and frames already converted (on a worker
// thread) to what one encoder consumes.
#ifndef PAGEREEL_ENCODE_FRAME_H_
#define PAGEREEL_ENCODE_FRAME_H_

#include <cstdint>
#include <memory>

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
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_FRAME_H_
