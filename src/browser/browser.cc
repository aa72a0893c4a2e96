#include "browser/browser.h"

#include <fcntl.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/thread.h"
#include "base/unique_fd.h"
#include "cdp/json_util.h"
#include "cdp/pipe_transport.h"

namespace pagereel::browser {

namespace {

// Process groups of live browsers, for KillAllBrowsers() from a signal handler, which may
// not lock or allocate: a list of slots that only grows, each slot reused once free.
// Nodes are never freed, so a handler can walk the list while other threads add to it.
struct GroupSlot {
  std::atomic<pid_t> pgid{0};
  GroupSlot* next = nullptr;  // Set before the node is published, never changed after.
};
std::atomic<GroupSlot*> g_group_slots{nullptr};

void RegisterGroup(pid_t pgid) {
  for (GroupSlot* slot = g_group_slots.load(); slot != nullptr; slot = slot->next) {
    pid_t expected = 0;
    if (slot->pgid.compare_exchange_strong(expected, pgid)) return;
  }
  auto* slot = new GroupSlot;  // Lives as long as the process (see above).
  slot->pgid = pgid;
  slot->next = g_group_slots.load();
  while (!g_group_slots.compare_exchange_weak(slot->next, slot)) {
  }
}

void UnregisterGroup(pid_t pgid) {
  for (GroupSlot* slot = g_group_slots.load(); slot != nullptr; slot = slot->next) {
    pid_t expected = pgid;
    if (slot->pgid.compare_exchange_strong(expected, 0)) return;
  }
}

// The thread every browser is forked from. PR_SET_PDEATHSIG fires when the thread that
// forked the child exits, not the process: a browser forked from a short-lived worker
// thread (a service's request thread, say) would be killed with that thread. This one
// lives as long as the process, so the signal fires exactly when pagereel dies.
class LauncherThread {
 public:
  static LauncherThread& Get() {
    static LauncherThread* launcher = new LauncherThread;  // Never destroyed, see above.
    return *launcher;
  }

  // Runs `task` on the launcher thread and waits for it to finish.
  void Run(const std::function<void()>& task) {
    std::packaged_task<void()> job(task);
    std::future<void> done = job.get_future();
    {
      MutexLock lock(&mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.Signal();
    done.get();
  }

 private:
  LauncherThread() {
    std::thread([this] {
      SetCurrentThreadName("browser-launch");
      for (;;) {
        std::packaged_task<void()> job;
        {
          MutexLock lock(&mu_);
          while (jobs_.empty()) cv_.Wait(&mu_);
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    }).detach();
  }

  Mutex mu_;
  CondVar cv_;
  std::deque<std::packaged_task<void()>> jobs_ GUARDED_BY(mu_);
};

// The switches docs/architecture.md ("Driving the browser") gives the reasons for: no sandbox
// (we run as a service user, often root), no GPU, no traffic of Chromium's own, a throwaway
// profile; plus what begin-frame control needs.
std::vector<std::string> BrowserArgs(const std::string& binary, const std::string& profile,
                                     const LaunchOptions& options) {
  std::vector<std::string> args = {
      binary,
      "--remote-debugging-pipe",
      "--user-data-dir=" + profile,
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-breakpad",
      "--disable-extensions",
      "--hide-scrollbars",
      // Without it play() rejects and AudioContext.resume() never settles (a page waiting
      // on it hangs): pages start their sound without a user's gesture (audio/README.md).
      "--autoplay-policy=no-user-gesture-required",
      "--force-color-profile=srgb",
      // Same font rasterisation on every host, so frames compare across machines.
      "--font-render-hinting=none",
  };
  if (options.audio == LaunchOptions::Audio::kMuted) args.push_back("--mute-audio");
  // The switches Chromium's own headless rendering tests use with begin-frame control.
  // Each removes a way for a frame to depend on timing or on the frames drawn before it:
  // with threaded animation, CSS and Web Animations started during frames run without
  // display updates get no start time until a frame is drawn, and compositor-side
  // animation can draw a frame without the page's animation frame; checker-imaging
  // rasters large images later, after they decode; image-animation resync restarts GIFs.
  // Targets that draw on Chromium's own clock work with them too (kPerTarget, kNone), but
  // the first only where begin-frame control needs it (see FrameControl::kNone).
  if (options.frame_control != FrameControl::kNone) {
    args.push_back("--run-all-compositor-stages-before-draw");
  }
  args.push_back("--disable-threaded-animation");
  args.push_back("--disable-checker-imaging");
  args.push_back("--disable-image-animation-resync");
  args.push_back("--disable-new-content-rendering-timeout");
  if (options.frame_control == FrameControl::kBeginFrame) {
    args.push_back("--enable-begin-frame-control");
  }
  // Frames of other sites stay in the page's renderer process, where its virtual time,
  // time zone and injected script apply (each of them is per process).
  args.push_back("--disable-site-isolation-trials");
  args.push_back("--disable-features=IsolateOrigins,site-per-process");
  for (const auto& extra : options.extra_args) args.push_back(extra);
  args.push_back("about:blank");
  return args;
}

std::string TailOfFile(const std::filesystem::path& path, size_t max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    lines.push_back(line);
    if (lines.size() > max_lines) lines.erase(lines.begin());
  }
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

}  // namespace

Result<std::string> FindBrowserBinary(const std::string& requested) {
  std::string path = requested;
  if (path.empty()) {
    const char* env = std::getenv("PAGEREEL_BROWSER");
    path = (env != nullptr && *env != '\0') ? env : kDefaultBrowserPath;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    return NotFoundError("no browser at " + path +
                         ": install Debian's chromium-headless-shell (sudo apt-get install "
                         "chromium-headless-shell), or name the binary with "
                         "PAGEREEL_BROWSER=/path/to/chromium-headless-shell");
  }
  return path;
}

Result<std::unique_ptr<Browser>> Browser::Launch(const LaunchOptions& options) {
  PR_ASSIGN_OR_RETURN(std::string binary, FindBrowserBinary(options.binary));

  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::string pattern = (tmp / "pagereel-profile-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return ErrnoError("creating a browser profile folder in " + tmp.string(), errno);
  }
  std::filesystem::path profile = pattern;
  auto cleanup_profile = [&] { std::filesystem::remove_all(profile, ec); };

  // Everything the child needs is prepared before fork(): after it, only
  // async-signal-safe calls are allowed, since other threads may hold locks.
  std::vector<std::string> args = BrowserArgs(binary, profile.string(), options);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Our environment with the caller's entries in place of any of the same name.
  std::vector<std::string> environment = options.environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    const bool replaced = std::any_of(options.environment.begin(), options.environment.end(),
                                      [&](const std::string& ours) { return ours.starts_with(name); });
    if (!replaced) environment.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string log_path = (profile / "browser-stderr.log").string();

  int to_browser[2];
  int from_browser[2];
  if (::pipe2(to_browser, O_CLOEXEC) != 0) {
    cleanup_profile();
    return ErrnoError("creating the DevTools pipe", errno);
  }
  if (::pipe2(from_browser, O_CLOEXEC) != 0) {
    ::close(to_browser[0]);
    ::close(to_browser[1]);
    cleanup_profile();
    return ErrnoError("creating the DevTools pipe", errno);
  }
  UniqueFd our_write(to_browser[1]);
  UniqueFd their_read(to_browser[0]);
  UniqueFd our_read(from_browser[0]);
  UniqueFd their_write(from_browser[1]);
  UniqueFd log_fd(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  UniqueFd null_fd(::open("/dev/null", O_RDWR | O_CLOEXEC));
  pid_t parent = ::getpid();
  const int nice_increment = std::clamp(options.nice, 0, 19);

  pid_t pid = -1;
  int fork_errno = 0;
  LauncherThread::Get().Run([&] {
    pid = ::fork();
    if (pid < 0) {
      fork_errno = errno;
      return;
    }
    if (pid > 0) {
      ::setpgid(pid, pid);  // Also from the parent, so the group exists before we might kill it.
      RegisterGroup(pid);
      return;
    }
    // Child: own process group, so the whole tree can be killed at once; and die with us,
    // so a pagereel killed with SIGKILL leaves no browser behind.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::signal(SIGPIPE, SIG_DFL);  // pagereel ignores it; the browser expects the default.
    if (nice_increment > 0) {
      if (::nice(nice_increment) == -1) {
        // Running at the parent's priority is no reason not to run.
      }
      // Chromium raises its display threads to nice -8 where it is allowed to, which would
      // put them above the threads this niceness is meant to favour: it may not go back up.
      // Without CAP_SYS_NICE (dropped from the bounding set, so also for root) and with
      // RLIMIT_NICE at the new niceness, setpriority below it fails and Chromium carries on.
      ::prctl(PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0);
      errno = 0;
      const int now = ::getpriority(PRIO_PROCESS, 0);
      if (errno == 0) {
        const rlimit floor{static_cast<rlim_t>(20 - now), static_cast<rlim_t>(20 - now)};
        ::setrlimit(RLIMIT_NICE, &floor);
      }
    }
    // dup2 clears close-on-exec on the new descriptors 0-4. Every source is first moved
    // above 9, so no dup2 can overwrite a source that is still to be copied (any of them
    // may itself be 0-4, e.g. when pagereel was started without stdin).
    int r = ::fcntl(their_read.get(), F_DUPFD_CLOEXEC, 10);
    int w = ::fcntl(their_write.get(), F_DUPFD_CLOEXEC, 10);
    int null_out = ::fcntl(null_fd.get(), F_DUPFD_CLOEXEC, 10);
    int err_out = log_fd.valid() ? ::fcntl(log_fd.get(), F_DUPFD_CLOEXEC, 10) : null_out;
    if (r < 0 || w < 0 || null_out < 0 || err_out < 0 || ::dup2(null_out, 0) < 0 ||
        ::dup2(null_out, 1) < 0 || ::dup2(err_out, 2) < 0 || ::dup2(r, 3) < 0 ||
        ::dup2(w, 4) < 0) {
      ::_exit(127);
    }
    // Nothing else of pagereel's goes to the browser: a descriptor opened without
    // close-on-exec on another thread (a client's socket, a listener) would otherwise live
    // on in the browser and hold its connection or port open.
    ::close_range(5, ~0U, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  });
  if (pid < 0) {
    cleanup_profile();
    return ErrnoError("starting the browser", fork_errno);
  }
  their_read.reset();
  their_write.reset();

  auto transport = std::make_unique<cdp::PipeTransport>(std::move(our_write), std::move(our_read));
  auto client = std::make_unique<cdp::Client>(std::move(transport));
  std::unique_ptr<Browser> browser(new Browser(pid, profile, std::move(client)));

  // The browser answers once it is up; a binary that is not a browser, or one that fails
  // to start, is caught here with its own words.
  Result<cdp::Message> version = browser->client().Call("Browser.getVersion");
  if (!version.ok()) {
    return UnavailableError("the browser " + binary + " did not start: " +
                            browser->ExitDescription());
  }
  Result<std::string> product = cdp::GetString(*version, {"result", "product"});
  Result<std::string> user_agent = cdp::GetString(*version, {"result", "userAgent"});
  if (!product.ok() || !user_agent.ok()) {
    return UnavailableError("the browser " + binary + " did not say what it is (Browser.getVersion)");
  }
  browser->product_ = *product;
  browser->user_agent_ = *user_agent;
  return browser;
}

Browser::Browser(pid_t pid, std::filesystem::path profile_dir, std::unique_ptr<cdp::Client> client)
    : pid_(pid), profile_dir_(std::move(profile_dir)), client_(std::move(client)) {}

Browser::~Browser() {
  Kill();
  client_.reset();
  std::error_code ec;
  std::filesystem::remove_all(profile_dir_, ec);
}

Result<cdp::Message> Browser::BeginFrame(std::string_view session_id,
                                         std::string_view params_json,
                                         std::chrono::milliseconds timeout) {
  MutexLock lock(&begin_frame_mu_);
  return client_->Call("HeadlessExperimental.beginFrame", params_json, session_id, timeout);
}

void Browser::Kill() {
  {
    MutexLock lock(&exit_mu_);
    if (!reaped_) {
      ::kill(-pid_, SIGKILL);
      Reap(/*block=*/true);
    }
  }
  client_->Close();
}

bool Browser::Reap(bool block) {
  if (reaped_) return true;
  for (;;) {
    pid_t got = ::waitpid(pid_, &wait_status_, block ? 0 : WNOHANG);
    if (got == pid_) {
      reaped_ = true;
      UnregisterGroup(pid_);
      // Helpers of the browser (renderer, GPU, zygote) share its group; make sure none
      // outlives the main process.
      ::kill(-pid_, SIGKILL);
      return true;
    }
    if (got < 0 && errno == EINTR) continue;
    return false;
  }
}

std::string Browser::ExitDescription() {
  MutexLock lock(&exit_mu_);
  // Give a dying browser a moment to finish exiting, so the description is complete.
  for (int i = 0; i < 50 && !Reap(/*block=*/false); ++i) {
    exit_mu_.Unlock();
    ::usleep(10'000);
    exit_mu_.Lock();
  }
  std::ostringstream out;
  if (!reaped_) {
    out << "still running";
  } else if (WIFEXITED(wait_status_)) {
    out << "exited with status " << WEXITSTATUS(wait_status_);
  } else if (WIFSIGNALED(wait_status_)) {
    int sig = WTERMSIG(wait_status_);
    out << "killed by signal " << sig << " (" << strsignal(sig) << ")";
  }
  std::string tail = TailOfFile(profile_dir_ / "browser-stderr.log", 5);
  if (!tail.empty()) out << "; its last words:" << tail;
  return out.str();
}

int64_t Browser::LogPosition() const {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(profile_dir_ / "browser-stderr.log", ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

std::optional<std::string> Browser::OutOfMemorySince(int64_t position) const {
  // Blink's out-of-memory handler (third_party/blink/renderer/bindings/core/v8/v8_oom.cc)
  // logs "V8 javascript OOM (<where>)." for a full heap, "V8 process OOM" otherwise, then
  // crashes the renderer (seen on headless-shell 156: Target.targetCrashed said "crashed",
  // errorCode 5).
  constexpr int64_t kMaxRead = 1 << 20;
  std::ifstream in(profile_dir_ / "browser-stderr.log", std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const int64_t end = static_cast<int64_t>(in.tellg());
  const int64_t from = std::max(std::min(position, end), end - kMaxRead);
  in.seekg(from);
  std::string line;
  while (std::getline(in, line)) {
    for (std::string_view mark : {"V8 javascript OOM", "V8 process OOM"}) {
      if (size_t at = line.find(mark); at != std::string::npos) return line.substr(at);
    }
  }
  return std::nullopt;
}

std::vector<pid_t> LiveBrowserGroups() {
  std::vector<pid_t> groups;
  for (GroupSlot* slot = g_group_slots.load(); slot != nullptr; slot = slot->next) {
    if (pid_t pgid = slot->pgid.load(); pgid > 0) groups.push_back(pgid);
  }
  return groups;
}

void KillAllBrowsers() {
  for (GroupSlot* slot = g_group_slots.load(); slot != nullptr; slot = slot->next) {
    pid_t pgid = slot->pgid.load();
    if (pgid > 0) ::kill(-pgid, SIGKILL);
  }
}

}  // namespace pagereel::browser
