#include "serve/admission.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "base/thread.h"

namespace pagereel::serve {

namespace {
constexpr std::chrono::seconds kDrainWindow{60};
}

Admission::Admission(const AdmissionOptions& options) : options_(options) {
  for (int i = 0; i < options_.capacity; ++i) {
    workers_.emplace_back([this, i] {
      SetCurrentThreadName("capture-" + std::to_string(i));
      if (options_.worker_nice > 0) {
        // Niceness is per thread on Linux; threads this one starts (x264's) inherit it.
        errno = 0;
        int now = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
        if (errno == 0) {
          ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()),
                        std::min(19, now + options_.worker_nice));
        }
      }
      WorkerLoop();
    });
  }
  expiry_ = std::thread([this] {
    SetCurrentThreadName("queue-expiry");
    ExpiryLoop();
  });
}

Admission::~Admission() {
  Shutdown(std::chrono::milliseconds(0));
  work_cv_.SignalAll();
  for (auto& worker : workers_) worker.join();
  expiry_.join();
}

Status Admission::Submit(std::shared_ptr<Job> job) {
  MutexLock lock(&mu_);
  if (stopping_) return UnavailableError("the service is shutting down");
  int free = options_.capacity - running_ - static_cast<int>(line_.size());
  if (free <= 0 && static_cast<int>(line_.size()) >= options_.max_waiting) {
    return ResourceExhaustedError("every browser is busy and " + std::to_string(line_.size()) +
                                  " captures are waiting, the most this service queues");
  }
  job->enqueued = Clock::now();
  line_.push_back(std::move(job));
  work_cv_.Signal();
  return Status::Ok();
}

bool Admission::Remove(const Job* job) {
  MutexLock lock(&mu_);
  auto it = std::find_if(line_.begin(), line_.end(), [&](const auto& j) { return j.get() == job; });
  if (it == line_.end()) return false;
  line_.erase(it);
  return true;
}

int Admission::running() const {
  MutexLock lock(&mu_);
  return running_;
}

int Admission::waiting() const {
  MutexLock lock(&mu_);
  return static_cast<int>(line_.size());
}

int Admission::RetryAfterSeconds() const {
  MutexLock lock(&mu_);
  Clock::time_point now = Clock::now();
  auto first_recent = std::find_if(finished_.begin(), finished_.end(),
                                   [&](Clock::time_point t) { return now - t <= kDrainWindow; });
  const int64_t recent = std::distance(first_recent, finished_.end());
  if (recent == 0) {
    return static_cast<int>(std::clamp<int64_t>(
        std::chrono::duration_cast<std::chrono::seconds>(options_.max_wait).count(), 1, 60));
  }
  // The rate over the time the line has been draining, not over the whole window: after an
  // idle spell, 4 captures finished in the last second drain 4 a second, not 4 a minute
  // (which said 45-60 s while the line moved at 2-4/s).
  const double span = std::clamp(std::chrono::duration<double>(now - *first_recent).count(), 1.0,
                                 static_cast<double>(kDrainWindow.count()));
  double per_second = static_cast<double>(recent) / span;
  double seconds = static_cast<double>(line_.size() + 1) / per_second;
  return static_cast<int>(std::clamp(std::ceil(seconds), 1.0, 60.0));
}

void Admission::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      MutexLock lock(&mu_);
      while (line_.empty() && !stopping_) work_cv_.Wait(&mu_);
      if (line_.empty()) return;  // Stopping, and nothing left.
      job = std::move(line_.front());
      line_.pop_front();
      ++running_;
    }
    job->run(Clock::now() - job->enqueued);
    {
      MutexLock lock(&mu_);
      --running_;
      Clock::time_point now = Clock::now();
      finished_.push_back(now);
      while (!finished_.empty() && now - finished_.front() > kDrainWindow) finished_.pop_front();
    }
    idle_cv_.SignalAll();
  }
}

void Admission::ExpiryLoop() {
  mu_.Lock();
  while (!stopping_) {
    expiry_cv_.WaitFor(&mu_, std::chrono::milliseconds(50));
    Clock::time_point now = Clock::now();
    std::vector<std::shared_ptr<Job>> expired;
    for (auto it = line_.begin(); it != line_.end();) {
      if (now - (*it)->enqueued >= options_.max_wait) {
        expired.push_back(std::move(*it));
        it = line_.erase(it);
      } else {
        ++it;
      }
    }
    if (expired.empty()) continue;
    // Rejecting posts an answer to the HTTP thread: not under the lock.
    mu_.Unlock();
    for (const auto& job : expired) {
      job->reject(ResourceExhaustedError(
          "the capture waited " + std::to_string(options_.max_wait.count()) +
          " ms for a free browser, the longest this service lets a capture wait"));
    }
    mu_.Lock();
  }
  mu_.Unlock();
}

int Admission::Shutdown(std::chrono::milliseconds grace) {
  std::deque<std::shared_ptr<Job>> rejected;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    rejected.swap(line_);
    work_cv_.SignalAll();
    expiry_cv_.SignalAll();
  }
  for (const auto& job : rejected) job->reject(UnavailableError("the service is shutting down"));
  const Clock::time_point deadline = Clock::now() + grace;
  MutexLock lock(&mu_);
  while (running_ != 0) {
    if (!idle_cv_.WaitUntil(&mu_, deadline)) break;  // The grace period is over.
  }
  return running_;
}

}  // namespace pagereel::serve
