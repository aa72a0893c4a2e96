#include "app/memory.h"

#include <algorithm>
#include <chrono>

#include "base/process_memory.h"
#include "base/thread.h"
#include "browser/browser.h"

namespace pagereel::app {

MemoryWatch::MemoryWatch() {
  thread_ = std::jthread([this](std::stop_token stop) {
    SetCurrentThreadName("mem-watch");
    while (!stop.stop_requested()) {
      Sample();
      for (int i = 0; i < 5 && !stop.stop_requested(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
}

MemoryWatch::~MemoryWatch() {
  thread_.request_stop();
  thread_.join();
  Sample();
}

void MemoryWatch::Sample() {
  peak_self_.store(std::max(peak_self_.load(), SelfResidentBytes()));
  int64_t total = 0;
  for (const auto& [group, bytes] : GroupResidentBytes(browser::LiveBrowserGroups())) total += bytes;
  peak_browsers_.store(std::max(peak_browsers_.load(), total));
}

}  // namespace pagereel::app
