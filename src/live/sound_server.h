// How `pagereel live` hears its sources: a private PulseAudio daemon per worker browser,
// with one null sink, and a capture thread per sink that reads the sink's monitor into
// the worker's SoundBuffer.
//
// Why a sound server and not a tap in the page: the browser's own output is everything the
// page plays (<audio>, <video>, Web Audio, media in iframes) mixed as the browser mixes it,
// with no change to the page and no samples carried over the DevTools pipe; an AudioWorklet
// tap hears only what the page routes through its own AudioContext. Measured on
// chrome-headless-shell 156: a PulseAudio null sink on a private socket receives the shell's
// output (not with --mute-audio), and with the daemon's default rate at 48 kHz the browser
// plays float32 at 48 kHz, so nothing is resampled on the way.
//
// Each daemon listens on a socket in its own folder (PULSE_SERVER), anonymous, and never
// on the user's session; each browser is told its sink with PULSE_SINK. They die with the
// show (and with pagereel: parent-death signal).
//
// Threads: SoundServer is made and destroyed by one thread; SoundCapture owns its thread
// ("live-sound-k"); Connected() and LastError() from any thread.
#ifndef PAGEREEL_LIVE_SOUND_SERVER_H_
#define PAGEREEL_LIVE_SOUND_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "live/sound_buffer.h"

namespace pagereel::live {

class SoundServer {
 public:
  // Starts `sinks` pulseaudio daemons ($PAGEREEL_PULSEAUDIO, else `pulseaudio` on PATH),
  // each with one null sink, and waits until they answer. A daemon per sink, not one with
  // `sinks` sinks: every sink's IO thread logs as "null-sink", and the log must say whose
  // stream ran dry (GapFinder). kNotFound (naming the package to install) when there is no
  // pulseaudio; kUnavailable when one did not come up.
  static Result<std::unique_ptr<SoundServer>> Start(int sinks);
  ~SoundServer();  // Kills the daemons and removes their folders.
  SoundServer(const SoundServer&) = delete;
  SoundServer& operator=(const SoundServer&) = delete;

  // The buffer a browser's stream asks for (PULSE_LATENCY_MSEC): see BrowserEnvironment.
  static constexpr int kBrowserLatencyMs = 100;

  // PULSE_SERVER, PULSE_SINK and PULSE_LATENCY_MSEC for a browser that plays to `sink`.
  std::vector<std::string> BrowserEnvironment(int sink) const;
  // "unix:/tmp/pagereel-sound-XXXXXX/native": the daemon of sink `sink`.
  std::string address(int sink) const;
  // The source a capture reads sink `sink` from.
  static std::string MonitorOf(int sink);
  // The daemon's log of sink `sink` (debug level, with times), which GapFinder reads.
  std::string LogOf(int sink) const;

 private:
  struct Daemon {
    pid_t pid;
    std::filesystem::path dir;
  };
  SoundServer() = default;
  static Result<Daemon> StartDaemon(const std::string& binary, int sink);
  static void Stop(const Daemon& daemon);

  std::vector<Daemon> daemons_;  // Constant after Start().
};

// Reads one sink's monitor (48 kHz stereo float, 10 ms fragments) into `buffer` until
// destroyed, and after each fragment the new lines of the sink's daemon log, where a
// GapFinder finds the gaps a starved browser left in the sound (counted in `buffer`);
// reconnects with backoff when the server goes away.
class SoundCapture {
 public:
  SoundCapture(std::string address, std::string monitor, std::string log, SoundBuffer* buffer, int index);
  ~SoundCapture();
  SoundCapture(const SoundCapture&) = delete;
  SoundCapture& operator=(const SoundCapture&) = delete;

  bool Connected() const { return connected_.load(); }
  std::string LastError() const;

 private:
  void Loop(std::stop_token stop);

  const std::string address_;
  const std::string monitor_;
  const std::string log_;
  SoundBuffer* const buffer_;
  std::atomic<bool> connected_{false};
  mutable Mutex mu_;
  std::string last_error_ GUARDED_BY(mu_);
  std::jthread thread_;
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_SOUND_SERVER_H_
