#include "app/serve_app.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "base/process_memory.h"
#include "serve/server.h"

namespace pagereel::app {

namespace {

// Captures at once per browser. On 2 cores, 6 or 8 took no more captures a second than 4
// once a capture's DevTools calls were sent together, for a longer p99 and 0.2-0.7 GB more
// memory (bench/RESULTS.md, "fewer round trips").
constexpr int kDefaultPerBrowser = 4;
// Niceness added to browsers and capture workers, below the HTTP thread.
constexpr int kCaptureNice = 5;
// A capture browser with a few contexts open: about twice the 500 MB a render lane's
// browser measured (bench/RESULTS.md), to leave room for heavy pages.
constexpr int64_t kBytesPerBrowser = 1LL << 30;

int Usage(const std::string& message) {
  std::fprintf(stderr, "pagereel serve: %s\n", message.c_str());
  return 2;
}

}  // namespace

int RunServe(const ServeRequest& request) {
  if (request.browsers < 0 || request.browsers > 64) return Usage("--browsers must be from 1 to 64");
  if (request.per_browser < 0 || request.per_browser > 64) return Usage("--per-browser must be from 1 to 64");
  if (request.queue < 0 || request.queue > 100000) return Usage("--queue must be from 0 to 100000");
  if (!(request.max_wait_seconds > 0 && request.max_wait_seconds <= 3600)) return Usage("--max-wait must be from 0 to 3600 seconds");
  if (!(request.timeout_seconds > 0 && request.timeout_seconds <= request.max_timeout_seconds)) {
    return Usage("--timeout must be above 0 and at most --max-timeout");
  }
  if (!(request.max_timeout_seconds > 0 && request.max_timeout_seconds <= 3600)) return Usage("--max-timeout must be from 0 to 3600 seconds");
  if (request.max_body_kb < 1 || request.max_body_kb > 1024 * 1024) return Usage("--max-body-kb must be from 1 to 1048576");
  if (request.max_pdf_pages < 1 || request.max_pdf_pages > 100000) return Usage("--max-pdf-pages must be from 1 to 100000");
  if (request.max_clip_frames < 1 || request.max_clip_frames > 100000) return Usage("--max-clip-frames must be from 1 to 100000");
  // A clip's sound is mixed from memory: 0 would leave every sound out (audio=false does
  // that per request), and a clip has at most 60 s of sound to play.
  if (request.max_clip_media_mb < 1 || request.max_clip_media_mb > 1024) {
    return Usage("--max-clip-media-mb must be from 1 to 1024, not " +
                 std::to_string(request.max_clip_media_mb));
  }
  if (request.recycle_after < 0) return Usage("--recycle-after must be 0 (never) or more");
  if (request.browser_memory_mb < 0) return Usage("--browser-memory-mb must be 0 (no limit) or more");
  // Below 64 MiB no page's renderer would start a capture; above 1 TiB is no limit.
  if (request.renderer_memory_mb != 0 &&
      (request.renderer_memory_mb < 64 || request.renderer_memory_mb > (1 << 20))) {
    return Usage("--renderer-memory-mb must be 0 (no limit) or from 64 to 1048576, not " +
                 std::to_string(request.renderer_memory_mb));
  }
  if (!(request.grace_seconds >= 0 && request.grace_seconds <= 3600)) return Usage("--grace must be from 0 to 3600 seconds");

  serve::ServeOptions options;
  options.listen = request.listen;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int by_memory = static_cast<int>(std::max<int64_t>(1, AvailableMemoryBytes() / kBytesPerBrowser));
  options.pool.browsers = request.browsers > 0 ? request.browsers : std::clamp(std::min(cores / 2, by_memory), 1, 16);
  options.pool.per_browser = request.per_browser > 0 ? request.per_browser : kDefaultPerBrowser;
  options.pool.recycle_after = request.recycle_after;
  options.pool.rss_limit_bytes = request.browser_memory_mb * (1LL << 20);
  options.pool.renderer_limit_bytes = request.renderer_memory_mb * (1LL << 20);
  options.pool.launch.binary = request.browser;
  // Browsers and capture workers below the HTTP thread: under full load the service still
  // answers health checks, metrics and refusals at once (bench/RESULTS.md, I/O thread).
  options.pool.launch.nice = kCaptureNice;
  options.admission.worker_nice = kCaptureNice;
  options.admission.max_waiting = request.queue;
  options.admission.max_wait = std::chrono::milliseconds(static_cast<int64_t>(request.max_wait_seconds * 1000));
  options.limits.default_timeout = std::chrono::milliseconds(static_cast<int64_t>(request.timeout_seconds * 1000));
  options.limits.max_timeout = std::chrono::milliseconds(static_cast<int64_t>(request.max_timeout_seconds * 1000));
  options.limits.max_body_bytes = static_cast<size_t>(request.max_body_kb) * 1024;
  options.limits.max_pdf_pages = request.max_pdf_pages;
  options.limits.max_clip_frames = request.max_clip_frames;
  options.limits.max_clip_media_bytes = request.max_clip_media_mb << 20;
  options.work_dir = request.work_dir;
  options.token = request.token;
  options.allow = request.allow;
  options.resolve = request.resolve;
  options.grace = std::chrono::milliseconds(static_cast<int64_t>(request.grace_seconds * 1000));

  // SIGTERM and SIGINT are taken by this thread with sigwait; every thread started from
  // here on inherits the mask, so none of them is interrupted by them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Result<std::unique_ptr<serve::Server>> server = serve::Server::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "pagereel serve: %s\n", std::string(server.status().message()).c_str());
    return server.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::fprintf(stderr,
               "pagereel serve: listening on http://%s:%u (%d browser%s x %d captures, up to %d "
               "waiting); try: curl -o page.png 'http://%s:%u/v1/screenshot?url=https://example.com'\n",
               host.c_str(), (*server)->port(), options.pool.browsers,
               options.pool.browsers == 1 ? "" : "s", options.pool.per_browser,
               options.admission.max_waiting, host.c_str(), (*server)->port());
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "pagereel serve: %s: finishing the captures in flight (up to %g s)\n",
               sig == SIGTERM ? "SIGTERM" : "SIGINT", request.grace_seconds);
  (*server)->Shutdown();
  std::fprintf(stderr, "pagereel serve: stopped\n");
  return 0;
}

}  // namespace pagereel::app
