// Test-only: the capture service the GIF and clip tests (clip_test.cc, clip_sound_test.cc)
// talk to, with one browser, its pages served over loopback by `pages_` (the only origin
// its egress policy opens), its work folder and its log lines kept for the test to read.
#ifndef PAGEREEL_SERVE_CLIP_TEST_SERVICE_H_
#define PAGEREEL_SERVE_CLIP_TEST_SERVICE_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "serve/server.h"
#include "testing/http_server.h"
#include "testing/scratch_dir.h"

namespace pagereel::serve {

class ClipServiceTest : public ::testing::Test {
 protected:
  explicit ClipServiceTest(const char* scratch_name) : scratch_(scratch_name) {}

  // Starts the service with `limits`. REQUIRES: called once, from SetUp.
  void StartService(const Limits& limits = Limits{}) {
    ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.pool.browsers = 1;
    options.pool.per_browser = 2;
    options.work_dir = (scratch_.path() / "work").string();
    options.allow = {pages_.Origin()};
    options.limits = limits;
    options.log = [this](const std::string& line) {
      std::lock_guard lock(log_mu_);
      logs_.push_back(nlohmann::json::parse(line));
    };
    Result<std::unique_ptr<Server>> server = Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    port_ = server_->port();
  }

  std::vector<nlohmann::json> Logs() {
    std::lock_guard lock(log_mu_);
    return logs_;
  }

  testing::ScratchDir scratch_;
  testing::HttpServer pages_;
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;

 private:
  std::mutex log_mu_;
  std::vector<nlohmann::json> logs_;
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_CLIP_TEST_SERVICE_H_
