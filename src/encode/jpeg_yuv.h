// JpegToYuv420: turns a browser's JPEG screenshot straight into a film's pixels, yuv420p
// BT.709 limited range, without the RGBA frame in between.
//
// It gives what the exact path gives (encode::DecodeJpeg to RGBA, then the film converter's
// swscale to yuv420p) to within one level, without building the RGBA frame: libjpeg-turbo
// decodes to the JPEG's own YCbCr planes and one pass makes the film's planes from them.
// Measured in bench/decode_bench.cc (BM_FilmFrameFromJpeg); the PSNR against the exact
// path is checked in jpeg_yuv_test.cc.
//
// Any chroma subsampling libjpeg-turbo decodes (Chromium sends 4:2:0 at every quality),
// and greyscale JPEGs.
//
// Holds a decoder and scratch rows, reused from frame to frame: one thread at a time, one
// per converter.
#ifndef PAGEREEL_ENCODE_JPEG_YUV_H_
#define PAGEREEL_ENCODE_JPEG_YUV_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"

namespace pagereel::encode {

// Where a yuv420p frame goes: Y is width x height, U and V are width/2 x height/2, each
// row `stride` bytes from the last (an AVFrame's data and linesize fit as they are).
struct Yuv420Planes {
  uint8_t* data[3] = {nullptr, nullptr, nullptr};
  int stride[3] = {0, 0, 0};
};

class JpegToYuv420 {
 public:
  JpegToYuv420();
  ~JpegToYuv420();
  JpegToYuv420(const JpegToYuv420&) = delete;
  JpegToYuv420& operator=(const JpegToYuv420&) = delete;

  // Decodes `jpeg` into `out`. Fails with kInvalidArgument for an odd or empty size, and with
  // kInternal when the JPEG is corrupt, is not width x height, or holds CMYK or RGB
  // rather than YCbCr; the message says which. Rows of `out` beyond width bytes are left
  // alone. REQUIRES: `out` has room for a width x height yuv420p frame.
  Status Convert(std::span<const uint8_t> jpeg, int width, int height, const Yuv420Planes& out);

 private:
  std::unique_ptr<void, int (*)(void*)> decoder_;  // A tjhandle, made on first use.
  std::vector<uint8_t> jpeg_planes_;               // The JPEG's Y, Cb and Cr planes as decoded.
  std::vector<int16_t> rgb_offsets_;  // Per pixel of a row: what the decoder adds to Y.
  std::vector<uint8_t> rgb_rows_;     // The last four rows' R, G and B.
  std::vector<int16_t> chroma_sums_;  // Scratch for one chroma row.
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_JPEG_YUV_H_
