// An srt:// URL as a caller writes it for FFmpeg (`srt://HOST:PORT?mode=listener&latency=...`),
// read into the settings of the SRT socket pagereel opens itself (srt_sender.h).
//
// The option names and units are FFmpeg's, so URLs that worked with ffmpeg keep working:
// `latency`, `rcvlatency`, `peerlatency`, `timeout`, `listen_timeout` and `snddropdelay` in
// microseconds, `connect_timeout` in milliseconds, `linger` in seconds. One is SRT's own, as
// srt-live-transmit spells it: `peeridletimeo`, in milliseconds (how long a receiver may be
// silent before its connection counts as broken). An option this reader does not know is
// refused by name: a mistyped `pasphrase` must not send the show unencrypted.
#ifndef PAGEREEL_ENCODE_SRT_URL_H_
#define PAGEREEL_ENCODE_SRT_URL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace pagereel::encode {

// How long a receiver may send nothing before pagereel counts it gone, unless the URL says
// (`peeridletimeo`). SRT's own default is 5 s, during which a dead receiver's output read
// connected and counted frames nobody got. A receiver sends an acknowledgement every 10 ms
// while data arrives, and a keepalive each second when it has nothing else to send, so 1.5 s
// is never reached by a live one.
inline constexpr int kSrtPeerIdleMs = 1500;

struct SrtUrl {
  std::string host;  // Empty: a listener on every address.
  int port = 0;
  // mode=listener: pagereel waits for the receiver to connect; else it calls (caller).
  bool listener = false;
  // Options that map onto socket flags, in the URL's units (see above); unset: SRT's default.
  std::optional<int64_t> latency_us, rcvlatency_us, peerlatency_us;
  std::optional<int64_t> connect_timeout_ms;
  std::optional<int64_t> listen_timeout_us;
  std::optional<int64_t> timeout_us;  // How long one send may wait for room.
  std::optional<int64_t> linger_s;
  int peer_idle_ms = kSrtPeerIdleMs;
  int payload_size = 1316;  // Seven MPEG-TS packets, as receivers expect.
  std::string passphrase;
  std::optional<int64_t> pbkeylen;
  std::optional<bool> enforced_encryption;
  std::string streamid;
  // The rest, each an SRT socket option's name (SRTO_*) without the prefix, and its value
  // already in SRT's units.
  std::vector<std::pair<std::string, int64_t>> flags;
};

// Reads an srt:// URL. `extra` are options given outside the URL (the caller's protocol
// options, FFmpeg's names); the URL's own win. Errors name the URL's part that is wrong and
// what to write.
Result<SrtUrl> ParseSrtUrl(std::string_view url,
                           const std::vector<std::pair<std::string, std::string>>& extra = {});

// The receiver's latency: the URL's `latency` (or `peerlatency`), else SRT's 120 ms.
int64_t SrtLatencyMs(const SrtUrl& url);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_SRT_URL_H_
