// FrameWindow: the bounded reorder window between lanes, decode workers and the encoder.
//
// Lanes Put() encoded screenshots in any order, but only for frames within `capacity` of
// the next frame to encode (WaitForRoom blocks otherwise: backpressure from the encoder
// to the browsers). Decode workers Claim() frames in film order and PutPrepared() them,
// decoded and converted for the encoder; the encoder TakePrepared() them in order and calls
// Encoded() when a frame is written. Memory stays bounded: at most `capacity` screenshots
// plus one prepared frame per worker.
//
// Thread-safe. Every blocking call returns false/nullopt once Cancel() was called or
// `cancel` (polled every 100 ms, so a signal handler may set it) became true.
#ifndef PAGEREEL_RENDER_FRAME_WINDOW_H_
#define PAGEREEL_RENDER_FRAME_WINDOW_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "capture/image.h"
#include "encode/encoder.h"

namespace pagereel::render {

class FrameWindow {
 public:
  FrameWindow(int64_t frames, int64_t capacity, const std::atomic<bool>* cancel);

  bool WaitForRoom(int64_t index);
  // A frame delivered twice (a lane retried after a crash) is kept once.
  void Put(int64_t index, capture::EncodedFrame frame);

  // The next frame in film order for a decode worker; nullopt when all are claimed.
  std::optional<capture::EncodedFrame> Claim();
  void PutPrepared(int64_t index, std::unique_ptr<encode::PreparedFrame> frame);

  // Blocks for frame `index`; nullptr once cancelled.
  std::unique_ptr<encode::PreparedFrame> TakePrepared(int64_t index);
  void Encoded(int64_t index);

  void Cancel();
  bool cancelled() const;

  // Largest number of screenshots held at once.
  int64_t peak_held() const;

 private:
  template <typename Pred>
  bool WaitLocked(std::unique_lock<std::mutex>& lock, Pred pred);

  // Constant after construction.
  const int64_t frames_;
  const int64_t capacity_;
  const std::atomic<bool>* const external_cancel_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<int64_t, capture::EncodedFrame> encoded_;  // Guarded by mu_.
  std::map<int64_t, std::unique_ptr<encode::PreparedFrame>> prepared_;  // Guarded by mu_.
  int64_t next_claim_ = 0;                            // Guarded by mu_.
  int64_t next_encode_ = 0;                           // Guarded by mu_.
  int64_t peak_held_ = 0;                             // Guarded by mu_.
  bool cancelled_ = false;                            // Guarded by mu_.
};

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_FRAME_WINDOW_H_
