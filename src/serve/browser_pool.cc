#include "serve/browser_pool.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/process_memory.h"
#include "base/thread.h"

namespace pagereel::serve {

namespace {

// How often the watch thread looks at the renderers while captures run.
constexpr std::chrono::milliseconds kWatchEvery{250};

struct Renderer {
  pid_t pid = 0;
  int64_t rss_bytes = 0;
};

// The renderers (processes started with --type=renderer) in `groups` holding more than
// `limit` resident bytes: one walk of /proc.
std::vector<Renderer> RenderersOver(const std::set<pid_t>& groups, int64_t limit) {
  std::vector<Renderer> over;
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    auto [end, parse_error] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (parse_error != std::errc() || end != name.data() + name.size()) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // After the command's name in parentheses: state, ppid, pgrp.
    const size_t paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(text.substr(paren + 1));
    std::string state;
    pid_t ppid = 0;
    pid_t group = 0;
    if (!(fields >> state >> ppid >> group) || !groups.contains(group)) continue;
    std::ifstream statm(entry.path() / "statm");
    int64_t size_pages = 0;
    int64_t resident_pages = 0;
    if (!(statm >> size_pages >> resident_pages) || resident_pages * page <= limit) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (args.find("--type=renderer") == std::string::npos) continue;
    over.push_back({pid, resident_pages * page});
  }
  return over;
}

}  // namespace

BrowserPool::BrowserPool(const PoolOptions& options) : options_(options) {}

BrowserPool::~BrowserPool() {
  std::vector<std::unique_ptr<Slot>> slots;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    watch_cv_.SignalAll();
    slots.swap(slots_);
  }
  if (watch_.joinable()) watch_.join();
}

Status BrowserPool::Start(FirstBrowser first) {
  if (first == FirstBrowser::kNow) {
    {
      MutexLock lock(&mu_);
      PR_RETURN_IF_ERROR(LaunchLocked().status());
    }
    MeasureMemory();  // So the first figures are not zero.
  }
  if (options_.renderer_limit_bytes > 0) watch_ = std::thread([this] { WatchRenderers(); });
  return Status::Ok();
}

void BrowserPool::WatchRenderers() {
  SetCurrentThreadName("renderer-watch");
  for (;;) {
    std::set<pid_t> groups;
    {
      MutexLock lock(&mu_);
      if (!stopping_) watch_cv_.WaitFor(&mu_, kWatchEvery);
      if (stopping_) return;
      bool busy = false;
      for (const auto& slot : slots_) {
        busy = busy || slot->in_flight > 0;
        groups.insert(slot->browser->pid());
      }
      if (!busy) continue;  // Pages grow only while they are captured.
    }
    std::vector<Renderer> over = RenderersOver(groups, options_.renderer_limit_bytes);
    for (const Renderer& renderer : over) {
      // Its page's capture sees its renderer crash (Inspector.targetCrashed) and fails.
      ::kill(renderer.pid, SIGKILL);
      if (options_.on_renderer_killed) {
        options_.on_renderer_killed("a page's renderer (pid " + std::to_string(renderer.pid) +
                                    ") held " + std::to_string(renderer.rss_bytes >> 20) +
                                    " MiB, more than the " +
                                    std::to_string(options_.renderer_limit_bytes >> 20) +
                                    " MiB a page may use (--renderer-memory-mb): it was killed, "
                                    "failing its capture");
      }
    }
    if (!over.empty()) {
      MutexLock lock(&mu_);
      stats_.renderers_killed += static_cast<int64_t>(over.size());
    }
  }
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
