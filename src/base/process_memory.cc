#include "base/process_memory.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pagereel {

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
  // The fields after the command name (which may hold spaces) start after the last ')'.
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

int64_t SelfResidentBytes() {
  int64_t rss = 0;
  pid_t group = 0;
  return ReadProcess("/proc/self", &rss, &group) ? rss : 0;
}

std::map<pid_t, int64_t> GroupResidentBytes(const std::vector<pid_t>& groups) {
  std::map<pid_t, int64_t> totals;
  if (groups.empty()) return totals;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    int64_t rss = 0;
    pid_t pgid = 0;
    if (!ReadProcess(entry.path(), &rss, &pgid)) continue;
    if (std::find(groups.begin(), groups.end(), pgid) != groups.end()) totals[pgid] += rss;
  }
  return totals;
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

}  // namespace pagereel
