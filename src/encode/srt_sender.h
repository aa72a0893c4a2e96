// An SRT connection pagereel opens itself with libsrt, in SRT's live mode, for an srt://
// output: the bytes of an MPEG-TS stream go out as messages of at most the payload size.
//
// Why not libavformat's srt:// protocol, which is what this replaces: a receiver that died
// without a word (killed, its machine gone) was noticed only after 4.8 s, and until then the
// output read connected and counted frames nobody got. libsrt itself breaks a silent
// connection only after 16 expiry periods of at least 300 ms each, whatever its peer-idle
// timeout (SRTO_PEERIDLETIMEO, which Debian's FFmpeg 5.1 cannot set anyway), so the sender
// watches the receiver's acknowledgements itself: a live receiver acknowledges what it got
// every 10 ms, and one that has acknowledged nothing for the peer-idle time (1.5 s by
// default, srt_url.h) while data waited is gone.
//
// libsrt is the one FFmpeg links (Debian's GnuTLS flavour), so one copy of it is loaded.
// One thread at a time.
//
// A build without libsrt (libsrt-gnutls-dev) has no SrtSender: Open() says so, and srt://
// outputs go through libavformat's protocol as before (av_util.cc).
#ifndef PAGEREEL_ENCODE_SRT_SENDER_H_
#define PAGEREEL_ENCODE_SRT_SENDER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "base/status.h"
#include "encode/srt_url.h"

namespace pagereel::encode {

// What SRT itself counts on a connection (srt_bstats), since it opened.
struct SrtLinkStats {
  int64_t packets_sent = 0;           // Including retransmissions.
  int64_t packets_retransmitted = 0;  // Sent again after the receiver reported them lost.
  int64_t packets_dropped = 0;        // Given up on: not acknowledged in time to be played.
  double rtt_ms = 0;                  // The smoothed round trip.
};

class SrtSender {
 public:
  // Whether this build has libsrt.
  static bool Available();
  // Connects (caller) or waits for a receiver to connect (listener). Polls `should_stop`
  // while it waits (every 5 ms connecting, 100 ms listening); true gives up (kCancelled).
  static Result<std::unique_ptr<SrtSender>> Open(const SrtUrl& url, std::function<bool()> should_stop);
  ~SrtSender();

  // Sends one message (at most the payload size). Fails once the connection is broken: the
  // receiver closed it, or acknowledged nothing for the peer-idle time while data waited.
  Status Send(std::span<const uint8_t> message);

  // Closes the connection once the receiver can have played out everything sent: all of it
  // acknowledged and the receiver's latency passed since the last message (a receiver drops
  // what it still holds when the connection closes), waiting no longer than the latency
  // plus the linger (1 s unless the URL says).
  void Close();

  int payload_size() const { return payload_size_; }
  // Where, in the bytes sent so far, the data not yet seen acknowledged begins (nullopt: all
  // of it acknowledged, as last looked at): what a receiver that went away never got.
  std::optional<int64_t> unacknowledged_from() const { return waiting_from_; }
  // SRT's own figures (zeros once closed).
  SrtLinkStats Stats() const;

 private:
  SrtSender() = default;

  int socket_ = -1;
  int epoll_ = -1;
  int payload_size_ = 1316;
  std::chrono::milliseconds latency_{120};
  std::chrono::milliseconds linger_{1000};
  std::chrono::milliseconds send_timeout_{2000};
  std::chrono::milliseconds peer_idle_{1500};
  std::chrono::steady_clock::time_point last_send_{};
  // The receiver's acknowledgements, looked at every 50 ms: how many so far, and since when
  // sent data has waited for the next one (none: nothing is waiting).
  int acks_ = 0;
  std::chrono::steady_clock::time_point next_check_{};
  std::optional<std::chrono::steady_clock::time_point> waiting_since_;
  std::optional<int64_t> waiting_from_;  // bytes_sent_ when waiting_since_ was set.
  int64_t bytes_sent_ = 0;
  std::function<bool()> should_stop_;
  std::string name_;  // host:port, for messages.
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_SRT_SENDER_H_
