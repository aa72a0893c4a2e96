// PipeTransport: the DevTools protocol over --remote-debugging-pipe. Chromium reads
// NUL-terminated JSON messages on its fd 3 and writes them on its fd 4; this class holds our
// ends of those two pipes. Thread rules as in Transport.
#ifndef PAGEREEL_CDP_PIPE_TRANSPORT_H_
#define PAGEREEL_CDP_PIPE_TRANSPORT_H_

#include <atomic>
#include <string>

#include "base/mutex.h"
#include "base/unique_fd.h"
#include "cdp/transport.h"

namespace pagereel::cdp {

class PipeTransport final : public Transport {
 public:
  // `to_browser` is written, `from_browser` read. Both are owned from here on.
  PipeTransport(UniqueFd to_browser, UniqueFd from_browser);
  ~PipeTransport() override;

  Status Send(std::string_view message) override;
  Result<std::string> Receive() override;
  void Close() override;

 private:
  Mutex send_mu_;
  UniqueFd to_browser_ GUARDED_BY(send_mu_);

  // Used only by the receiving thread.
  UniqueFd from_browser_;
  std::string pending_;  // Bytes read past the last complete message.

  // Written to by Close() to wake a Receive blocked in poll().
  UniqueFd wake_read_;
  UniqueFd wake_write_;
  std::atomic<bool> closed_{false};
};

}  // namespace pagereel::cdp

#endif  // PAGEREEL_CDP_PIPE_TRANSPORT_H_
