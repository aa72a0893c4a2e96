// Screenshots as they come from the browser: the base64 text stays inside the DevTools reply
// that carried it, so megabytes are never copied on the thread that talks to the browser.
// Decoding them is encode's (encode/image.h), on worker threads.
#ifndef PAGEREEL_CAPTURE_IMAGE_H_
#define PAGEREEL_CAPTURE_IMAGE_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "base/status.h"
#include "cdp/client.h"
#include "encode/image.h"

namespace pagereel::capture {

// A screenshot still inside the browser's reply, which it owns: the base64 text is at
// [offset, offset + length) of message.json and is followed by a NUL written over the
// closing quote, so it can be decoded in place without copying megabytes.
struct EncodedFrame {
  int64_t index = 0;
  encode::ImageFormat format = encode::ImageFormat::kJpeg;
  cdp::Message message;
  size_t offset = 0;
  size_t length = 0;

  const char* base64() const { return message.json.data() + offset; }
  // A view for encode/, valid while this frame lives.
  encode::Screenshot screenshot() const { return {format, base64(), length}; }
};

// Takes a beginFrame or captureScreenshot reply and turns its `path` string into an
// EncodedFrame in place. Fails if the field is missing.
Result<EncodedFrame> TakeScreenshot(cdp::Message reply, std::initializer_list<std::string_view> path,
                                    int64_t index, encode::ImageFormat format);

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_IMAGE_H_
