// ScratchDir: an empty folder for one test, named after it, removed afterwards. Tests that
// write films check it holds exactly what they expect (no partial files left behind).
#ifndef PAGEREEL_TESTING_SCRATCH_DIR_H_
#define PAGEREEL_TESTING_SCRATCH_DIR_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace pagereel::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() /
              ("pagereel-" + prefix + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_SCRATCH_DIR_H_
