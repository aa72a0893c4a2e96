#include "app/memory.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/thread.h"
#include "browser/browser.h"

namespace pagereel::app {

namespace {

// Resident bytes and process group of /proc/PID, from statm and stat.
bool ReadProcess(const std::filesystem::path& dir, int64_t* rss, pid_t* pgid) {
  std::ifstream statm(dir / "statm");
  int64_t size = 0;
  int64_t resident = 0;
  if (!(statm >> size >> resident)) return false;
  std::ifstream stat(dir / "stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  std::istringstream rest(line.substr(close + 2));
  std::string state;
  pid_t ppid = 0;
  rest >> state >> ppid >> *pgid;
  *rss = resident * sysconf(_SC_PAGESIZE);
  return true;
}

}  // namespace

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
  int64_t self_rss = 0;
  pid_t self_group = 0;
  if (ReadProcess("/proc/self", &self_rss, &self_group)) {
    peak_self_.store(std::max(peak_self_.load(), self_rss));
  }
  std::vector<pid_t> groups = browser::LiveBrowserGroups();
  if (groups.empty()) return;
  int64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    int64_t rss = 0;
    pid_t pgid = 0;
    if (!ReadProcess(entry.path(), &rss, &pgid)) continue;
    if (std::find(groups.begin(), groups.end(), pgid) != groups.end()) total += rss;
  }
  peak_browsers_.store(std::max(peak_browsers_.load(), total));
}

int64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (meminfo >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return -1;
}

}  // namespace pagereel::app
