// Screenshots as the browser sends them (PNG or JPEG, base64 text), and their decoded pixels.
//
// Decoding is pure and runs on worker threads, never on the thread that talks to the
// browser (base64 and JPEG/PNG decode are the expensive part of a frame after the browser's
// own work). Any thread; calls share nothing.
#ifndef PAGEREEL_ENCODE_IMAGE_H_
#define PAGEREEL_ENCODE_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace pagereel::encode {

enum class ImageFormat { kJpeg, kPng };

// A screenshot still in the browser's words: `format` bytes as base64 text, usually a view
// into the DevTools reply that carried it (capture::EncodedFrame).
// REQUIRES: base64[length] is NUL (FFmpeg's decoder reads up to it).
struct Screenshot {
  ImageFormat format = ImageFormat::kJpeg;
  const char* base64 = nullptr;
  size_t length = 0;
};

// Decoded pixels, 8-bit RGBA, rows packed (stride = width * 4).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;

  const uint8_t* pixel(int x, int y) const { return &rgba[(static_cast<size_t>(y) * width + x) * 4]; }
};

// Decodes base64 then JPEG or PNG. Fails with kInternal on corrupt data.
Result<Image> DecodeScreenshot(const Screenshot& screenshot);

// The pieces. `text` must be NUL-terminated.
Result<std::vector<uint8_t>> DecodeBase64(const char* text, size_t length);
// JPEG with libjpeg-turbo's fast DCT and fast chroma upsampling (what films are made from).
Result<Image> DecodeJpeg(const uint8_t* data, size_t size);
Result<Image> DecodePng(const uint8_t* data, size_t size);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_IMAGE_H_
