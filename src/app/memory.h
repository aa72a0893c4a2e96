// MemoryWatch: samples the resident memory of pagereel and of every browser it runs
// (each browser's whole process group) twice a second, and keeps the peaks. Starts its own
// thread ("mem-watch") and joins it on destruction. Readers are thread-safe.
#ifndef PAGEREEL_APP_MEMORY_H_
#define PAGEREEL_APP_MEMORY_H_

#include <atomic>
#include <cstdint>
#include <thread>

namespace pagereel::app {

class MemoryWatch {
 public:
  MemoryWatch();
  ~MemoryWatch();

  int64_t peak_self_bytes() const { return peak_self_.load(); }
  // Largest sum over all browser process trees at one instant.
  int64_t peak_browsers_bytes() const { return peak_browsers_.load(); }

 private:
  void Sample();

  std::atomic<int64_t> peak_self_{0};
  std::atomic<int64_t> peak_browsers_{0};
  std::jthread thread_;
};

}  // namespace pagereel::app

#endif  // PAGEREEL_APP_MEMORY_H_
