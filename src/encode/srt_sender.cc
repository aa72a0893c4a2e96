#include "encode/srt_sender.h"

#if PAGEREEL_HAVE_LIBSRT

#include <netdb.h>
#include <srt/srt.h>
#include <sys/socket.h>
#include <syslog.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

extern "C" {
#include <libavutil/log.h>
}

namespace pagereel::encode {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// libsrt writes its own complaints to stderr; they go through libav's log instead, so they
// reach the as-run log and an output's last error as libav's lines do (libav_log.h).
void LogThroughLibav(void* /*opaque*/, int level, const char* /*file*/, int /*line*/, const char* area,
                     const char* message) {
  if (level > LOG_ERR) return;
  std::string text(message == nullptr ? "" : message);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  av_log(nullptr, AV_LOG_ERROR, "[srt] %s%s%s\n", area == nullptr ? "" : area, area == nullptr ? "" : ": ",
         text.c_str());
}

void StartLibsrt() {
  static std::once_flag once;
  std::call_once(once, [] {
    srt_setloglevel(LOG_ERR);
    srt_setloghandler(nullptr, &LogThroughLibav);
  });
  srt_startup();  // Counted: each srt_cleanup() undoes one.
}

std::string LastError() {
  const char* text = srt_getlasterror_str();
  return text == nullptr ? "unknown SRT error" : text;
}

struct FlagId {
  SRT_SOCKOPT id;
  bool wide;  // int64_t rather than int.
};

std::optional<FlagId> FlagNamed(std::string_view name) {
  static const std::pair<std::string_view, FlagId> kFlags[] = {
      {"MAXBW", {SRTO_MAXBW, true}},           {"INPUTBW", {SRTO_INPUTBW, true}},
      {"OHEADBW", {SRTO_OHEADBW, false}},      {"SNDBUF", {SRTO_SNDBUF, false}},
      {"RCVBUF", {SRTO_RCVBUF, false}},        {"UDP_SNDBUF", {SRTO_UDP_SNDBUF, false}},
      {"UDP_RCVBUF", {SRTO_UDP_RCVBUF, false}}, {"MSS", {SRTO_MSS, false}},
      {"FC", {SRTO_FC, false}},                {"IPTTL", {SRTO_IPTTL, false}},
      {"IPTOS", {SRTO_IPTOS, false}},          {"LOSSMAXTTL", {SRTO_LOSSMAXTTL, false}},
      {"MINVERSION", {SRTO_MINVERSION, false}}, {"KMREFRESHRATE", {SRTO_KMREFRESHRATE, false}},
      {"KMPREANNOUNCE", {SRTO_KMPREANNOUNCE, false}}, {"SNDDROPDELAY", {SRTO_SNDDROPDELAY, false}},
      {"TLPKTDROP", {SRTO_TLPKTDROP, false}},  {"NAKREPORT", {SRTO_NAKREPORT, false}},
      {"TSBPDMODE", {SRTO_TSBPDMODE, false}},
  };
  for (const auto& [flag_name, id] : kFlags) {
    if (flag_name == name) return id;
  }
  return std::nullopt;
}

Status SetInt(int socket, SRT_SOCKOPT option, int value, const char* what) {
  if (srt_setsockflag(socket, option, &value, sizeof value) == SRT_ERROR) {
    return InvalidArgumentError(std::string("SRT refused ") + what + "=" + std::to_string(value) + ": " + LastError());
  }
  return Status::Ok();
}

// Everything the URL sets, on a socket not yet connected (a listener's accepted socket
// inherits them).
Status Configure(int socket, const SrtUrl& url) {
  const SRT_TRANSTYPE live = SRTT_LIVE;
  if (srt_setsockflag(socket, SRTO_TRANSTYPE, &live, sizeof live) == SRT_ERROR) {
    return InternalError("SRT refused live mode: " + LastError());
  }
  PR_RETURN_IF_ERROR(SetInt(socket, SRTO_SENDER, 1, "sender"));
  PR_RETURN_IF_ERROR(SetInt(socket, SRTO_PAYLOADSIZE, url.payload_size, "payload_size"));
  PR_RETURN_IF_ERROR(SetInt(socket, SRTO_PEERIDLETIMEO, url.peer_idle_ms, "peeridletimeo"));
  if (url.latency_us) PR_RETURN_IF_ERROR(SetInt(socket, SRTO_LATENCY, static_cast<int>(*url.latency_us / 1000), "latency"));
  if (url.rcvlatency_us) {
    PR_RETURN_IF_ERROR(SetInt(socket, SRTO_RCVLATENCY, static_cast<int>(*url.rcvlatency_us / 1000), "rcvlatency"));
  }
  if (url.peerlatency_us) {
    PR_RETURN_IF_ERROR(SetInt(socket, SRTO_PEERLATENCY, static_cast<int>(*url.peerlatency_us / 1000), "peerlatency"));
  }
  if (url.connect_timeout_ms) {
    PR_RETURN_IF_ERROR(SetInt(socket, SRTO_CONNTIMEO, static_cast<int>(*url.connect_timeout_ms), "connect_timeout"));
  }
  if (url.pbkeylen) PR_RETURN_IF_ERROR(SetInt(socket, SRTO_PBKEYLEN, static_cast<int>(*url.pbkeylen), "pbkeylen"));
  if (url.enforced_encryption) {
    PR_RETURN_IF_ERROR(SetInt(socket, SRTO_ENFORCEDENCRYPTION, *url.enforced_encryption ? 1 : 0, "enforced_encryption"));
  }
  if (!url.passphrase.empty() &&
      srt_setsockflag(socket, SRTO_PASSPHRASE, url.passphrase.data(), static_cast<int>(url.passphrase.size())) ==
          SRT_ERROR) {
    return InvalidArgumentError("SRT refused the passphrase: " + LastError());
  }
  if (!url.streamid.empty() &&
      srt_setsockflag(socket, SRTO_STREAMID, url.streamid.data(), static_cast<int>(url.streamid.size())) ==
          SRT_ERROR) {
    return InvalidArgumentError("SRT refused the streamid: " + LastError());
  }
  for (const auto& [name, value] : url.flags) {
    const std::optional<FlagId> flag = FlagNamed(name);
    if (!flag) return InternalError("no SRT option SRTO_" + name);
    int failed = 0;
    if (flag->wide) {
      const int64_t wide = value;
      failed = srt_setsockflag(socket, flag->id, &wide, sizeof wide);
    } else {
      const int narrow = static_cast<int>(value);
      failed = srt_setsockflag(socket, flag->id, &narrow, sizeof narrow);
    }
    if (failed == SRT_ERROR) {
      return InvalidArgumentError("SRT refused SRTO_" + name + "=" + std::to_string(value) + ": " + LastError());
    }
  }
  // Connects and sends do not block: waits happen in epoll, in slices that look at
  // should_stop.
  PR_RETURN_IF_ERROR(SetInt(socket, SRTO_RCVSYN, 0, "rcvsyn"));
  PR_RETURN_IF_ERROR(SetInt(socket, SRTO_SNDSYN, 0, "sndsyn"));
  return Status::Ok();
}

struct AddressInfoFree {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};

Result<std::unique_ptr<addrinfo, AddressInfoFree>> Resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int err = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (err != 0) {
    return NotFoundError("cannot resolve '" + host + "': " + gai_strerror(err));
  }
  return std::unique_ptr<addrinfo, AddressInfoFree>(found);
}

}  // namespace

bool SrtSender::Available() { return true; }

Result<std::unique_ptr<SrtSender>> SrtSender::Open(const SrtUrl& url, std::function<bool()> should_stop) {
  StartLibsrt();
  std::unique_ptr<SrtSender> sender(new SrtSender());
  sender->should_stop_ = std::move(should_stop);
  sender->payload_size_ = url.payload_size;
  sender->latency_ = milliseconds(SrtLatencyMs(url));
  sender->peer_idle_ = milliseconds(url.peer_idle_ms);
  if (url.linger_s) sender->linger_ = std::chrono::seconds(*url.linger_s);
  if (url.timeout_us && *url.timeout_us > 0) {
    sender->send_timeout_ = std::max(milliseconds(100), milliseconds(*url.timeout_us / 1000));
  }
  sender->name_ = (url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host) + ":" +
                  std::to_string(url.port);
  auto stopped = [&] { return sender->should_stop_ && sender->should_stop_(); };
  sender->epoll_ = srt_epoll_create();
  if (sender->epoll_ < 0) return InternalError("SRT: no epoll: " + LastError());

  if (url.listener) {
    PR_ASSIGN_OR_RETURN(auto local, Resolve(url.host, url.port, true));
    const int listener = srt_create_socket();
    if (listener == SRT_INVALID_SOCK) return InternalError("SRT: no socket: " + LastError());
    struct CloseListener {
      int s;
      ~CloseListener() { srt_close(s); }
    } close_listener{listener};
    PR_RETURN_IF_ERROR(Configure(listener, url));
    if (srt_bind(listener, local->ai_addr, static_cast<int>(local->ai_addrlen)) == SRT_ERROR) {
      return UnavailableError("cannot listen on " + sender->name_ + ": " + LastError());
    }
    if (srt_listen(listener, 1) == SRT_ERROR) {
      return UnavailableError("cannot listen on " + sender->name_ + ": " + LastError());
    }
    const int events = SRT_EPOLL_IN | SRT_EPOLL_ERR;
    const int wait_for = srt_epoll_create();
    if (wait_for < 0) return InternalError("SRT: no epoll: " + LastError());
    srt_epoll_add_usock(wait_for, listener, &events);
    const Clock::time_point give_up =
        url.listen_timeout_us && *url.listen_timeout_us > 0
            ? Clock::now() + std::chrono::microseconds(*url.listen_timeout_us)
            : Clock::time_point::max();
    for (;;) {
      SRT_EPOLL_EVENT ready[1];
      const int n = srt_epoll_uwait(wait_for, ready, 1, 100);
      if (n > 0) break;
      if (stopped()) {
        srt_epoll_release(wait_for);
        return CancelledError("stopped while waiting for a receiver to connect to " + sender->name_);
      }
      if (Clock::now() >= give_up) {
        srt_epoll_release(wait_for);
        return DeadlineExceededError("no receiver connected to " + sender->name_ + " within listen_timeout");
      }
    }
    srt_epoll_release(wait_for);
    sockaddr_storage peer{};
    int peer_len = sizeof peer;
    sender->socket_ = srt_accept(listener, reinterpret_cast<sockaddr*>(&peer), &peer_len);
    if (sender->socket_ == SRT_INVALID_SOCK) {
      return UnavailableError("accepting a receiver on " + sender->name_ + ": " + LastError());
    }
    PR_RETURN_IF_ERROR(SetInt(sender->socket_, SRTO_SNDSYN, 0, "sndsyn"));
  } else {
    PR_ASSIGN_OR_RETURN(auto remote, Resolve(url.host, url.port, false));
    sender->socket_ = srt_create_socket();
    if (sender->socket_ == SRT_INVALID_SOCK) return InternalError("SRT: no socket: " + LastError());
    PR_RETURN_IF_ERROR(Configure(sender->socket_, url));
    const int connected = srt_connect(sender->socket_, remote->ai_addr, static_cast<int>(remote->ai_addrlen));
    if (connected == SRT_ERROR) {
      return UnavailableError(LastError());
    }
    // Non-blocking: wait for the handshake to end one way or the other.
    for (;;) {
      const SRT_SOCKSTATUS state = srt_getsockstate(sender->socket_);
      if (state == SRTS_CONNECTED) break;
      if (state != SRTS_CONNECTING && state != SRTS_OPENED) {
        const int reason = srt_getrejectreason(sender->socket_);
        return UnavailableError(srt_rejectreason_str(reason));
      }
      if (stopped()) return CancelledError("stopped before the receiver answered");
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  const int events = SRT_EPOLL_OUT | SRT_EPOLL_ERR;
  srt_epoll_add_usock(sender->epoll_, sender->socket_, &events);
  return sender;
}

SrtSender::~SrtSender() {
  if (socket_ >= 0) {
    srt_close(socket_);
    socket_ = -1;
  }
  if (epoll_ >= 0) srt_epoll_release(epoll_);
  srt_cleanup();
}

Status SrtSender::Send(std::span<const uint8_t> message) {
  const Clock::time_point now = Clock::now();
  if (now >= next_check_) {
    next_check_ = now + milliseconds(50);
    SRT_TRACEBSTATS stats{};
    if (srt_bstats(socket_, &stats, 0) == 0 && stats.pktRecvACKTotal != acks_) {
      acks_ = stats.pktRecvACKTotal;
      waiting_since_.reset();
      waiting_from_.reset();
    } else if (waiting_since_ && now - *waiting_since_ > peer_idle_) {
      return UnavailableError("the receiver at " + name_ + " is gone (it acknowledged nothing for " +
                              std::to_string(peer_idle_.count()) + " ms: peeridletimeo)");
    }
  }
  if (!waiting_since_) {
    waiting_since_ = now;
    waiting_from_ = bytes_sent_;
  }
  const Clock::time_point give_up = now + send_timeout_;
  for (;;) {
    const int sent = srt_sendmsg2(socket_, reinterpret_cast<const char*>(message.data()),
                                  static_cast<int>(message.size()), nullptr);
    if (sent != SRT_ERROR) {
      last_send_ = Clock::now();
      bytes_sent_ += static_cast<int64_t>(message.size());
      return Status::Ok();
    }
    const int code = srt_getlasterror(nullptr);
    if (code != SRT_EASYNCSND) {
      if (code == SRT_ECONNLOST || code == SRT_ENOCONN || code == SRT_ECONNFAIL) {
        return UnavailableError("the receiver at " + name_ + " is gone (" + LastError() + ")");
      }
      return IoError("sending to " + name_ + ": " + LastError());
    }
    // The send buffer is full: wait for room, a slice at a time.
    if (should_stop_ && should_stop_()) return CancelledError("stopped while sending to " + name_);
    if (Clock::now() >= give_up) {
      return DeadlineExceededError("the receiver at " + name_ + " took nothing for " +
                                   std::to_string(send_timeout_.count()) + " ms");
    }
    SRT_EPOLL_EVENT ready[1];
    srt_epoll_uwait(epoll_, ready, 1, 100);
  }
}

SrtLinkStats SrtSender::Stats() const {
  SrtLinkStats out;
  SRT_TRACEBSTATS stats{};
  if (socket_ < 0 || srt_bstats(socket_, &stats, 0) == SRT_ERROR) return out;
  out.packets_sent = stats.pktSentTotal;
  out.packets_retransmitted = stats.pktRetransTotal;
  out.packets_dropped = stats.pktSndDropTotal;
  out.rtt_ms = stats.msRTT;
  return out;
}

void SrtSender::Close() {
  if (socket_ < 0) return;
  const Clock::time_point give_up = Clock::now() + latency_ + linger_;
  while (Clock::now() < give_up && srt_getsockstate(socket_) == SRTS_CONNECTED) {
    size_t blocks = 0;
    size_t bytes = 0;
    const bool acknowledged = srt_getsndbuffer(socket_, &blocks, &bytes) == 0 && blocks == 0;
    if (acknowledged && Clock::now() >= last_send_ + latency_ + milliseconds(50)) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  srt_close(socket_);
  socket_ = -1;
}

}  // namespace pagereel::encode

#else  // No libsrt: srt:// goes through libavformat (av_util.cc).

namespace pagereel::encode {

bool SrtSender::Available() { return false; }
Result<std::unique_ptr<SrtSender>> SrtSender::Open(const SrtUrl&, std::function<bool()>) {
  return FailedPreconditionError("this pagereel was built without libsrt (install libsrt-gnutls-dev and rebuild)");
}
SrtSender::~SrtSender() = default;
Status SrtSender::Send(std::span<const uint8_t>) { return InternalError("no libsrt"); }
void SrtSender::Close() {}
SrtLinkStats SrtSender::Stats() const { return {}; }

}  // namespace pagereel::encode

#endif
