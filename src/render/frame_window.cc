#include "render/frame_window.h"

#include <algorithm>
#include <chrono>

namespace pagereel::render {

FrameWindow::FrameWindow(int64_t frames, int64_t capacity, const std::atomic<bool>* cancel)
    : frames_(frames), capacity_(std::max<int64_t>(1, capacity)), external_cancel_(cancel) {}

template <typename Pred>
bool FrameWindow::WaitLocked(std::unique_lock<std::mutex>& lock, Pred pred) {
  for (;;) {
    if (cancelled_) return false;
    if (external_cancel_ != nullptr && external_cancel_->load()) {
      cancelled_ = true;
      changed_.notify_all();
      return false;
    }
    if (pred()) return true;
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

bool FrameWindow::WaitForRoom(int64_t index) {
  std::unique_lock lock(mu_);
  return WaitLocked(lock, [&] { return index < next_encode_ + capacity_; });
}

void FrameWindow::Put(int64_t index, capture::EncodedFrame frame) {
  std::lock_guard lock(mu_);
  if (index < next_claim_ || encoded_.count(index) != 0) return;
  encoded_.emplace(index, std::move(frame));
  peak_held_ = std::max<int64_t>(peak_held_, static_cast<int64_t>(encoded_.size()));
  changed_.notify_all();
}

std::optional<capture::EncodedFrame> FrameWindow::Claim() {
  std::unique_lock lock(mu_);
  if (!WaitLocked(lock, [&] { return next_claim_ >= frames_ || encoded_.count(next_claim_); })) {
    return std::nullopt;
  }
  if (next_claim_ >= frames_) return std::nullopt;
  auto node = encoded_.extract(next_claim_++);
  changed_.notify_all();
  return std::move(node.mapped());
}

void FrameWindow::PutPrepared(int64_t index, std::unique_ptr<encode::PreparedFrame> frame) {
  std::lock_guard lock(mu_);
  prepared_.emplace(index, std::move(frame));
  changed_.notify_all();
}

std::unique_ptr<encode::PreparedFrame> FrameWindow::TakePrepared(int64_t index) {
  std::unique_lock lock(mu_);
  if (!WaitLocked(lock, [&] { return prepared_.count(index) != 0; })) return nullptr;
  auto node = prepared_.extract(index);
  return std::move(node.mapped());
}

void FrameWindow::Encoded(int64_t index) {
  std::lock_guard lock(mu_);
  next_encode_ = std::max(next_encode_, index + 1);
  changed_.notify_all();
}

void FrameWindow::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  changed_.notify_all();
}

bool FrameWindow::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

int64_t FrameWindow::peak_held() const {
  std::lock_guard lock(mu_);
  return peak_held_;
}

}  // namespace pagereel::render
