// Test-only: real receivers for live's outputs on 127.0.0.1 (ffmpeg processes the test
// starts and stops) and a free port for them. Header-only, for the test binaries that share it.
#ifndef PAGEREEL_LIVE_RECEIVER_TESTING_H_
#define PAGEREEL_LIVE_RECEIVER_TESTING_H_

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace pagereel::live {

// A port nobody uses now on 127.0.0.1 (the kernel's pick, released again).
inline int FreePort(int type) {
  int fd = ::socket(AF_INET, type, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// An ffmpeg process, interrupted (as Ctrl-C would) and reaped by the destructor.
class Receiver {
 public:
  explicit Receiver(std::vector<std::string> args) {
    // A short probe: ffmpeg otherwise buffers 5 s of a live input before writing anything.
    args.insert(args.begin(), {"ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-probesize",
                               "65536", "-analyzeduration", "500000"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawnp(&pid_, "ffmpeg", nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~Receiver() { Stop(); }
  bool running() const { return pid_ > 0; }
  // As a machine that stalls would: alive, but reading and answering nothing until Resume().
  void Pause() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void Resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }
  // As a crash would: no goodbye to the sender.
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // Lets ffmpeg finish the file it writes; killed if it does not within 10 s. With
  // `wait_for_end`, first gives it 5 s to see the sender close and end by itself, having read
  // everything that arrived (an interrupted ffmpeg may leave the last packets unread).
  void Stop(bool wait_for_end = false) {
    if (pid_ <= 0) return;
    for (int i = 0; wait_for_end && i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGINT);
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_RECEIVER_TESTING_H_
