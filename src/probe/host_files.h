// HostFiles reads the kernel's text interfaces (/proc, /sys) below a root directory.
//
// The real host uses the root "/"; tests point it at a fixture tree under
// src/probe/testdata so every reader can be fed a chosen (or malformed) file. Stateless
// after construction: safe to use from any thread.
#ifndef PAGEREEL_PROBE_HOST_FILES_H_
#define PAGEREEL_PROBE_HOST_FILES_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace pagereel::probe {

class HostFiles {
 public:
  // `root` is prepended to every path; "" or "/" means the running host.
  explicit HostFiles(std::string root = "");

  // The whole file, e.g. Read("/proc/loadavg"). kNotFound when it does not exist.
  Result<std::string> Read(std::string_view path) const;

  // The names in a directory (no "." or ".."), sorted.
  Result<std::vector<std::string>> List(std::string_view dir) const;

  bool Exists(std::string_view path) const;

  // The path as opened on this machine (root + path).
  std::string Resolve(std::string_view path) const;

 private:
  std::string root_;  // Constant after construction; no trailing slash.
};

}  // namespace pagereel::probe

#endif  // PAGEREEL_PROBE_HOST_FILES_H_
