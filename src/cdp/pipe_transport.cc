#include "cdp/pipe_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace pagereel::cdp {

namespace {

// A pipe read returns at most the pipe's buffer (64 KiB on Linux), so a larger chunk buys
// nothing and would leave every message holding that much spare memory.
constexpr size_t kReadChunk = 64 << 10;

}  // namespace

PipeTransport::PipeTransport(UniqueFd to_browser, UniqueFd from_browser)
    : to_browser_(std::move(to_browser)), from_browser_(std::move(from_browser)) {
  // A write to a browser that has exited must fail with EPIPE, not kill this process with
  // SIGPIPE. pagereel's main ignores the signal; this covers every other program linking
  // the library (tests, benchmarks), unless it installed a handler of its own.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      ::signal(SIGPIPE, SIG_IGN);
    }
  });
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    wake_read_.reset(fds[0]);
    wake_write_.reset(fds[1]);
  }
}

PipeTransport::~PipeTransport() = default;

Status PipeTransport::Send(std::string_view message) {
  MutexLock lock(&send_mu_);
  if (closed_ || !to_browser_.valid()) return CancelledError("DevTools pipe is closed");
  // The NUL terminator travels with the message in one buffer: the browser must never see
  // a message without its terminator, even if we are interrupted between writes.
  std::string framed;
  framed.reserve(message.size() + 1);
  framed.append(message);
  framed.push_back('\0');
  const char* p = framed.data();
  size_t left = framed.size();
  while (left > 0) {
    ssize_t n = ::write(to_browser_.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return UnavailableError("the browser closed its DevTools pipe");
      return ErrnoError("writing to the browser's DevTools pipe", errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> PipeTransport::Receive() {
  // A message may already be complete in what we read last time.
  size_t scanned = 0;
  for (;;) {
    if (const void* nul = std::memchr(pending_.data() + scanned, '\0', pending_.size() - scanned)) {
      size_t end = static_cast<size_t>(static_cast<const char*>(nul) - pending_.data());
      // Hand over the buffer itself (no copy of a large message) and keep only the tail,
      // which is usually empty or small.
      std::string rest(pending_.data() + end + 1, pending_.size() - end - 1);
      std::string message = std::move(pending_);
      message.resize(end);
      if (message.capacity() < end + kJsonPadding) message.reserve(end + kJsonPadding);
      pending_ = std::move(rest);
      return message;
    }
    scanned = pending_.size();
    if (closed_) return CancelledError("DevTools pipe is closed");

    pollfd fds[2] = {{from_browser_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    int ready = ::poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("waiting on the browser's DevTools pipe", errno);
    }
    if (fds[1].revents != 0) return CancelledError("DevTools pipe is closed");

    // Read straight into the tail of pending_, leaving padding room for the parser.
    size_t old_size = pending_.size();
    pending_.resize(old_size + kReadChunk + kJsonPadding);
    ssize_t n = ::read(from_browser_.get(), pending_.data() + old_size, kReadChunk);
    if (n < 0) {
      pending_.resize(old_size);
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoError("reading the browser's DevTools pipe", errno);
    }
    pending_.resize(old_size + static_cast<size_t>(n));
    if (n == 0) return UnavailableError("the browser closed its DevTools pipe");
  }
}

void PipeTransport::Close() {
  if (closed_.exchange(true)) return;
  if (wake_write_.valid()) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_write_.get(), &byte, 1);
  }
  MutexLock lock(&send_mu_);
  to_browser_.reset();
}

}  // namespace pagereel::cdp
