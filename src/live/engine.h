// Engine: one live show running. It owns the frame clock, the worker browsers that draw the
// sources, the program picture and the outputs.
//
// The clock thread ("live-clock") sleeps to absolute deadlines on the injected TickClock at
// the show's exact rate; at every tick it records how late it woke (the clock phase),
// takes every visible source's picture for that tick (or its last) from its slot, composites
// them and hands the program picture to every output's queue without waiting: an output
// whose queue is full drops the frame and counts it. It never waits for a browser, an
// encoder or a network peer.
//
// Worker k ("live-worker-k", one chrome-headless-shell each) draws every frame for the tick
// it will be shown at (frameTimeTicks is that tick's instant), beginning it up to a lead
// before that tick, at phase StaggerPhase(k) of the period (all at 0 without stagger), or as
// soon as the frame before is done; its pictures are decoded on its prepare thread
// ("live-prep-k") and wait in the sources' slots for their ticks. Never two beginFrames
// are in flight in one browser. A worker that falls behind skips ticks (its sources
// repeat); a browser that crashes or hangs (a beginFrame or a ping of a page's script not
// answered) is replaced and its pages reloaded (the page a source was last navigated to,
// then the template calls it had received since) while the show keeps ticking on the
// sources' last pictures. A navigated source keeps its old page until the new one loaded.
//
// Sound: each worker's browser plays to its own sink of a private PulseAudio daemon
// (sound_server.h); a capture thread ("live-sound-k") reads it into the worker's
// SoundBuffer, and at every tick the clock takes exactly that tick's share of samples
// (TickSamples) from each, times its sources' volume, opacity and fade, and mixes them into
// the tick's sound, which travels with the picture to the encoders.
//
// Outputs with the same encoder settings share one encoder thread ("live-enc-k"), which
// converts and encodes each tick once and hands the packets to each of its outputs; each
// output ("live-out") muxes them to its sink on its own thread, so a stalled peer loses its
// own frames only. Frame n carries timestamp n periods exactly. An output whose peer fails
// is reopened with backoff and starts again at a keyframe (asked of its encoder at once).
//
// Start(), Run() and the destructor belong to one thread; CurrentStatus() and the control calls
// may come from any thread.
#ifndef PAGEREEL_LIVE_ENGINE_H_
#define PAGEREEL_LIVE_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tick_clock.h"
#include "live/picture.h"
#include "live/show.h"

namespace pagereel::live {

struct SourceStatus {
  std::string id;
  int worker = 0;
  double phase = 0;           // Of the period, 0..1.
  bool visible = true;
  double opacity = 1;
  int64_t frames = 0;         // Pictures the source made.
  int64_t repeated = 0;       // Ticks that found no new picture.
  int64_t discarded = 0;      // Pictures replaced before any tick showed them.
  int64_t skipped = 0;        // Ticks its worker began no frame for (too busy, or between its steps).
  int64_t restarts = 0;       // Browser replacements.
  int browser_pid = 0;        // Its worker's browser now; 0 while it is being replaced.
  int64_t last_paint_ms = 0;  // Wall clock (Unix ms) of its newest picture; 0: none yet.
  double arrival_ms = 0;      // Smoothed arrival of a picture after its tick.
  // New pictures on air: per second and per tick over the last 2 s (1.0: every tick showed
  // a new picture), and over the whole show.
  double fps = 0;
  double freshness = 0;
  double fps_show = 0;
  double freshness_show = 0;
  double draw_p50_ms = 0;     // A frame begun in its browser, to its reply.
  double draw_p99_ms = 0;
  double prepare_p50_ms = 0;  // A new picture decoded, scaled and premultiplied.
  double lead_p50_ms = 0;     // Its frames begun this long before the ticks they are for.
  double lead_ms = 0;         // How long before its tick a frame may be begun now (the plan).
  int64_t step = 1;           // Its worker draws every this many ticks now (1: every tick).
  int64_t page_errors = 0;    // Uncaught exceptions in its page(s) since the show began.
  // Its page's sound: its browser's, so sources that share a worker share these.
  bool sound_live = false;      // Captured, and its ticks take it (the cushion gathered).
  int64_t sound_underruns = 0;  // Ticks that found less than their share (padded).
  int64_t sound_padded = 0;     // Silent samples those ticks got.
  int64_t sound_overruns = 0;   // Times captured sound was dropped for waiting too long.
  int64_t sound_dropped = 0;    // Samples dropped.
  int64_t sound_gaps = 0;       // Times its browser's stream ran dry: silence on air (GapFinder).
  int64_t sound_gap_samples = 0;  // Samples of that silence.
  double sound_buffer_ms = 0;   // Captured sound waiting for its ticks now.
  std::string last_error;
  int64_t last_error_ms = 0;  // Wall clock (Unix ms) of last_error; 0: none.
};

struct OutputStatus {
  std::string id;
  std::string target;
  int64_t frames = 0;     // Ticks written to its sink (what a receiver gets).
  int64_t dropped = 0;    // Ticks it did not write (a queue full, disconnected, waiting
                          // for a keyframe after either).
  int64_t queue_depth = 0;
  int64_t bytes = 0;        // Written to its sinks, every connection (HLS: its segments).
  double fps = 0;           // Ticks written per second, over the last 2 s.
  double bitrate_kbps = 0;  // Over the last 2 s.
  int encoder = 0;          // Outputs with the same number share one encoder.
  int64_t reconnects = 0;
  bool connected = false;
  std::string last_error;
  // SRT's own figures (srt:// outputs only, every connection): packets the sender gave up
  // on, not acknowledged in time to be played; packets sent again; the round trip now.
  bool srt = false;
  int64_t srt_dropped_packets = 0;
  int64_t srt_retransmitted_packets = 0;
  double srt_rtt_ms = 0;
};

struct ClockStatus {
  int64_t ticks = 0;
  int64_t late = 0;  // Woke later than the threshold.
  double phase_p50_us = 0, phase_p99_us = 0, phase_max_us = 0;
  double mix_p50_us = 0, mix_p99_us = 0, mix_max_us = 0;  // Compositing one tick.
  // Samples (48 kHz) the ticks carried: exactly encode::SoundSamples(ticks) with sound.
  int64_t sound_samples = 0;
  std::string scheduling;
};

struct ShowStatus {
  ClockStatus clock;
  std::vector<SourceStatus> sources;
  std::vector<OutputStatus> outputs;
  double seconds = 0;  // Since the first tick.
  // Where the sound comes from ("pulseaudio, 2 sinks"), or why the show is silent.
  std::string sound;
};

class Engine {
 public:
  // Checks the show, launches the workers' browsers, opens the pages and the outputs, and
  // waits (up to the show's source_timeout) for the pages to load. Nothing ticks yet.
  static Result<std::unique_ptr<Engine>> Start(const ShowSpec& show,
                                               TickClock& clock = SystemTickClock());
  ~Engine();  // Stops every thread; outputs not finished by Run keep what they wrote.
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Ticks until `ticks` ticks have been made (0: no limit) or *stop becomes true, then
  // finishes the outputs. Fails when the clock thread cannot be set up as asked (--cpu,
  // --fifo) or when an output cannot be finished.
  Status Run(int64_t ticks, const std::atomic<bool>* stop);

  ShowStatus CurrentStatus() const;

  // The newest program picture (premultiplied RGBA), null before the first tick.
  std::shared_ptr<const Picture> Program() const;

  // A source's newest picture (premultiplied RGBA, at its placement size); null before its
  // first or for an unknown id.
  std::shared_ptr<const Picture> SourcePicture(const std::string& source) const;

  // Control. Each takes effect at the next tick and is written to the as-run log with it.
  // Shows or hides a source, fading over `fade_frames` ticks (0: a cut).
  Status SetVisible(const std::string& source, bool visible, int fade_frames);
  // Runs `expression` in the source's page (e.g. update({...}), play(), next(), stop()).
  Result<std::string> CallSource(const std::string& source, const std::string& expression);
  // Loads `url` in the source (empty: reloads it).
  Status Navigate(const std::string& source, const std::string& url);

 private:
  class Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_ENGINE_H_
