// Admission: at most `capacity` captures run at once, each on its own worker thread; up
// to `max_waiting` more wait in line, each for at most `max_wait`. Past either bound a
// capture is refused at once with a Retry-After computed from how fast the line drained
// lately, so an overloaded service answers quickly instead of timing out.
//
// Thread-safe. Jobs run on the admission's worker threads, never on the caller's.
#ifndef PAGEREEL_SERVE_ADMISSION_H_
#define PAGEREEL_SERVE_ADMISSION_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace pagereel::serve {

using Clock = std::chrono::steady_clock;

struct Job {
  // The capture itself, on a worker thread; gets how long it waited in line.
  std::function<void(Clock::duration waited)> run;
  // Called instead of `run` when the job leaves the line without running: it waited too
  // long, or the service is shutting down (kUnavailable, with the reason).
  std::function<void(const Status&)> reject;
  // Set when the client left; the running capture polls it.
  std::atomic<bool> cancelled{false};
  Clock::time_point enqueued{};
};

struct AdmissionOptions {
  int capacity = 2;
  int max_waiting = 100;
  std::chrono::milliseconds max_wait{20'000};
  // Added to the worker threads' niceness (0-19): captures (and the encoding they do,
  // whose threads inherit it) yield the CPU to the HTTP thread.
  int worker_nice = 0;
};

class Admission {
 public:
  explicit Admission(const AdmissionOptions& options);
  ~Admission();  // Shutdown(0).
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Starts `job` on a free worker, or puts it in line. kResourceExhausted when the line is
  // full; kUnavailable once shutting down.
  Status Submit(std::shared_ptr<Job> job) EXCLUDES(mu_);

  // Takes a waiting job out of the line (its client left). False if it is not waiting
  // (already running or done).
  bool Remove(const Job* job) EXCLUDES(mu_);

  // Seconds a refused client should wait before trying again: the time the line takes to
  // move by its length at the rate it drained (over the last minute, or since the first
  // capture of that minute finished when that is shorter, but at least a second), from 1
  // to 60.
  int RetryAfterSeconds() const EXCLUDES(mu_);

  int running() const EXCLUDES(mu_);
  int waiting() const EXCLUDES(mu_);
  int capacity() const { return options_.capacity; }

  // Refuses new jobs and rejects the waiting ones; waits up to `grace` for running jobs
  // and returns how many were still running then. Workers are joined by the destructor.
  int Shutdown(std::chrono::milliseconds grace) EXCLUDES(mu_);

 private:
  void WorkerLoop() EXCLUDES(mu_);
  void ExpiryLoop() EXCLUDES(mu_);

  // Constant after construction.
  const AdmissionOptions options_;
  std::vector<std::thread> workers_;
  std::thread expiry_;

  mutable Mutex mu_;
  CondVar work_cv_;    // Workers wait on it: a job or stopping.
  CondVar expiry_cv_;  // The expiry thread waits on it: stopping.
  CondVar idle_cv_;    // A worker finished a job.
  std::deque<std::shared_ptr<Job>> line_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::deque<Clock::time_point> finished_ GUARDED_BY(mu_);  // Completions, last minute.
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_ADMISSION_H_
