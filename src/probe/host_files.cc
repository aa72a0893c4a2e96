#include "probe/host_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

namespace pagereel::probe {

HostFiles::HostFiles(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string HostFiles::Resolve(std::string_view path) const {
  std::string full = root_;
  full.append(path);
  return full;
}

Result<std::string> HostFiles::Read(std::string_view path) const {
  const std::string full = Resolve(path);
  int raw;
  do {
    raw = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return ErrnoError(full, errno);
  UniqueFd fd(raw);
  // /proc and /sys files report size 0; read until end of file.
  std::string text;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(full, errno);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

Result<std::vector<std::string>> HostFiles::List(std::string_view dir) const {
  const std::string full = Resolve(dir);
  DIR* d = ::opendir(full.c_str());
  if (d == nullptr) return ErrnoError(full, errno);
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(d)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names.emplace_back(entry->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool HostFiles::Exists(std::string_view path) const {
  struct stat st;
  return ::stat(Resolve(path).c_str(), &st) == 0;
}

}  // namespace pagereel::probe
