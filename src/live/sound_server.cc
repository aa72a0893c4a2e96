#include "live/sound_server.h"

#include <fcntl.h>
#if PAGEREEL_HAVE_PULSE
#include <pulse/error.h>
#include <pulse/simple.h>
#endif
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "base/thread.h"
#include "encode/sound.h"

namespace pagereel::live {

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// How long pulseaudio may take to answer on its socket (it answered in 0.1-0.3 s here).
constexpr milliseconds kStartTimeout{10'000};
// A capture reads this many samples at a time (10 ms): the sound reaches its buffer in
// steps this size, well under the buffer's cushion.
constexpr int kFragmentSamples = 480;

std::string SinkName(int sink) { return "pagereel-" + std::to_string(sink); }

// The daemon's log, in its folder.
constexpr char kLogName[] = "pulseaudio.log";

// `name` found on $PATH (or as given, with a slash), or empty.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t at = 0;
  while (at <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', at), dirs.size());
    const std::string candidate = dirs.substr(at, end - at) + "/" + name;
    if (end > at && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return "";
}

bool Answers(const std::string& socket_path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

Result<std::unique_ptr<SoundServer>> SoundServer::Start(int sinks) {
#if !PAGEREEL_HAVE_PULSE
  // Built where libpulse-dev was missing: shows run, silent (CMakeLists.txt says so).
  (void)sinks;
  return NotFoundError("this pagereel was built without libpulse-simple, so its shows are silent: "
                       "install Debian's libpulse-dev and pulseaudio (scripts/install-deps.sh) and "
                       "build again");
#endif
  const char* requested = std::getenv("PAGEREEL_PULSEAUDIO");
  const std::string binary = FindProgram(requested != nullptr && *requested != '\0' ? requested : "pulseaudio");
  if (binary.empty()) {
    return NotFoundError("no pulseaudio to capture the sources' sound: install Debian's pulseaudio "
                         "(apt-get install pulseaudio), or name the binary with "
                         "PAGEREEL_PULSEAUDIO=/path/to/pulseaudio");
  }
  std::unique_ptr<SoundServer> server(new SoundServer());
  for (int k = 0; k < sinks; ++k) {
    Result<Daemon> daemon = StartDaemon(binary, k);
    if (!daemon.ok()) return daemon.status();  // ~SoundServer ends those already started.
    server->daemons_.push_back(std::move(daemon).value());
  }
  return server;
}

Result<SoundServer::Daemon> SoundServer::StartDaemon(const std::string& binary, int sink) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::string pattern = (tmp / "pagereel-sound-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return ErrnoError("creating a folder for the sound server", errno);
  const fs::path dir = pattern;
  // The browser plays at the server's default rate: 48 kHz float, as the show's sound is,
  // so nothing is resampled. No exit when idle: a show is silent for hours at a time.
  {
    std::ofstream conf(dir / "daemon.conf");
    conf << "default-sample-rate = 48000\nalternate-sample-rate = 48000\n"
            "default-sample-format = float32le\ndefault-sample-channels = 2\n"
            "exit-idle-time = -1\nflat-volumes = no\n";
  }
  const std::string socket_path = (dir / "native").string();
  // Debug level, with times: the log says when a browser's stream ran dry (GapFinder); it
  // is otherwise quiet while a show runs (a few lines per stream opened).
  std::vector<std::string> args = {binary, "-n", "--daemonize=no", "--use-pid-file=no",
                                   "--disable-shm=yes", "--log-target=stderr", "--log-level=debug",
                                   "--log-time=1",
                                   "-L", "module-native-protocol-unix socket=" + socket_path + " auth-anonymous=1",
                                   "-L", "module-null-sink sink_name=" + SinkName(sink) +
                                             " rate=48000 channels=2 format=float32le"};
  std::vector<std::string> env = {"HOME=" + dir.string(), "XDG_RUNTIME_DIR=" + dir.string(),
                                  "XDG_CONFIG_HOME=" + dir.string(), "PULSE_CONFIG=" + (dir / "daemon.conf").string(),
                                  "PATH=/usr/bin:/bin"};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string log_path = (dir / kLogName).string();
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const pid_t parent = ::getpid();
  // Forked from the thread that starts the show, which outlives it (the parent-death
  // signal follows the forking thread).
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (log_fd >= 0) ::close(log_fd);
    fs::remove_all(dir, ec);
    return ErrnoError("starting pulseaudio", errno);
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    ::close_range(3, ~0U, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  ::setpgid(pid, pid);
  Daemon daemon{pid, dir};
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (!Answers(socket_path)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid || std::chrono::steady_clock::now() > deadline) {
      std::ifstream log(log_path);
      std::string line, last;
      while (std::getline(log, line)) {
        if (line.find(" E: ") != std::string::npos) last = line;
      }
      Stop(daemon);
      return UnavailableError("pulseaudio did not start" + (last.empty() ? std::string() : ": " + last));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return daemon;
}

void SoundServer::Stop(const Daemon& daemon) {
  ::kill(-daemon.pid, SIGKILL);
  ::waitpid(daemon.pid, nullptr, 0);
  std::error_code ec;
  fs::remove_all(daemon.dir, ec);
}

SoundServer::~SoundServer() {
  for (const Daemon& daemon : daemons_) Stop(daemon);
}

std::string SoundServer::address(int sink) const {
  return "unix:" + (daemons_.at(static_cast<size_t>(sink)).dir / "native").string();
}

std::string SoundServer::LogOf(int sink) const {
  return (daemons_.at(static_cast<size_t>(sink)).dir / kLogName).string();
}

std::vector<std::string> SoundServer::BrowserEnvironment(int sink) const {
  // The browser asks for 32 ms of buffer (tlength; the sink then runs 10.67 ms blocks), and
  // at nice +10 beside two CPU hogs it let that run dry 0-5 times in 30 s, each a gap of
  // 8-29 ms on air; asked for 100 ms (libpulse reads PULSE_LATENCY_MSEC for every stream
  // it opens), none in the same runs (bench/RESULTS.md, "live sound: gaps beside two CPU
  // hogs"). The sound then reaches the capture ~50 ms later: kSoundLatencySamples has it.
  // PULSE_LATENCY_MSEC in pagereel's own environment goes to the browsers instead
  // (bench/live/sound_gaps.sh compares 32 with 100).
  std::vector<std::string> env = {"PULSE_SERVER=" + address(sink), "PULSE_SINK=" + SinkName(sink)};
  if (std::getenv("PULSE_LATENCY_MSEC") == nullptr) {
    env.push_back("PULSE_LATENCY_MSEC=" + std::to_string(kBrowserLatencyMs));
  }
  return env;
}

std::string SoundServer::MonitorOf(int sink) { return SinkName(sink) + ".monitor"; }

SoundCapture::SoundCapture(std::string address, std::string monitor, std::string log, SoundBuffer* buffer,
                           int index)
    : address_(std::move(address)), monitor_(std::move(monitor)), log_(std::move(log)), buffer_(buffer) {
  thread_ = std::jthread([this, index](std::stop_token stop) {
    SetCurrentThreadName("live-sound-" + std::to_string(index));
    Loop(stop);
  });
}

SoundCapture::~SoundCapture() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

std::string SoundCapture::LastError() const {
  MutexLock lock(&mu_);
  return last_error_;
}

void SoundCapture::Loop(std::stop_token stop) {
#if !PAGEREEL_HAVE_PULSE
  (void)stop;
  MutexLock lock(&mu_);
  last_error_ = "built without libpulse-simple";
#else
  const pa_sample_spec spec{PA_SAMPLE_FLOAT32LE, encode::kSoundRate, encode::kSoundChannels};
  pa_buffer_attr attr;
  attr.maxlength = static_cast<uint32_t>(-1);
  attr.tlength = attr.prebuf = attr.minreq = static_cast<uint32_t>(-1);
  attr.fragsize = kFragmentSamples * encode::kSoundChannels * sizeof(float);
  std::vector<float> fragment(static_cast<size_t>(kFragmentSamples) * encode::kSoundChannels);
  // The daemon's log: read after each fragment, from where the last read stopped. The log
  // line of a stream that ran dry is written before the silence it caused reaches us.
  GapFinder gaps;
  std::ifstream log(log_);
  std::string line, partial;
  auto read_log = [&] {
    while (std::getline(log, line)) {
      if (log.eof()) {  // No newline yet: the rest comes with a later read.
        partial += line;
        break;
      }
      gaps.Line(partial + line);
      partial.clear();
    }
    log.clear();  // At the end for now: the next read goes on from here.
  };
  milliseconds backoff{100};
  while (!stop.stop_requested()) {
    int error = 0;
    pa_simple* stream = pa_simple_new(address_.c_str(), "pagereel live", PA_STREAM_RECORD, monitor_.c_str(),
                                      monitor_.c_str(), &spec, nullptr, &attr, &error);
    if (stream == nullptr) {
      {
        MutexLock lock(&mu_);
        last_error_ = "cannot record " + monitor_ + " from " + address_ + ": " + pa_strerror(error);
      }
      for (auto waited = milliseconds(0); waited < backoff && !stop.stop_requested(); waited += milliseconds(20)) {
        std::this_thread::sleep_for(milliseconds(20));
      }
      backoff = std::min(backoff * 2, milliseconds(2'000));
      continue;
    }
    backoff = milliseconds(100);
    connected_ = true;
    while (!stop.stop_requested()) {
      if (pa_simple_read(stream, fragment.data(), fragment.size() * sizeof(float), &error) < 0) {
        MutexLock lock(&mu_);
        last_error_ = "recording " + monitor_ + " failed: " + pa_strerror(error);
        break;
      }
      read_log();
      buffer_->Put(fragment.data(), kFragmentSamples);
      if (const GapFinder::Found found = gaps.Samples(fragment.data(), kFragmentSamples); found.samples > 0) {
        buffer_->CountGaps(found.gaps, found.samples);
      }
    }
    connected_ = false;
    pa_simple_free(stream);
  }
#endif
}

}  // namespace pagereel::live
