// FakeTransport: a Transport for tests of the DevTools client. The test plays the browser:
// it reads what the client sent with NextSent() and answers with Deliver(). Disconnect()
// stands in for a browser that died, a failure tests cannot otherwise time precisely.
// Thread-safe.
#ifndef PAGEREEL_TESTING_FAKE_TRANSPORT_H_
#define PAGEREEL_TESTING_FAKE_TRANSPORT_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "cdp/transport.h"

namespace pagereel::testing {

class FakeTransport final : public cdp::Transport {
 public:
  Status Send(std::string_view message) override {
    std::lock_guard lock(mu_);
    if (closed_) return CancelledError("closed");
    sent_.emplace_back(message);
    cv_.notify_all();
    return Status::Ok();
  }

  Result<std::string> Receive() override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return closed_ || disconnected_ || !incoming_.empty(); });
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
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  // Test side.
  void Deliver(std::string message) {
    std::lock_guard lock(mu_);
    incoming_.push_back(std::move(message));
    cv_.notify_all();
  }
  void Disconnect() {
    std::lock_guard lock(mu_);
    disconnected_ = true;
    cv_.notify_all();
  }
  // The next message the client sent, waiting up to 5 s for it.
  std::optional<std::string> NextSent() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return !sent_.empty(); })) {
      return std::nullopt;
    }
    std::string message = std::move(sent_.front());
    sent_.pop_front();
    return message;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> incoming_;
  std::deque<std::string> sent_;
  bool closed_ = false;
  bool disconnected_ = false;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_FAKE_TRANSPORT_H_
