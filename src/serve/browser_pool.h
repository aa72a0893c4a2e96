// BrowserPool: the service's browsers. Each takes up to `per_browser` captures at once.
// A browser is retired after `recycle_after` captures or once its processes' resident
// memory passes `rss_limit_bytes`: it takes no new capture, finishes those it has, and is
// then closed, while a fresh one takes its share; no capture fails for it. A browser that
// crashed fails only the captures it was running (they see it); it is replaced at once.
// While captures run, a watch thread ("renderer-watch") looks at every renderer four times a
// second and kills one whose resident memory passes `renderer_limit_bytes`: a page can grow
// by gigabytes within one capture (6.1 GB in 12 s, issue 20), far faster than retiring
// browsers between captures can help. Only that page's capture fails (each capture's
// context has renderers of its own); it sees its renderer crash.
//
// Thread-safe.
#ifndef PAGEREEL_SERVE_BROWSER_POOL_H_
#define PAGEREEL_SERVE_BROWSER_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "browser/browser.h"

namespace pagereel::serve {

struct PoolOptions {
  int browsers = 1;
  int per_browser = 2;
  int64_t recycle_after = 1000;       // Captures; 0: never.
  int64_t rss_limit_bytes = 1LL << 30;  // Of one browser's process tree; 0: no limit.
  // Of one renderer while a capture runs; past it the renderer is killed. 0: no limit.
  int64_t renderer_limit_bytes = 2LL << 30;
  // Told of each renderer killed, from the watch thread: a sentence for the log.
  std::function<void(const std::string&)> on_renderer_killed;
  browser::LaunchOptions launch;
};

struct PoolStats {
  int browsers = 0;         // Running now, retiring ones included.
  int64_t launched = 0;
  int64_t crashed = 0;      // Replaced because they died.
  int64_t recycled = 0;     // Retired for age or memory.
  int64_t renderers_killed = 0;  // Over renderer_limit_bytes while a capture ran.
  // Of every browser's process tree, as measured after the latest capture (at most once a
  // second: a walk of /proc, which Stats() must not do on the HTTP thread).
  int64_t browsers_rss_bytes = 0;
};

class BrowserPool {
 public:
  class Lease;

  explicit BrowserPool(const PoolOptions& options);
  ~BrowserPool();
  BrowserPool(const BrowserPool&) = delete;
  BrowserPool& operator=(const BrowserPool&) = delete;

  // Starts watching renderers; with FirstBrowser::kNow also launches the first browser, so
  // a service that cannot start a browser fails at once. A pool started kOnDemand launches
  // its first browser on its first Acquire() (serve's browsers for GIFs and clips, which
  // many services never make).
  enum class FirstBrowser { kNow, kOnDemand };
  Status Start(FirstBrowser first = FirstBrowser::kNow);

  // A browser with room for one more capture (launching one when needed).
  Result<Lease> Acquire() EXCLUDES(mu_);

  // True when a browser is running and healthy (for /readyz).
  bool Ready() const EXCLUDES(mu_);
  PoolStats Stats() const EXCLUDES(mu_);  // Cheap: no /proc walk.

  // Kills every browser now (shutdown after the grace period).
  void KillAll() EXCLUDES(mu_);

 private:
  // Its fields are protected by mu_ (the analysis cannot name the pool's mutex here).
  struct Slot {
    std::unique_ptr<browser::Browser> browser;
    int in_flight = 0;
    int64_t done = 0;
    bool retiring = false;
    bool counted_crash = false;
  };
  void Release(Slot* slot) EXCLUDES(mu_);
  // Launches a browser into a new slot.
  Result<Slot*> LaunchLocked() REQUIRES(mu_);
  // Retires dead browsers; returns slots nobody uses any more, to be destroyed unlocked.
  std::vector<std::unique_ptr<Slot>> CollectLocked() REQUIRES(mu_);
  // Measures the browsers' memory (one /proc walk, without the lock) and retires those
  // over the limit; returns slots to destroy. At most once a second.
  std::vector<std::unique_ptr<Slot>> MeasureMemory() EXCLUDES(mu_);
  // The watch thread's loop (see the top of this file), until the pool is destroyed.
  void WatchRenderers() EXCLUDES(mu_);

  const PoolOptions options_;
  std::atomic<int64_t> next_measure_ns_{0};  // Steady clock; claimed by one thread.
  mutable Mutex mu_;
  std::vector<std::unique_ptr<Slot>> slots_ GUARDED_BY(mu_);
  PoolStats stats_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  CondVar watch_cv_;   // Wakes the watch thread to stop.
  std::thread watch_;  // Started by Start(), joined by the destructor.
};

class BrowserPool::Lease {
 public:
  Lease(Lease&& other) noexcept : pool_(other.pool_), slot_(other.slot_) { other.slot_ = nullptr; }
  Lease& operator=(Lease&&) = delete;
  ~Lease() {
    if (slot_ != nullptr) pool_->Release(slot_);
  }
  browser::Browser& browser() { return *slot_->browser; }

 private:
  friend class BrowserPool;
  Lease(BrowserPool* pool, Slot* slot) : pool_(pool), slot_(slot) {}
  BrowserPool* pool_;
  Slot* slot_;
};

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_BROWSER_POOL_H_
