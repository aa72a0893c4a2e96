#include "capture/image.h"

#include <memory>

#include "cdp/json_util.h"

namespace pagereel::capture {

Result<EncodedFrame> TakeScreenshot(cdp::Message reply, std::initializer_list<std::string_view> path,
                                    int64_t index, encode::ImageFormat format) {
  PR_ASSIGN_OR_RETURN(std::string_view text, cdp::GetRawStringView(reply, path));
  EncodedFrame frame;
  frame.index = index;
  frame.format = format;
  frame.offset = static_cast<size_t>(text.data() - reply.json.data());
  frame.length = text.size();
  frame.message = std::move(reply);  // Moving a std::string keeps its heap buffer.
  frame.message.json[frame.offset + frame.length] = '\0';  // Was the closing quote.
  return frame;
}

}  // namespace pagereel::capture
