// Picture: one owned 8-bit RGBA image with PREMULTIPLIED alpha, the unit that live sources
// hand to the compositor. Rows are packed tightly (stride = width * 4), bytes in the order
// R, G, B, A. Every colour byte is at most its pixel's alpha (PreparePicture guarantees it;
// Composite relies on it). A plain value type: safe to read from any number of threads at
// once, to be written by one thread at a time; sources publish finished ones as
// std::shared_ptr<const Picture>.
//
// PreparePicture turns a decoded screenshot (straight alpha, as PNG and JPEG decoders give
// it) into a Picture, scaling it when the size differs. It costs milliseconds (see
// bench/RESULTS.md, "live compositor"), so it runs on a source's worker thread once per new
// frame, never on the clock thread per tick. Any thread may call it.
#ifndef PAGEREEL_LIVE_PICTURE_H_
#define PAGEREEL_LIVE_PICTURE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace pagereel::live {

// The largest width or height a Picture may have.
inline constexpr int kMaxPictureSide = 16384;

// One straight (not premultiplied) RGBA colour.
struct Rgba {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  uint8_t a = 255;
};

struct Picture {
  Picture() = default;
  // A width x height picture, all transparent (every byte 0).
  // REQUIRES: 0 <= width, height <= kMaxPictureSide.
  Picture(int width, int height);

  int stride() const { return width * 4; }
  uint8_t* Row(int y) { return pixels.data() + static_cast<size_t>(y) * stride(); }
  const uint8_t* Row(int y) const { return pixels.data() + static_cast<size_t>(y) * stride(); }

  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // height * stride() bytes, premultiplied RGBA.
};

// Converts `height` rows of straight RGBA, `stride` bytes apart, to a premultiplied
// out_width x out_height Picture. Premultiplying rounds exactly: (c * a + 127) / 255. When
// the size differs the premultiplied image is scaled with libswscale's bilinear filter
// (area-weighted when shrinking); scaling after premultiplying keeps transparent pixels'
// colours from bleeding into edges. Errors: InvalidArgumentError naming the sizes when
// a size is outside 1..kMaxPictureSide, stride < width * 4 or the data is null.
Result<Picture> PreparePicture(const uint8_t* straight_rgba, int width, int height, int stride,
                               int out_width, int out_height);

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_PICTURE_H_
