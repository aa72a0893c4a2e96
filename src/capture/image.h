// Screenshots as they come from the browser, and their decoded pixels.
//
// Decoding is pure and runs on worker threads, never on the thread that talks to the
// browser (base64 and JPEG/PNG decode are the expensive part of a frame after the browser's
// own work).
#ifndef PAGEREEL_CAPTURE_IMAGE_H_
#define PAGEREEL_CAPTURE_IMAGE_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cdp/client.h"

namespace pagereel::capture {

enum class ImageFormat { kJpeg, kPng };

// A screenshot still inside the browser's reply, which it owns: the base64 text is at
// [offset, offset + length) of message.json and is followed by a NUL written over the
// closing quote, so it can be decoded in place without copying megabytes.
struct EncodedFrame {
  int64_t index = 0;
  ImageFormat format = ImageFormat::kJpeg;
  cdp::Message message;
  size_t offset = 0;
  size_t length = 0;

  const char* base64() const { return message.json.data() + offset; }
};

// Takes a beginFrame or captureScreenshot reply and turns its `path` string into an
// EncodedFrame in place. Fails if the field is missing.
Result<EncodedFrame> TakeScreenshot(cdp::Message reply, std::initializer_list<std::string_view> path,
                                    int64_t index, ImageFormat format);

// Decoded pixels, 8-bit RGBA, rows packed (stride = width * 4).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;

  const uint8_t* pixel(int x, int y) const { return &rgba[(static_cast<size_t>(y) * width + x) * 4]; }
};

// Decodes base64 then JPEG or PNG. Fails with kInternal on corrupt data.
Result<Image> DecodeFrame(const EncodedFrame& frame);

// The pieces, for benchmarks and tests. `text` must be NUL-terminated.
Result<std::vector<uint8_t>> DecodeBase64(const char* text, size_t length);
Result<Image> DecodeJpeg(const uint8_t* data, size_t size);
Result<Image> DecodePng(const uint8_t* data, size_t size);

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_IMAGE_H_
