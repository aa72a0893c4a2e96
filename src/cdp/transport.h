// Transport: moves whole DevTools protocol messages to and from a browser.
//
// One thread may call Send while another calls Receive; Close may be called from any
// thread and unblocks a Receive in progress. Messages are JSON texts without framing.
#ifndef PAGEREEL_CDP_TRANSPORT_H_
#define PAGEREEL_CDP_TRANSPORT_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace pagereel::cdp {

// Bytes simdjson may read past the end of a message; every received message has at least
// this much spare capacity so it can be parsed in place, without a padded copy.
inline constexpr size_t kJsonPadding = 64;

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends one message. Thread-safe with respect to other Send calls.
  virtual Status Send(std::string_view message) = 0;

  // Blocks until one whole message arrives. Returns kUnavailable when the peer closed
  // the connection, kCancelled after Close(). The returned string has capacity() of at
  // least size() + kJsonPadding.
  virtual Result<std::string> Receive() = 0;

  virtual void Close() = 0;
};

}  // namespace pagereel::cdp

#endif  // PAGEREEL_CDP_TRANSPORT_H_
