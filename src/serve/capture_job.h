// CaptureJob: one request of a capture route (/v1/screenshot, /v1/pdf, /v1/gif, /v1/clip),
// from its parameters to its answer and its log line. It reads the parameters; then, on an
// admission worker, checks the URL against the egress policy, opens a channel of the
// egress proxy of its own (so the requests it refuses are this capture's), leases a
// browser and takes the snapshot or makes the clip, noting what it did for the log line.
// It knows nothing of sockets: the connection that made it (serve/server.cc) puts it in
// line, watches for its client leaving, and writes the answer it gets.
//
// Threads: Parse() and Finish() on the connection's I/O thread; Stop() from any thread.
// Between them exactly one of Run() (an admission worker, then Threw() on it should Run()
// throw before answering), Refused() or Rejected() (the thread that refused it) or
// Abandoned() (the I/O thread), each handing over its answer once.
#ifndef PAGEREEL_SERVE_CAPTURE_JOB_H_
#define PAGEREEL_SERVE_CAPTURE_JOB_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "serve/admission.h"
#include "serve/answer.h"
#include "serve/request.h"

namespace pagereel::serve {

namespace egress {
class Policy;
class Proxy;
}  // namespace egress
class BrowserPool;
class Metrics;

// What the jobs need of the service around them. Set up once; outlives every job.
struct CaptureServices {
  const egress::Policy* policy = nullptr;
  egress::Proxy* proxy = nullptr;
  BrowserPool* pool = nullptr;       // Screenshots and PDFs.
  BrowserPool* film_pool = nullptr;  // GIFs and clips (begin-frame control).
  Admission* admission = nullptr;  // Only for Retry-After.
  Metrics* metrics = nullptr;
  const Limits* limits = nullptr;
  std::filesystem::path work_dir;  // Scratch space of GIFs and clips while they are made.
  // Writes one log line (a JSON object) whole, from any thread; it adds the "time".
  std::function<void(nlohmann::json)> log;
};

class CaptureJob {
 public:
  // `started`: when the request had been read.
  CaptureJob(CaptureServices& services, Route route, Clock::time_point started);
  ~CaptureJob();
  CaptureJob(const CaptureJob&) = delete;
  CaptureJob& operator=(const CaptureJob&) = delete;

  // Reads the request's parameters. nullopt when they are good; else the answer: 400 naming
  // the bad parameter, or 413 for a body over the limit.
  std::optional<Answer> Parse(std::string_view target, std::string_view content_type,
                              std::string_view body);

  // The capture, on an admission worker, after waiting `waited` in line. `answer` is called
  // once, before the browser and the proxy channel are let go (the client need not wait for
  // that); the job is not touched afterwards. Once `cancelled` is set the capture stops
  // early (its client left).
  void Run(Clock::duration waited, const std::atomic<bool>& cancelled,
           const std::function<void(Answer)>& answer);

  // Stops a running capture at once: its client left. Run() then answers kCancelled (499),
  // also when the page's script holds its main thread and answers no DevTools call.
  void Stop();

  // 500: Run() threw `what` (a library's exception) before it answered; the log line says
  // what, the client is told only that the service failed.
  Answer Threw(std::string_view what);

  // 503 with Retry-After: the admission refused the job when it was submitted (`status`:
  // the line is full, or kUnavailable, the service is shutting down).
  Answer Refused(const Status& status);
  // 503 with Retry-After: the job left the line without running (`status`: it waited too
  // long, or kUnavailable, the service is shutting down).
  Answer Rejected(const Status& status);
  // 499: the client left while the job waited.
  Answer Abandoned();

  // Writes the job's log line and counts it in the metrics, as `answer`'s status or as 499
  // when the client left.
  void Finish(const Answer& answer, bool client_left);

 private:
  Answer Overloaded(const Status& status, const char* busy_reason);

  CaptureServices& services_;
  const Route route_;
  const Clock::time_point started_;
  CaptureRequest request_;  // Set by Parse().
  const std::shared_ptr<capture::StopHandle> stop_;
  // The log line's fields so far (nlohmann::json, kept out of this header).
  std::unique_ptr<nlohmann::json> log_;
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_CAPTURE_JOB_H_
