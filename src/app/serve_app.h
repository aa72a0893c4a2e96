// RunServe: `pagereel serve` from its command line to its exit status: checks the flags,
// picks defaults from the host, starts the service and serves until SIGTERM or SIGINT,
// then shuts down gracefully and exits 0.
#ifndef PAGEREEL_APP_SERVE_APP_H_
#define PAGEREEL_APP_SERVE_APP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pagereel::app {

struct ServeRequest {
  std::string listen = "127.0.0.1:8080";
  int browsers = 0;     // 0: from cores and free memory.
  int per_browser = 0;  // 0: the default.
  int queue = 100;
  double max_wait_seconds = 20;
  int64_t recycle_after = 1000;
  int64_t browser_memory_mb = 1024;
  int64_t renderer_memory_mb = 2048;  // A running capture's renderer; 0: no limit.
  double timeout_seconds = 30;
  double max_timeout_seconds = 120;
  int64_t max_body_kb = 2048;
  int max_pdf_pages = 100;
  int64_t max_clip_frames = 300;
  int64_t max_clip_media_mb = 64;  // The media one clip's sounds may fetch, in all.
  std::string work_dir;  // Empty: a new folder under $TMPDIR.
  double grace_seconds = 10;
  std::string token;
  std::vector<std::string> allow;
  std::vector<std::string> resolve;
  std::string browser;
};

int RunServe(const ServeRequest& request);

}  // namespace pagereel::app

#endif  // PAGEREEL_APP_SERVE_APP_H_
