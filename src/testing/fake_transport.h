// FakeTransport: a Transport for tests of the DevTools client. The test plays the browser:
// it reads what the client sent with NextSent() and answers with Deliver(). Disconnect()
// stands in for a browser that died, a failure tests cannot otherwise time precisely.
// Thread-safe.
#ifndef PAGEREEL_TESTING_FAKE_TRANSPORT_H_
#define PAGEREEL_TESTING_FAKE_TRANSPORT_H_

#include <chrono>
#include <deque>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "cdp/transport.h"

namespace pagereel::testing {

class FakeTransport final : public cdp::Transport {
 public:
  Status Send(std::string_view message) override {
    MutexLock lock(&mu_);
    if (closed_) return CancelledError("closed");
    sent_.emplace_back(message);
    cv_.SignalAll();
    return Status::Ok();
  }

  Result<std::string> Receive() override {
    MutexLock lock(&mu_);
    while (!closed_ && !disconnected_ && incoming_.empty()) cv_.Wait(&mu_);
    if (!incoming_.empty()) {
      std::string message = std::move(incoming_.front());
      incoming_.pop_front();
      message.reserve(message.size() + cdp::kJsonPadding);
      return message;
    }
    if (disconnected_) return UnavailableError("the browser closed its DevTools pipe");
    return CancelledError("closed");
  }

  void Close() override {
    MutexLock lock(&mu_);
    closed_ = true;
    cv_.SignalAll();
  }

  // Test side.
  void Deliver(std::string message) {
    MutexLock lock(&mu_);
    incoming_.push_back(std::move(message));
    cv_.SignalAll();
  }
  void Disconnect() {
    MutexLock lock(&mu_);
    disconnected_ = true;
    cv_.SignalAll();
  }
  // The next message the client sent, waiting up to 5 s for it.
  std::optional<std::string> NextSent() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    MutexLock lock(&mu_);
    while (sent_.empty()) {
      if (!cv_.WaitUntil(&mu_, deadline) && sent_.empty()) return std::nullopt;
    }
    std::string message = std::move(sent_.front());
    sent_.pop_front();
    return message;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> incoming_ GUARDED_BY(mu_);
  std::deque<std::string> sent_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  bool disconnected_ GUARDED_BY(mu_) = false;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_FAKE_TRANSPORT_H_
