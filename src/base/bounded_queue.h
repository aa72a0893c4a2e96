// BoundedQueue<T>: a fixed-capacity FIFO between threads, with a named overflow policy.
//
// Any number of producers and consumers may call it concurrently. Close() wakes everyone:
// producers then fail to push, consumers drain what is left and then get nullopt.
#ifndef PAGEREEL_BASE_BOUNDED_QUEUE_H_
#define PAGEREEL_BASE_BOUNDED_QUEUE_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

#include "base/mutex.h"

namespace pagereel {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  // Blocks while full. Returns false (and drops `item`) once the queue is closed.
  bool Push(T item) {
    MutexLock lock(&mu_);
    while (!closed_ && items_.size() >= capacity_) not_full_.Wait(&mu_);
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.Signal();
    return true;
  }

  // Never blocks: returns false when full or closed (the caller decides what to drop).
  bool TryPush(T item) {
    MutexLock lock(&mu_);
    if (closed_ || items_.size() >= capacity_) return false;
    items_.push_back(std::move(item));
    not_empty_.Signal();
    return true;
  }

  // Blocks until an item is available, or returns nullopt when closed and drained.
  std::optional<T> Pop() {
    MutexLock lock(&mu_);
    while (!closed_ && items_.empty()) not_empty_.Wait(&mu_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.Signal();
    return item;
  }

  void Close() {
    MutexLock lock(&mu_);
    closed_ = true;
    not_empty_.SignalAll();
    not_full_.SignalAll();
  }

  size_t size() const {
    MutexLock lock(&mu_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable Mutex mu_;
  CondVar not_empty_;
  CondVar not_full_;
  std::deque<T> items_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace pagereel

#endif  // PAGEREEL_BASE_BOUNDED_QUEUE_H_
