#include "serve/browser_pool.h"

#include <algorithm>

#include "base/process_memory.h"

namespace pagereel::serve {

BrowserPool::BrowserPool(const PoolOptions& options) : options_(options) {}

BrowserPool::~BrowserPool() {
  std::vector<std::unique_ptr<Slot>> slots;
  {
    std::lock_guard lock(mu_);
    slots.swap(slots_);
  }
}

Status BrowserPool::Start() {
  std::lock_guard lock(mu_);
  return LaunchLocked().status();
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
  std::unique_lock lock(mu_);
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
  pid_t measure = 0;  // A browser whose memory to check, outside the lock (a /proc walk).
  {
    std::lock_guard lock(mu_);
    --slot->in_flight;
    ++slot->done;
    if (!slot->retiring && options_.recycle_after > 0 && slot->done >= options_.recycle_after) {
      slot->retiring = true;
      ++stats_.recycled;
    }
    if (!slot->retiring && options_.rss_limit_bytes > 0 && slot->done % 10 == 0) {
      measure = slot->browser->pid();
    }
    unused = CollectLocked();
  }
  if (measure != 0 && GroupResidentBytes({measure})[measure] > options_.rss_limit_bytes) {
    std::lock_guard lock(mu_);
    // Found again by its process: the slot may have gone meanwhile.
    for (const auto& s : slots_) {
      if (s->browser->pid() == measure && !s->retiring) {
        s->retiring = true;
        ++stats_.recycled;
      }
    }
    std::vector<std::unique_ptr<Slot>> more = CollectLocked();
    for (auto& m : more) unused.push_back(std::move(m));
  }
  // `unused` goes out of scope here: browsers are closed without the lock held.
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
  std::lock_guard lock(mu_);
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) {
    return !slot->retiring && slot->browser->client().connection_status().ok();
  });
}

PoolStats BrowserPool::Stats() const {
  std::vector<pid_t> groups;
  PoolStats stats;
  {
    std::lock_guard lock(mu_);
    stats = stats_;
    stats.browsers = static_cast<int>(slots_.size());
    for (const auto& slot : slots_) groups.push_back(slot->browser->pid());
  }
  for (const auto& [group, bytes] : GroupResidentBytes(groups)) stats.browsers_rss_bytes += bytes;
  return stats;
}

void BrowserPool::KillAll() {
  std::lock_guard lock(mu_);
  for (const auto& slot : slots_) slot->browser->Kill();
}

}  // namespace pagereel::serve
