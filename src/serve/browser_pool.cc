#include "serve/browser_pool.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "base/process_memory.h"

namespace pagereel::serve {

BrowserPool::BrowserPool(const PoolOptions& options) : options_(options) {}

BrowserPool::~BrowserPool() {
  std::vector<std::unique_ptr<Slot>> slots;
  {
    MutexLock lock(&mu_);
    slots.swap(slots_);
  }
}

Status BrowserPool::Start() {
  {
    MutexLock lock(&mu_);
    PR_RETURN_IF_ERROR(LaunchLocked().status());
  }
  MeasureMemory();  // So the first figures are not zero.
  return Status::Ok();
}

Result<BrowserPool::Slot*> BrowserPool::LaunchLocked() {
  PR_ASSIGN_OR_RETURN(std::unique_ptr<browser::Browser> launched,
                      browser::Browser::Launch(options_.launch));
  auto slot = std::make_unique<Slot>();
  slot->browser = std::move(launched);
  slots_.push_back(std::move(slot));
  ++stats_.launched;
  return slots_.back().get();
}

Result<BrowserPool::Lease> BrowserPool::Acquire() {
  std::vector<std::unique_ptr<Slot>> unused;
  MutexLock lock(&mu_);
  unused = CollectLocked();
  Slot* best = nullptr;
  int active = 0;
  for (const auto& slot : slots_) {
    if (slot->retiring) continue;
    ++active;
    if (slot->in_flight < options_.per_browser &&
        (best == nullptr || slot->in_flight < best->in_flight)) {
      best = slot.get();
    }
  }
  if (best == nullptr || (best->in_flight > 0 && active < options_.browsers)) {
    // Launching takes a few hundred ms; other captures wait for the lock meanwhile, which
    // happens only when the pool grows or replaces a browser.
    Result<Slot*> launched = LaunchLocked();
    if (launched.ok()) {
      best = *launched;
    } else if (best == nullptr) {
      return launched.status();
    }
  }
  ++best->in_flight;
  return Lease(this, best);
}

void BrowserPool::Release(Slot* slot) {
  std::vector<std::unique_ptr<Slot>> unused;
  {
    MutexLock lock(&mu_);
    --slot->in_flight;
    ++slot->done;
    if (!slot->retiring && options_.recycle_after > 0 && slot->done >= options_.recycle_after) {
      slot->retiring = true;
      ++stats_.recycled;
    }
    unused = CollectLocked();
  }
  for (auto& more : MeasureMemory()) unused.push_back(std::move(more));
  // `unused` goes out of scope here: browsers are closed without the lock held.
}

std::vector<std::unique_ptr<BrowserPool::Slot>> BrowserPool::MeasureMemory() {
  constexpr int64_t kEveryNs = 1'000'000'000;
  int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  int64_t due = next_measure_ns_.load();
  if (now < due || !next_measure_ns_.compare_exchange_strong(due, now + kEveryNs)) return {};
  std::vector<pid_t> groups;
  {
    MutexLock lock(&mu_);
    for (const auto& slot : slots_) groups.push_back(slot->browser->pid());
  }
  std::map<pid_t, int64_t> rss = GroupResidentBytes(groups);
  MutexLock lock(&mu_);
  stats_.browsers_rss_bytes = 0;
  for (const auto& [group, bytes] : rss) stats_.browsers_rss_bytes += bytes;
  if (options_.rss_limit_bytes <= 0) return {};
  // Found again by their processes: slots may have gone meanwhile. A browser that has
  // made no capture yet is kept: its replacement would start just as big.
  for (const auto& slot : slots_) {
    auto it = rss.find(slot->browser->pid());
    if (!slot->retiring && slot->done > 0 && it != rss.end() &&
        it->second > options_.rss_limit_bytes) {
      slot->retiring = true;
      ++stats_.recycled;
    }
  }
  return CollectLocked();
}

std::vector<std::unique_ptr<BrowserPool::Slot>> BrowserPool::CollectLocked() {
  std::vector<std::unique_ptr<Slot>> unused;
  for (auto& slot : slots_) {
    if (!slot->browser->client().connection_status().ok() && !slot->counted_crash) {
      slot->retiring = true;
      slot->counted_crash = true;
      ++stats_.crashed;
    }
  }
  for (auto it = slots_.begin(); it != slots_.end();) {
    if ((*it)->retiring && (*it)->in_flight == 0) {
      unused.push_back(std::move(*it));
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
  return unused;
}

bool BrowserPool::Ready() const {
  MutexLock lock(&mu_);
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) {
    return !slot->retiring && slot->browser->client().connection_status().ok();
  });
}

PoolStats BrowserPool::Stats() const {
  MutexLock lock(&mu_);
  PoolStats stats = stats_;
  stats.browsers = static_cast<int>(slots_.size());
  return stats;
}

void BrowserPool::KillAll() {
  MutexLock lock(&mu_);
  for (const auto& slot : slots_) slot->browser->Kill();
}

}  // namespace pagereel::serve
