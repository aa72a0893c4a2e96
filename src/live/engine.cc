#include "live/engine.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <fstream>
#include <iterator>
#include <thread>

#include "base/bounded_queue.h"
#include "base/mutex.h"
#include "base/pressure.h"
#include "base/thread.h"
#include "browser/browser.h"
#include "capture/image.h"
#include "capture/live_page.h"
#include "encode/libav_log.h"
#include "encode/packets.h"
#include "live/compositor.h"
#include "live/frame_slot.h"
#include "live/sound_buffer.h"
#include "live/sound_server.h"
#include "live/tick_schedule.h"
#include "base/tick_clock.h"

namespace pagereel::live {

namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// The longest one beginFrame (or a ping of the page's script) may take before the source's
// browser is judged hung and replaced. A healthy 1080p frame takes 30-80 ms here (a
// beginFrame with a JPEG screenshot 30 ms, with a fast PNG 80 ms: docs/architecture.md).
constexpr milliseconds kHangTimeout{3'000};
// The same while the host is short of CPU (PSI "some" over kStarvedPressure percent of the
// last 10 s): the browsers run at nice +10 below everything else, and a starved browser is
// slow, not hung; it was replaced three times in 34 s under load before.
constexpr milliseconds kStarvedHangTimeout{15'000};
constexpr double kStarvedPressure = 40;
// How often each worker checks that its pages' scripts still answer: a page stuck in a
// loop keeps answering beginFrames from its compositor.
constexpr milliseconds kPingEvery{1'000};
// At most one as-run line per source per this long about its page's exceptions.
constexpr milliseconds kErrorLogEvery{1'000};
// Waits between attempts to relaunch a browser or reopen an output: doubled each time.
constexpr milliseconds kFirstBackoff{250};
constexpr milliseconds kMaxBackoff{5'000};
// Frames an output remembers the end of, to take back those a receiver that went away never
// acknowledged (17 s at 60 fps: more than any peer-idle time a show would set).
constexpr size_t kFrameEndsKept = 1024;
// How long outputs may take to send what they hold when a show ends.
constexpr milliseconds kDrainTimeout{10'000};
// Template calls kept per source to replay after a restart.
constexpr size_t kRememberedCalls = 64;
// Pictures of a page just navigated to or reloaded after a restart that are not put on air
// (the source shows its last picture meanwhile): the first beginFrame after a load can
// come back before the page painted.
constexpr int kHeldPictures = 1;
// A worker's sound waits this long before the clock starts taking it (the capture reads
// 10 ms fragments; the capture thread or the browser's audio thread can be held up by
// about as much again on a busy host), and is dropped beyond kSoundMaxWait.
constexpr int64_t kSoundCushionSamples = 4800;  // 100 ms.
constexpr int64_t kSoundMaxWaitSamples = 24000;  // 500 ms.
// How long after the page played it a sound reaches its tick: about the cushion (the
// buffer holds ~100 ms before a tick takes its share) plus the way from the browser's audio
// thread through PulseAudio, which the browser's buffer there sets (SoundServer::
// kBrowserLatencyMs). A page that flashes and beeps in one animation frame was heard
// 115-129 ms after its picture at 25 fps without a shift with the browser's own 32 ms
// buffer, and 31-69 ms after it with a 100 ms shift and a 100 ms buffer. The pictures are
// drawn for their ticks' own times, so the outputs stamp each tick's sound this much
// earlier, and the page's sound is on air with the picture it went with, erring late
// rather than early as broadcast tolerances want: -3 to +34 ms measured (bench/RESULTS.md,
// "live sound: gaps beside two CPU hogs"), +10 to +55 ms when read by timestamps on a
// slower day ("live sound: the sync measured again by timestamps").
constexpr int64_t kSoundLatencySamples = kSoundCushionSamples + 1920;  // 140 ms.
// The browsers' niceness (see LaunchWorker).
constexpr int kBrowserNice = 10;
// The clock thread's niceness when no real-time priority is asked for.
constexpr int kClockNice = -10;
// How far ahead of its tick a frame may be begun, at least: one browser here draws and
// reads back a 720p frame in 14-18 ms (p99 27 ms), so at 50 fps and above a frame needs
// more than its own period of slack (bench/RESULTS.md, "live freshness").
constexpr nanoseconds kMinLead{33'000'000};
// The most periods a frame may be begun before its tick (the lead grows with what frames
// take): what a template call may wait, at worst, before its frame is begun.
constexpr int64_t kMaxLeadTicks = 4;
// A worker whose frames cannot keep up with the clock is drawn on a steady grid of every
// `step` ticks (a ticker steps evenly at 25 a second in a 50 fps show) rather than for
// whichever tick it can make next (steps of one and two periods mixed: judder). Each
// kStepWindowSeconds it counts the ticks it missed beyond its grid: more than
// kStepUpMisses of them and it draws every step + 1 ticks, or as many as its frames' time
// covers (at most kMaxStep); after kStepDownDwell at a step, it goes back one when its
// frames take under kStepDownShare of the shorter step's time (docs/live.md, "A steady
// rate when a page cannot keep up").
constexpr double kStepWindowSeconds = 2;
constexpr double kStepUpMisses = 0.25;
constexpr double kStepDownShare = 0.8;
constexpr nanoseconds kStepDownDwell{5'000'000'000};
constexpr int64_t kMaxStep = 4;

// Periods of lead at `fps`: the fewest that cover kMinLead, and at least one.
int64_t LeadTicks(Rational fps) {
  const double period_ns = 1e9 / fps.ToDouble();
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(kMinLead.count()) / period_ns - 1e-9)));
}

// How long a browser call may take before the browser is judged hung (see kHangTimeout).
// The pressure file is read at most once a second (it is asked before every beginFrame;
// avg10 moves slowly). Any thread.
milliseconds HangLimit() {
  static std::atomic<int64_t> read_at_ns{0};
  static std::atomic<bool> starved{false};
  const int64_t now = SystemTickClock().MonotonicNs();
  int64_t last = read_at_ns.load(std::memory_order_relaxed);
  if (now - last >= 1'000'000'000 && read_at_ns.compare_exchange_strong(last, now)) {
    std::ifstream in("/proc/pressure/cpu");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Result<Pressure> pressure = ParsePressure(text);
    starved = pressure.ok() && pressure->some.avg10 >= kStarvedPressure;
  }
  return starved.load() ? kStarvedHangTimeout : kHangTimeout;
}

int64_t RealtimeMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

std::string UtcStamp() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  ::gmtime_r(&ts.tv_sec, &tm);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1'000'000);
  return text;
}

// Histogram of durations for quantiles of the clock phase, draw times and the like over a
// whole show without keeping every sample: 1 us buckets up to 100 ms, then 1 ms buckets up
// to 60 s (a hung browser's 15 s reads as what it was), the rest in one overflow bucket.
// Any thread (a mutex inside).
class MicrosHistogram {
 public:
  void Add(int64_t ns) {
    const int64_t us = std::max<int64_t>(0, ns / 1000);
    MutexLock lock(&mu_);
    counts_[BucketOf(us)]++;
    total_++;
    max_us_ = std::max(max_us_, static_cast<double>(ns) / 1000.0);
  }
  // q in [0, 1]: the smallest bucket value at or above which a fraction q of the values lie.
  double Quantile(double q) const {
    MutexLock lock(&mu_);
    if (total_ == 0) return 0;
    const auto rank = static_cast<int64_t>(std::ceil(q * static_cast<double>(total_)));
    int64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= std::max<int64_t>(rank, 1)) return i + 1 == counts_.size() ? max_us_ : ValueOf(i);
    }
    return max_us_;
  }
  double Max() const {
    MutexLock lock(&mu_);
    return max_us_;
  }

 private:
  static constexpr int64_t kFineUs = 100'000;      // 1 us buckets below this.
  static constexpr int64_t kCoarseUs = 60'000'000;  // 1 ms buckets below this.
  static constexpr size_t kBuckets = kFineUs + (kCoarseUs - kFineUs) / 1000 + 1;
  static size_t BucketOf(int64_t us) {
    if (us < kFineUs) return static_cast<size_t>(us);
    if (us < kCoarseUs) return static_cast<size_t>(kFineUs + (us - kFineUs) / 1000);
    return kBuckets - 1;
  }
  static double ValueOf(size_t bucket) {
    const auto b = static_cast<int64_t>(bucket);
    return static_cast<double>(b < kFineUs ? b : kFineUs + (b - kFineUs) * 1000);
  }
  mutable Mutex mu_;
  std::vector<int64_t> counts_ GUARDED_BY(mu_) = std::vector<int64_t>(kBuckets, 0);
  int64_t total_ GUARDED_BY(mu_) = 0;
  double max_us_ GUARDED_BY(mu_) = 0;
};

// Which of the last ticks (up to kMaxTicks) showed a new picture of a source: its rate now,
// as a receiver sees it. Written by the clock thread only; read from any.
class FreshnessWindow {
 public:
  static constexpr int kMaxTicks = 512;
  explicit FreshnessWindow(int ticks) : size_(std::clamp(ticks, 1, kMaxTicks)) {}
  void Add(bool is_new) {
    const size_t at = static_cast<size_t>(next_ % size_);
    if (next_ >= size_ && marks_[at]) count_--;
    marks_[at] = is_new;
    if (is_new) count_++;
    ++next_;
    filled_ = static_cast<int>(std::min<int64_t>(next_, size_));
  }
  // New pictures among the last ticks, and how many ticks that is.
  int count() const { return count_.load(); }
  int ticks() const { return filled_.load(); }

 private:
  const int size_;
  std::array<bool, kMaxTicks> marks_{};
  int64_t next_ = 0;
  std::atomic<int> count_{0};
  std::atomic<int> filled_{0};
};

// The as-run log: one line per event, with the wall time and the tick it took effect on.
class AsRunLog {
 public:
  explicit AsRunLog(const std::string& path)
      : file_(path.empty() ? nullptr : std::fopen(path.c_str(), "a")) {}
  ~AsRunLog() {
    if (file_ != nullptr) std::fclose(file_);
  }
  bool ok() const { return file_ != nullptr; }
  void Line(int64_t tick, const std::string& text) {
    if (file_ == nullptr) return;
    MutexLock lock(&mu_);
    std::fprintf(file_, "%s tick=%lld %s\n", UtcStamp().c_str(), static_cast<long long>(tick),
                 text.c_str());
    std::fflush(file_);
  }

 private:
  Mutex mu_;  // One line at a time.
  std::FILE* const file_ = nullptr;
};

struct Tick {
  int64_t index;
  std::shared_ptr<const Picture> picture;
  // The tick's sound: TickSamples(index) interleaved stereo samples from sample
  // SoundSamples(index); null when the show has none.
  std::shared_ptr<const std::vector<float>> sound;
  int64_t first_sample = 0;
};

}  // namespace

// One source: its place in the show, its latest-frame slot and its counters.
struct Source {
  SourceSpec spec;
  int worker = 0;           // Its worker's number in the show.
  size_t worker_index = 0;  // Its worker's place in Engine::Impl::workers_.
  Rational phase;
  FrameSlot slot;
  std::atomic<int64_t> frames{0};
  std::atomic<int64_t> skipped{0};
  std::atomic<int64_t> restarts{0};
  std::atomic<int64_t> last_paint_ms{0};
  std::atomic<bool> has_picture{false};
  std::atomic<int> hold_pictures{0};  // Pictures of a new page not to put on air.
  std::atomic<int64_t> page_errors{0};
  // Its sound's gain at the last tick: volume x opacity x fade (the clock thread only).
  float sound_gain = 0;
  int64_t errors_logged_ns = 0;     // Its worker's thread only: the last as-run line about them.
  int64_t errors_unlogged = 0;      // Its worker's thread only.
  std::atomic<int> browser_pid{0};
  // Ticks of the last two seconds that showed a new picture (set up by Start()).
  std::unique_ptr<FreshnessWindow> freshness;
  MicrosHistogram draw_time;     // beginFrame round trips (and the readback when changed).
  MicrosHistogram prepare_time;  // Decode, scale and premultiply a new picture.
  MicrosHistogram lead_time;  // How long before its tick's instant each frame was begun.

  Mutex mu;
  // Visibility as the compositor applies it: the opacity multiplier moves towards `target`
  // by `step` each tick (a fade), or jumps (a cut).
  double level GUARDED_BY(mu) = 1;
  double target GUARDED_BY(mu) = 1;
  double step GUARDED_BY(mu) = 1;
  std::string last_error GUARDED_BY(mu);
  int64_t last_error_ms GUARDED_BY(mu) = 0;
  std::shared_ptr<const Picture> latest GUARDED_BY(mu);  // For thumbnails.
  // What a restart reloads (after Navigate, the new page).
  std::string current_url GUARDED_BY(mu);
  // Template calls since it was loaded, for a restart.
  std::vector<std::string> calls GUARDED_BY(mu);
};

// Frames and bytes per second over the last couple of seconds, as a receiver would see
// them now: the writer adds its totals as it goes, a reader asks for the rate at any time
// (an output that stopped writing reads 0 once the window has passed). Any thread.
class RateWindow {
 public:
  void Add(int64_t now_ns, int64_t frames, int64_t bytes) {
    MutexLock lock(&mu_);
    samples_.push_back({now_ns, frames, bytes});
    while (samples_.size() > 2 && samples_[1].ns <= now_ns - kWindowNs) samples_.pop_front();
  }
  // Forgets the samples: a sink that failed starts its rate afresh (its frame count may
  // have been taken back, and it reads 0 while it sends nothing).
  void Clear() {
    MutexLock lock(&mu_);
    samples_.clear();
  }
  // Frames/s and bytes/s between the newest sample at least a window old (or the oldest)
  // and (now, frames, bytes).
  std::pair<double, double> Rate(int64_t now_ns, int64_t frames, int64_t bytes) const {
    MutexLock lock(&mu_);
    if (samples_.empty()) return {0, 0};
    const Sample* from = &samples_.front();
    for (const Sample& s : samples_) {
      if (s.ns <= now_ns - kWindowNs) from = &s;
    }
    const double seconds = static_cast<double>(now_ns - from->ns) / 1e9;
    if (seconds <= 0.2) return {0, 0};  // Too soon to say.
    return {static_cast<double>(frames - from->frames) / seconds,
            static_cast<double>(bytes - from->bytes) / seconds};
  }

 private:
  struct Sample {
    int64_t ns, frames, bytes;
  };
  static constexpr int64_t kWindowNs = 2'000'000'000;
  mutable Mutex mu_;
  std::deque<Sample> samples_ GUARDED_BY(mu_);
};

struct Output;

// The packets one encoding made of one tick: a packet per stream (fill, key), in stream
// order. An output may start at a tick whose packets are all keyframes.
struct TickPackets {
  int64_t index = 0;
  std::vector<encode::PacketPtr> packets;
  std::vector<int> streams;  // The stream of each packet.
  // The tick's sound in each of the encoding's sound codecs (Encoding::sounds' order).
  std::vector<std::vector<encode::PacketPtr>> sound;
  bool keyframe = false;
  bool after_gap = false;  // The output missed the tick before: wait for a keyframe.
};

// One encoder setting and the outputs that share it: the clock hands each encoding every
// tick's picture; its thread ("live-enc") converts and encodes it once and hands the same
// packets to each of its outputs' queues without waiting, so a stalled peer costs its own
// output frames, never the encoder or the other outputs.
struct Encoding {
  int index = 0;
  std::vector<encode::StreamSpec> streams;  // Fill (or the picture), then the key.
  bool global_header = false;
  std::vector<std::unique_ptr<encode::PacketEncoder>> encoders;  // Opened by Start().
  // One sound encoder per sound codec its outputs carry (AAC in MPEG-TS beside Opus in
  // Matroska share the pictures' encoder, not the sound's).
  std::vector<encode::SoundCodec> sound_codecs;
  std::vector<std::unique_ptr<encode::SoundPacketEncoder>> sounds;
  std::vector<Output*> outputs;
  std::unique_ptr<BoundedQueue<Tick>> queue;
  std::atomic<bool> keyframe_wanted{false};  // An output (re)joined: the next frame is one.
  std::atomic<bool> done{false};
  std::jthread thread;
};

// One output: its packet queue, thread, sink and counters.
struct Output {
  OutputSpec spec;
  Encoding* encoding = nullptr;
  int sound = -1;  // Its sound encoder in encoding->sounds; -1: no sound track.
  std::unique_ptr<BoundedQueue<TickPackets>> queue;
  bool missed = false;  // Its encoding's thread only: a tick was dropped since the last push.
  std::atomic<int64_t> frames{0};
  std::atomic<int64_t> dropped{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> reconnects{0};
  std::atomic<bool> connected{false};
  // SRT's figures: earlier connections' totals plus the current one's (output thread
  // writes, status reads).
  std::atomic<bool> srt{false};
  std::atomic<int64_t> srt_dropped{0};
  std::atomic<int64_t> srt_retransmitted{0};
  std::atomic<double> srt_rtt_ms{0};
  RateWindow rate;
  Mutex mu;
  std::string last_error GUARDED_BY(mu);
  Status final_status;     // Set by the output's thread when it ends.
  std::atomic<bool> done{false};
  std::atomic<bool> connecting{false};  // Opening its sink (an SRT listener waits here).
  // Files are opened by Start(); URLs by the output's thread (an SRT listener waits there).
  std::unique_ptr<encode::PacketMuxer> muxer;
  std::jthread thread;
};

class Engine::Impl {
 public:
  Impl(const ShowSpec& show, TickClock& clock)
      : show_(show), clock_(clock), as_run_(show.as_run_log) {}

  ~Impl() { Shutdown(); }

  Status Start();
  Status Run(int64_t ticks, const std::atomic<bool>* stop);
  ShowStatus CurrentStatus() const;
  std::shared_ptr<const Picture> Program() const {
    MutexLock lock(&program_mu_);
    return program_;
  }
  std::shared_ptr<const Picture> SourcePicture(const std::string& id) {
    Source* s = SourceOf(id);
    if (s == nullptr) return nullptr;
    MutexLock lock(&s->mu);
    return s->latest;
  }
  Status SetVisible(const std::string& id, bool visible, int fade_frames);
  Result<std::string> CallSource(const std::string& id, const std::string& expression);
  Status Navigate(const std::string& id, const std::string& url);

 private:
  // A picture read back from a source's page, on its way to being decoded and prepared.
  struct Drawn {
    Source* source;
    capture::EncodedFrame shot;
    int64_t for_tick;
    int64_t drawn_ns;
  };

  // A browser and the pages of the sources on it.
  struct Worker {
    int index = 0;
    nanoseconds phase_offset{0};
    // How many periods (less the phase offset) before its tick a frame may be begun: a
    // frame drawn ahead waits in its source's slot, and a slow frame is absorbed by the
    // slack the ones before it left (docs/live.md, "Freshness").
    int64_t lead_ticks = 1;
    // Smoothed time from a frame's begin until its picture is ready (draw and prepare):
    // a worker that fell behind skips to the first tick it can still be ready for.
    double expected_ns = 0;                // The worker's thread only.
    std::atomic<int64_t> lead_ns{0};        // The lead now, for the status.
    // Draws every `step` ticks (see kStepWindowSeconds); the worker's thread writes it.
    std::atomic<int64_t> step{1};
    double draw_ema_ns = 0;         // A round of its frames, begin to reply (the worker's thread).
    int64_t step_window_from = -1;  // The tick its window began at (the worker's thread).
    int64_t step_window_missed = 0;  // Ticks missed beyond the grid in it (the worker's thread).
    int64_t step_since_ns = 0;      // When its step last changed (the worker's thread).
    int64_t pinged_ns = 0;                  // The worker's thread only.
    std::atomic<double> prepare_ema_ns{0};  // Written by its prepare thread.
    std::vector<Source*> sources;
    // Its browser's sound, captured from its sink (null: the show has none).
    std::unique_ptr<SoundBuffer> sound;
    std::unique_ptr<SoundCapture> sound_capture;
    float sound_gain = 0;  // The clock thread only: the gain of its last tick.
    // Pictures the worker read back, decoded and prepared by its own thread
    // ("live-prep-k") while the browser draws the next frame.
    std::unique_ptr<BoundedQueue<Drawn>> prepare_queue;
    std::jthread prepare_thread;
    // Replaced only by the worker's thread; everyone (the worker too) copies the pointers
    // under page_mu and calls the page without it, so a slow template call never holds up
    // the worker's frames (the browser lets one beginFrame run at a time on its own).
    Mutex page_mu;
    std::shared_ptr<browser::Browser> browser GUARDED_BY(page_mu);
    std::vector<std::shared_ptr<capture::LivePage>> pages GUARDED_BY(page_mu);
    std::jthread thread;
  };

  int64_t TickNs(int64_t n) const { return schedule_.TickNs(n); }
  nanoseconds Period() const { return nanoseconds(schedule_.period_ns().num / schedule_.period_ns().den); }
  int64_t CurrentTick() const { return ticks_made_.load(); }

  // The pointers a worker's pages are reached by, copied from under its page_mu.
  struct WorkerPages {
    std::shared_ptr<browser::Browser> browser;
    std::vector<std::shared_ptr<capture::LivePage>> pages;
  };
  static WorkerPages PagesOf(Worker& w) EXCLUDES(w.page_mu);

  Status LaunchWorker(Worker& w);
  void WorkerLoop(Worker& w, std::stop_token stop);
  // Draws every source of the worker for tick `target` and queues their pictures.
  Status DrawSources(Worker& w, const WorkerPages& current, int64_t target);
  // After a frame for tick `done`, the next one for `next`: the worker's step, from the
  // ticks it missed (see kStepWindowSeconds).
  // `drew` false: this round relaunched or lost the browser (its window starts again).
  void AdjustStep(Worker& w, int64_t done, int64_t next, bool drew);
  void PrepareLoop(Worker& w);
  // Once every kPingEvery: whether the pages' scripts still answer (kDeadlineExceeded when
  // one does not: the worker is replaced); and their exceptions, to the status and log.
  Status CheckPages(Worker& w, const WorkerPages& current);
  void SetError(Source& s, std::string_view error);
  void ClockLoop(int64_t ticks, const std::atomic<bool>* stop, Status* status);
  std::shared_ptr<const Picture> Mix(int64_t n, int64_t deadline_ns);
  // Tick n's sound: each worker's share, at its sources' gain (set by Mix), mixed.
  std::shared_ptr<const std::vector<float>> MixSound(int64_t n);
  void EncodeLoop(Encoding& enc);
  void OutputLoop(Output& out);
  Result<std::unique_ptr<encode::PacketMuxer>> OpenOutput(Output& out);
  // What `out` carries its sound in: Opus in Matroska and WebM (AAC there plays 1,024
  // samples late: no edit list hides its priming), AAC elsewhere; kAuto: no sound track.
  encode::SoundCodec SoundCodecOf(const OutputSpec& out) const;
  // The encoder settings of each stream of `out` (one, or fill and key).
  std::vector<encode::StreamSpec> StreamsOf(const OutputSpec& out) const;
  // A source's page, with its browser (which must outlive it) and the source, for a
  // control call made without holding the worker's lock.
  struct PageRef {
    std::shared_ptr<browser::Browser> browser;
    std::shared_ptr<capture::LivePage> page;
    Source* source;
    Worker* worker;
    size_t index;  // Of the source in its worker's.
  };
  // How a source's page is opened at `url`.
  capture::LivePageOptions PageOptions(const Source& s, const std::string& url) const;
  Result<PageRef> PageOf(const std::string& id);
  Source* SourceOf(const std::string& id);
  void Shutdown();
  // After a restart: waits for the pages to load (the sources keep their last pictures
  // meanwhile), then replays the template calls each source had received since its page
  // was loaded, so a lower third comes back as it was.
  void RestoreState(Worker& w, const WorkerPages& current);

  // Constant after Start().
  const ShowSpec show_;
  TickClock& clock_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Output>> outputs_;
  std::vector<std::unique_ptr<Encoding>> encodings_;
  std::unique_ptr<SoundServer> sound_server_;  // Null: the show is silent (sound_note_).
  std::string sound_note_;
  AsRunLog as_run_;

  // Tick 0 is set by Run() before it starts the threads that read it.
  TickSchedule schedule_{0, Rational{25, 1}};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};  // The clock has stopped; outputs send what they hold.
  std::atomic<int64_t> ticks_made_{0};
  std::atomic<int64_t> late_{0};
  std::atomic<int64_t> sound_samples_{0};
  MicrosHistogram phase_;
  MicrosHistogram mix_;
  mutable Mutex scheduling_mu_;
  std::string scheduling_ GUARDED_BY(scheduling_mu_) = "SCHED_OTHER, not pinned";

  mutable Mutex program_mu_;
  std::shared_ptr<const Picture> program_ GUARDED_BY(program_mu_);

};

Engine::Impl::WorkerPages Engine::Impl::PagesOf(Worker& w) {
  MutexLock lock(&w.page_mu);
  return WorkerPages{w.browser, w.pages};
}

Status Engine::Impl::LaunchWorker(Worker& w) {
  browser::LaunchOptions launch;
  launch.frame_control = browser::FrameControl::kBeginFrame;
  // Below the clock and the encoders: a source that is late repeats a picture, an output
  // that is late loses a frame of the program.
  launch.nice = kBrowserNice;
  if (sound_server_) {
    launch.audio = browser::LaunchOptions::Audio::kPlayed;
    launch.environment = sound_server_->BrowserEnvironment(w.index);
  }
  PR_ASSIGN_OR_RETURN(std::shared_ptr<browser::Browser> browser, browser::Browser::Launch(launch));
  std::vector<std::shared_ptr<capture::LivePage>> pages;
  for (Source* s : w.sources) {
    std::string url;
    {
      MutexLock lock(&s->mu);
      url = s->current_url;
    }
    const capture::LivePageOptions options = PageOptions(*s, url);
    Result<std::unique_ptr<capture::LivePage>> page = capture::LivePage::Open(*browser, options);
    if (!page.ok()) {
      return Status(page.status().code(),
                    "source '" + s->spec.id + "': " + std::string(page.status().message()));
    }
    pages.push_back(std::move(page).value());
  }
  for (Source* s : w.sources) s->browser_pid = browser->pid();
  MutexLock lock(&w.page_mu);
  w.pages = std::move(pages);
  w.browser = std::move(browser);
  return Status::Ok();
}

capture::LivePageOptions Engine::Impl::PageOptions(const Source& s, const std::string& url) const {
  capture::LivePageOptions options;
  options.url = url;
  options.width = s.spec.width > 0 ? s.spec.width : show_.width;
  options.height = s.spec.height > 0 ? s.spec.height : show_.height;
  options.alpha = s.spec.transparent;
  options.timeout = kHangTimeout;
  options.name = "'" + s.spec.id + "' (" + url.substr(0, 80) + ")";
  return options;
}

Status Engine::Impl::Start() {
  PR_RETURN_IF_ERROR(ValidateShow(show_));
  if (!show_.as_run_log.empty() && !as_run_.ok()) {
    return InvalidArgumentError("cannot open the as-run log " + show_.as_run_log);
  }
  // Sources to workers: an explicit worker number groups sources; the rest get their own.
  std::map<int, Worker*> by_number;
  int next_free = 0;
  for (const SourceSpec& spec : show_.sources) {
    if (spec.worker >= 0) next_free = std::max(next_free, spec.worker + 1);
  }
  for (const SourceSpec& spec : show_.sources) {
    auto source = std::make_unique<Source>();
    source->spec = spec;
    source->freshness = std::make_unique<FreshnessWindow>(static_cast<int>(std::lround(2 * show_.fps.ToDouble())));
    {
      MutexLock lock(&source->mu);
      source->level = source->target = spec.visible ? 1 : 0;
      source->current_url = spec.url;
    }
    const int number = spec.worker >= 0 ? spec.worker : next_free++;
    Worker*& w = by_number[number];
    if (w == nullptr) {
      workers_.push_back(std::make_unique<Worker>());
      w = workers_.back().get();
    }
    w->sources.push_back(source.get());
    source->worker = number;
    sources_.push_back(std::move(source));
  }
  // The sources' sound: a sink per worker on a private sound server. Without one the show
  // runs silent, and says why (in the status and the as-run log).
  if (show_.sound.enabled) {
    Result<std::unique_ptr<SoundServer>> server = SoundServer::Start(static_cast<int>(workers_.size()));
    if (server.ok()) {
      sound_server_ = std::move(server).value();
      sound_note_ = "pulseaudio, " + std::to_string(workers_.size()) + " sink" + (workers_.size() == 1 ? "" : "s");
    } else {
      sound_note_ = "none: " + std::string(server.status().message());
      as_run_.Line(0, "the show is silent: " + std::string(server.status().message()));
    }
  } else {
    sound_note_ = "none: off in the show";
  }
  // Phases follow the workers' order of appearance, so the first workers get 0 and 1/2.
  for (size_t k = 0; k < workers_.size(); ++k) {
    Worker& w = *workers_[k];
    w.index = static_cast<int>(k);
    const Rational phase = show_.clock.stagger ? StaggerPhase(w.index) : Rational{0, 1};
    w.phase_offset = nanoseconds(TickSchedule(0, show_.fps).PhaseOffsetNs(phase));
    w.lead_ticks = LeadTicks(show_.fps) + (w.phase_offset.count() == 0 ? 0 : 1);
    w.prepare_queue = std::make_unique<BoundedQueue<Drawn>>(2);
    if (sound_server_) {
      w.sound = std::make_unique<SoundBuffer>(kSoundCushionSamples, kSoundMaxWaitSamples);
      w.sound_capture = std::make_unique<SoundCapture>(sound_server_->address(w.index), SoundServer::MonitorOf(w.index),
                                                       sound_server_->LogOf(w.index), w.sound.get(), w.index);
    }
    for (Source* s : w.sources) {
      s->phase = phase;
      s->worker_index = k;
    }
    PR_RETURN_IF_ERROR(LaunchWorker(w));
  }
  // Wait for the pages to load, so the show starts with pictures where it can.
  const auto deadline = std::chrono::steady_clock::now() + show_.source_timeout;
  for (auto& w : workers_) {
    const WorkerPages current = PagesOf(*w);
    for (size_t i = 0; i < current.pages.size(); ++i) {
      while (!current.pages[i]->loaded() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(20));
      }
      if (!current.pages[i]->loaded()) {
        as_run_.Line(0, "source " + w->sources[i]->spec.id + " had not loaded when the show started");
      }
    }
  }
  // libav's own lines (a peer that refused, a muxer's complaint) go to the as-run log, not
  // to the operator's terminal; an output's failure message carries the last of its own.
  encode::SetLibavLogSink([this](std::string_view line) { as_run_.Line(CurrentTick(), "libav: " + std::string(line)); });
  // Outputs with the same encoder settings share one encoding; each output still has its
  // own sink, queue and thread.
  std::map<std::string, Encoding*> by_key;
  for (const OutputSpec& spec : show_.outputs) {
    auto out = std::make_unique<Output>();
    out->spec = spec;
    encode::StreamSpec& s = out->spec.stream;
    s.width = show_.width;
    s.height = show_.height;
    s.fps = show_.fps;
    s.latency = encode::Latency::kLive;
    // Connecting to a peer is abandoned as soon as the show ends (there is nothing left to
    // send it); sending what is queued gets kDrainTimeout.
    Output* raw = out.get();
    s.should_stop = [this, raw] { return stopping_.load() || (draining_.load() && raw->connecting.load()); };
    const int capacity = spec.queue_frames > 0 ? spec.queue_frames
                                               : std::max(2, static_cast<int>(2 * show_.fps.ToDouble()));
    out->queue = std::make_unique<BoundedQueue<TickPackets>>(static_cast<size_t>(capacity));
    std::vector<encode::StreamSpec> streams = StreamsOf(out->spec);
    std::string key;
    for (const encode::StreamSpec& stream : streams) key += encode::EncoderKey(stream) + "; ";
    Encoding*& enc = by_key[key];
    if (enc == nullptr) {
      encodings_.push_back(std::make_unique<Encoding>());
      enc = encodings_.back().get();
      enc->index = static_cast<int>(encodings_.size()) - 1;
      enc->streams = std::move(streams);
      enc->queue = std::make_unique<BoundedQueue<Tick>>(static_cast<size_t>(capacity));
    }
    enc->global_header = enc->global_header || encode::WantsGlobalHeader(s.container);
    enc->outputs.push_back(raw);
    out->encoding = enc;
    if (const encode::SoundCodec codec = SoundCodecOf(spec); codec != encode::SoundCodec::kAuto) {
      auto at = std::find(enc->sound_codecs.begin(), enc->sound_codecs.end(), codec);
      out->sound = static_cast<int>(at - enc->sound_codecs.begin());
      if (at == enc->sound_codecs.end()) enc->sound_codecs.push_back(codec);
    }
    outputs_.push_back(std::move(out));
  }
  for (auto& enc : encodings_) {
    for (const encode::StreamSpec& stream : enc->streams) {
      Result<std::unique_ptr<encode::PacketEncoder>> encoder =
          encode::PacketEncoder::Open(stream, enc->global_header);
      if (!encoder.ok()) {
        return Status(encoder.status().code(), "output " + enc->outputs.front()->spec.id + ": " +
                                                   std::string(encoder.status().message()));
      }
      enc->encoders.push_back(std::move(encoder).value());
    }
    for (const encode::SoundCodec codec : enc->sound_codecs) {
      Result<std::unique_ptr<encode::SoundPacketEncoder>> sound =
          encode::SoundPacketEncoder::Open(codec, enc->global_header);
      if (!sound.ok()) {
        return Status(sound.status().code(), "output " + enc->outputs.front()->spec.id + ": " +
                                                 std::string(sound.status().message()));
      }
      enc->sounds.push_back(std::move(sound).value());
    }
  }
  for (auto& out : outputs_) {
    if (out->spec.stream.sink.kind == encode::Sink::Kind::kUrl) continue;
    Result<std::unique_ptr<encode::PacketMuxer>> muxer = OpenOutput(*out);
    if (!muxer.ok()) {
      return Status(muxer.status().code(),
                    "output " + out->spec.id + ": " + std::string(muxer.status().message()));
    }
    out->muxer = std::move(muxer).value();
    out->connected = true;
  }
  return Status::Ok();
}

encode::SoundCodec Engine::Impl::SoundCodecOf(const OutputSpec& out) const {
  if (!show_.sound.enabled || out.sound == OutputSound::kNone) return encode::SoundCodec::kAuto;
  const encode::Container c = out.stream.container;
  return c == encode::Container::kMatroska || c == encode::Container::kWebm ? encode::SoundCodec::kOpus
                                                                            : encode::SoundCodec::kAac;
}

std::vector<encode::StreamSpec> Engine::Impl::StreamsOf(const OutputSpec& out) const {
  encode::StreamSpec base = out.stream;
  base.premultiplied = true;  // The program picture (picture.h).
  base.sink = {};
  base.should_stop = nullptr;
  base.protocol_options.clear();
  base.muxer_options.clear();
  OutputAlpha alpha = out.alpha;
  if (alpha == OutputAlpha::kAuto) {
    const bool can_carry = base.codec == encode::Codec::kProRes || base.codec == encode::Codec::kFfv1;
    alpha = can_carry && show_.background.a < 255 ? OutputAlpha::kChannel : OutputAlpha::kNone;
  }
  auto with = [&](bool channel, encode::Signal signal) {
    encode::StreamSpec s = base;
    s.alpha = channel;
    s.signal = signal;
    return s;
  };
  switch (alpha) {
    case OutputAlpha::kChannel:
      return {with(true, encode::Signal::kPicture)};
    case OutputAlpha::kFill:
      return {with(false, encode::Signal::kFill)};
    case OutputAlpha::kKey:
      return {with(false, encode::Signal::kKey)};
    case OutputAlpha::kKeyAndFill:
      return {with(false, encode::Signal::kFill), with(false, encode::Signal::kKey)};
    case OutputAlpha::kAuto:
    case OutputAlpha::kNone:
      break;
  }
  return {with(false, encode::Signal::kPicture)};
}

Result<std::unique_ptr<encode::PacketMuxer>> Engine::Impl::OpenOutput(Output& out) {
  std::vector<const encode::PacketEncoder*> encoders;
  for (const auto& e : out.encoding->encoders) encoders.push_back(e.get());
  return encode::PacketMuxer::Open(out.spec.stream, encoders,
                                   out.sound >= 0 ? out.encoding->sounds[static_cast<size_t>(out.sound)].get() : nullptr);
}

Status Engine::Impl::Run(int64_t ticks, const std::atomic<bool>* stop) {
  Status clock_status;
  // Time for the threads to get going before tick 0.
  const int64_t mono = clock_.MonotonicNs();
  const int64_t wall = clock_.RealtimeNs();
  schedule_ = TickSchedule(mono + 20'000'000, show_.fps);
  for (auto& out : outputs_) {
    Output* o = out.get();
    o->thread = std::jthread([this, o] {
      SetCurrentThreadName("live-out");
      OutputLoop(*o);
      o->done = true;
    });
  }
  for (auto& enc : encodings_) {
    Encoding* e = enc.get();
    e->thread = std::jthread([this, e] {
      SetCurrentThreadName("live-enc-" + std::to_string(e->index));
      EncodeLoop(*e);
      e->done = true;
    });
  }
  for (auto& w : workers_) {
    Worker* wp = w.get();
    wp->prepare_thread = std::jthread([this, wp] {
      SetCurrentThreadName("live-prep-" + std::to_string(wp->index));
      PrepareLoop(*wp);
    });
    wp->thread = std::jthread([this, wp](std::stop_token st) {
      SetCurrentThreadName("live-worker-" + std::to_string(wp->index));
      WorkerLoop(*wp, st);
    });
  }
  as_run_.Line(0, "show started: " + std::to_string(show_.width) + "x" + std::to_string(show_.height) +
                      " at " + show_.fps.ToString() + " fps, " + std::to_string(sources_.size()) +
                      " sources on " + std::to_string(workers_.size()) + " workers, " +
                      std::to_string(outputs_.size()) + " outputs on " +
                      std::to_string(encodings_.size()) + " encoders");
  if (!show_.clock.scheduler_note.empty()) as_run_.Line(0, "scheduler: " + show_.clock.scheduler_note);
  // Where the program's timeline sits on the wall clock: frame n is at this + n periods.
  char tick0[64];
  std::snprintf(tick0, sizeof tick0, "%.3f", static_cast<double>(wall + (schedule_.TickNs(0) - mono)) / 1e6);
  as_run_.Line(0, std::string("tick 0 at ") + tick0 + " ms (Unix time)");
  {
    std::jthread clock_thread([&] {
      SetCurrentThreadName("live-clock");
      ClockLoop(ticks, stop, &clock_status);
    });
  }
  // The clock has stopped: the workers stop, the outputs drain their queues and finish.
  for (auto& w : workers_) {
    w->thread.request_stop();
    if (w->thread.joinable()) w->thread.join();
    w->prepare_queue->Close();
    if (w->prepare_thread.joinable()) w->prepare_thread.join();
  }
  draining_ = true;
  // Encoders finish what they hold and close their outputs' queues; outputs drain what they
  // hold and finish; one stuck on a network peer is interrupted after kDrainTimeout, so a
  // show always ends.
  for (auto& enc : encodings_) enc->queue->Close();
  const int64_t drain_deadline = clock_.MonotonicNs() + nanoseconds(kDrainTimeout).count();
  for (auto& out : outputs_) {
    while (!out->done && clock_.MonotonicNs() < drain_deadline) std::this_thread::sleep_for(milliseconds(10));
  }
  stopping_ = true;
  Status result = clock_status;
  for (auto& enc : encodings_) {
    if (enc->thread.joinable()) enc->thread.join();
  }
  for (auto& out : outputs_) {
    if (out->thread.joinable()) out->thread.join();
    if (result.ok() && !out->final_status.ok()) result = out->final_status;
  }
  as_run_.Line(ticks_made_.load(), "show ended after " + std::to_string(ticks_made_.load()) + " ticks");
  return result;
}

void Engine::Impl::ClockLoop(int64_t ticks, const std::atomic<bool>* stop, Status* status) {
  *status = ConfigureClockThread(show_.clock.cpu, show_.clock.fifo_priority);
  if (!status->ok()) return;
  std::string scheduling = show_.clock.fifo_priority
                               ? "SCHED_FIFO " + std::to_string(*show_.clock.fifo_priority)
                               : std::string("SCHED_OTHER");
  if (!show_.clock.fifo_priority) {
    // Chromium raises its own display threads (nice -8 where it may), so a clock thread at
    // nice 0 would wake behind them; it asks for -10 and says when it did not get it.
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kClockNice) == 0) {
      scheduling += " nice " + std::to_string(kClockNice);
    } else {
      scheduling += " nice 0 (nice " + std::to_string(kClockNice) + " needs CAP_SYS_NICE)";
    }
  }
  scheduling += show_.clock.cpu ? ", pinned to CPU " + std::to_string(*show_.clock.cpu) : ", not pinned";
  {
    MutexLock lock(&scheduling_mu_);
    scheduling_ = scheduling;
  }
  const int64_t threshold = show_.clock.late_threshold.count();
  for (int64_t n = 0; ticks == 0 || n < ticks; ++n) {
    if (stop != nullptr && stop->load()) break;
    const int64_t deadline = TickNs(n);
    clock_.SleepUntil(deadline);
    const int64_t woke = clock_.MonotonicNs();
    const int64_t late = woke - deadline;
    phase_.Add(late);
    if (late > threshold) {
      late_++;
      as_run_.Line(n, "late tick: woke " + std::to_string(late / 1000) + " us after its instant");
    }
    std::shared_ptr<const Picture> program = Mix(n, deadline);
    std::shared_ptr<const std::vector<float>> sound = MixSound(n);
    mix_.Add(clock_.MonotonicNs() - woke);
    {
      MutexLock lock(&program_mu_);
      program_ = program;
    }
    for (auto& enc : encodings_) {
      if (!enc->queue->TryPush(Tick{n, program, sound, encode::SoundSamples(n, show_.fps)})) {
        for (Output* out : enc->outputs) out->dropped++;
      }
    }
    ticks_made_ = n + 1;
  }
}

std::shared_ptr<const Picture> Engine::Impl::Mix(int64_t n, int64_t deadline_ns) {
  std::vector<Layer> layers;
  std::vector<std::shared_ptr<const Picture>> keep;
  layers.reserve(sources_.size());
  for (auto& s : sources_) {
    FrameSlot::Taken taken = s->slot.Take(n, deadline_ns);
    s->freshness->Add(taken.is_new);
    double level;
    {
      MutexLock lock(&s->mu);
      if (s->level < s->target) s->level = std::min(s->target, s->level + s->step);
      if (s->level > s->target) s->level = std::max(s->target, s->level - s->step);
      level = s->level;
    }
    s->sound_gain = static_cast<float>(level * s->spec.opacity * s->spec.volume);
    if (!taken.picture || level <= 0) continue;
    layers.push_back(Layer{taken.picture.get(), s->spec.x, s->spec.y,
                           static_cast<float>(level * s->spec.opacity)});
    keep.push_back(std::move(taken.picture));
  }
  auto program = std::make_shared<Picture>(show_.width, show_.height);
  Composite(layers, show_.background, program.get());
  return program;
}

std::shared_ptr<const std::vector<float>> Engine::Impl::MixSound(int64_t n) {
  // Without a sound server (none installed) the outputs still carry their tracks, silent.
  if (!show_.sound.enabled) return nullptr;
  const int64_t count = TickSamples(n, show_.fps);
  auto mixed = std::make_shared<std::vector<float>>(static_cast<size_t>(count) * encode::kSoundChannels, 0.0f);
  for (auto& w : workers_) {
    if (!w->sound) continue;
    // Sources that share a browser share its sound: at the gain of the loudest of them.
    float gain = 0;
    for (const Source* s : w->sources) gain = std::max(gain, s->sound_gain);
    // From the last tick's gain to this one's across the tick: a fade or a cut of the
    // picture moves the sound without a step (a click).
    w->sound->Take(mixed->data(), count, w->sound_gain, gain);
    w->sound_gain = gain;
  }
  sound_samples_ += count;
  return mixed;
}

void Engine::Impl::WorkerLoop(Worker& w, std::stop_token stop) {
  milliseconds backoff = kFirstBackoff;
  int64_t retry_at_ns = 0;
  const int64_t base_lead_ns = w.lead_ticks * Period().count() - w.phase_offset.count();
  const int64_t max_lead_ns = kMaxLeadTicks * Period().count() - w.phase_offset.count();
  // The tick the next frame is drawn for. Its frame is begun no earlier than the lead before
  // its instant, or as soon as the one before it is done. The lead is twice what a frame
  // has been taking (draw and prepare), rounded up to whole periods (less the phase), so
  // a frame that takes twice as long as usual is still on time; never less than the base
  // lead, never more than kMaxLeadTicks periods.
  int64_t t = w.lead_ticks;
  while (!stop.stop_requested()) {
    // In whole periods, so the worker keeps its phase.
    const int64_t period_ns = Period().count();
    const int64_t wanted_ns =
        (static_cast<int64_t>(2 * w.expected_ns) + w.phase_offset.count() + period_ns - 1) / period_ns * period_ns -
        w.phase_offset.count();
    const int64_t lead_ns = std::clamp(wanted_ns, base_lead_ns, std::max(base_lead_ns, max_lead_ns));
    w.lead_ns.store(lead_ns, std::memory_order_relaxed);
    clock_.SleepUntil(TickNs(t) - lead_ns);
    if (stop.stop_requested()) break;
    const WorkerPages current = PagesOf(w);
    bool drew = false;  // This round drew its frames (a relaunch or a failure does not count).
    if (!current.browser) {
      if (clock_.MonotonicNs() >= retry_at_ns) {
        Status launched = LaunchWorker(w);
        if (launched.ok()) {
          RestoreState(w, PagesOf(w));
          for (Source* s : w.sources) {
            s->restarts++;
            s->hold_pictures = kHeldPictures;
            s->has_picture = false;
            as_run_.Line(CurrentTick(), "source " + s->spec.id + " is back (browser restarted)");
          }
          backoff = kFirstBackoff;
        } else {
          for (Source* s : w.sources) SetError(*s, launched.message());
          retry_at_ns = clock_.MonotonicNs() + nanoseconds(backoff).count();
          backoff = std::min(backoff * 2, kMaxBackoff);
        }
      }
    } else {
      const int64_t began = clock_.MonotonicNs();
      Status drawn = DrawSources(w, current, t);
      const double draw_ns = static_cast<double>(clock_.MonotonicNs() - began);
      if (drawn.ok()) drawn = CheckPages(w, current);
      if (drawn.ok()) {
        // What a frame of this worker's takes from its begin until its picture is ready.
        const double took = static_cast<double>(clock_.MonotonicNs() - began) +
                            w.prepare_ema_ns.load(std::memory_order_relaxed);
        w.expected_ns = w.expected_ns == 0 ? took : w.expected_ns + (took - w.expected_ns) / 8;
        w.draw_ema_ns = w.draw_ema_ns == 0 ? draw_ns : w.draw_ema_ns + (draw_ns - w.draw_ema_ns) / 8;
        drew = true;
      } else {
        // Crashed or hung: the show keeps the sources' last pictures while a new browser
        // comes up.
        for (Source* s : w.sources) SetError(*s, drawn.message());
        as_run_.Line(CurrentTick(), "worker " + std::to_string(w.index) + " failed, restarting: " +
                                        std::string(drawn.message()));
        for (Source* s : w.sources) s->browser_pid = 0;
        MutexLock lock(&w.page_mu);
        w.pages.clear();
        w.browser.reset();  // Kills what is left of it.
      }
    }
    // The next tick on the worker's grid whose picture can still be ready in time; the ones
    // passed meanwhile are skipped, and their ticks repeat the sources' pictures.
    const int64_t ready = clock_.MonotonicNs() + static_cast<int64_t>(w.expected_ns);
    const int64_t step = w.step.load(std::memory_order_relaxed);
    const int64_t reachable = schedule_.NextTick(t, ready, 0);
    const int64_t next = t + (reachable - t + step - 1) / step * step;
    for (Source* s : w.sources) s->skipped += next - t - 1;
    AdjustStep(w, t, next, drew);
    t = next;
  }
}

void Engine::Impl::AdjustStep(Worker& w, int64_t done, int64_t next, bool drew) {
  const int64_t step = w.step.load(std::memory_order_relaxed);
  const int64_t now = clock_.MonotonicNs();
  if (!drew) {
    w.step_window_from = next;
    w.step_window_missed = 0;
    return;
  }
  if (w.step_window_from < 0) {
    // The first window starts once the pages have drawn a while (a load is slow).
    if (done < static_cast<int64_t>(show_.fps.ToDouble())) return;
    w.step_window_from = done;
    w.step_since_ns = now;
  }
  w.step_window_missed += next - done - step;
  const int64_t window = next - w.step_window_from;
  if (window < static_cast<int64_t>(kStepWindowSeconds * show_.fps.ToDouble())) return;
  const double missed = static_cast<double>(w.step_window_missed) / static_cast<double>(window);
  const double period_ns = static_cast<double>(Period().count());
  int64_t changed = step;
  if (missed > kStepUpMisses && step < kMaxStep) {
    // At once to the step its frames' time asks for (a 70 ms frame at 20 ms ticks: every
    // 4th), not one window per step; a quarter period of slack, since frames drawn every
    // tick take longer than when the browser has a rest between them (42 ms against 35).
    const auto needed = static_cast<int64_t>(std::ceil(w.draw_ema_ns / period_ns - 0.25));
    changed = std::clamp<int64_t>(needed, step + 1, kMaxStep);
  } else if (step > 1 && now - w.step_since_ns >= kStepDownDwell.count() &&
             w.draw_ema_ns < kStepDownShare * static_cast<double>(step - 1) * period_ns) {
    changed = step - 1;
  }
  w.step_window_from = next;
  w.step_window_missed = 0;
  if (changed == step) return;
  w.step.store(changed, std::memory_order_relaxed);
  w.step_since_ns = now;
  std::string line = "source";
  for (const Source* s : w.sources) line += (s == w.sources.front() ? " " : ", ") + s->spec.id;
  line += (w.sources.size() == 1 ? " is" : " are");
  line += changed == 1 ? std::string(" now drawn every tick") : " now drawn every " + std::to_string(changed) + " ticks";
  char times[96];
  std::snprintf(times, sizeof times, ": a frame takes %.1f ms of its %.1f ms period", w.draw_ema_ns / 1e6, period_ns / 1e6);
  line += times;
  if (changed > step) line += ", " + std::to_string(std::lround(missed * 100)) + " % of ticks missed";
  as_run_.Line(CurrentTick(), line);
}

Status Engine::Impl::DrawSources(Worker& w, const WorkerPages& current, int64_t target) {
  // Frames are drawn ahead, for the tick they will be shown at: the page's frame time is
  // that tick's instant, and the picture waits in the source's slot until it (docs/live.md,
  // "Freshness").
  for (size_t i = 0; i < w.sources.size(); ++i) {
    Source& s = *w.sources[i];
    const int64_t began = clock_.MonotonicNs();
    s.lead_time.Add(TickNs(target) - began);
    Result<capture::LiveFrame> frame =
        current.pages[i]->BeginFrame(nanoseconds(TickNs(target)), Period() * w.step.load(std::memory_order_relaxed), !s.has_picture, HangLimit());
    const int64_t drawn = clock_.MonotonicNs();
    s.draw_time.Add(drawn - began);
    if (!frame.ok()) {
      if (frame.status().code() == StatusCode::kUnavailable ||
          frame.status().code() == StatusCode::kDeadlineExceeded) {
        return frame.status();
      }
      SetError(s, frame.status().message());
      continue;
    }
    if (!frame->screenshot) continue;
    if (s.hold_pictures.load() > 0) {
      // A page just put in: its first frame after the load can come back before it painted
      // (an empty picture); the next is read back too (has_picture stays false).
      s.hold_pictures--;
      continue;
    }
    s.has_picture = true;
    // Blocks only when two pictures already wait: the browser then waits for pagereel.
    w.prepare_queue->Push(Drawn{&s, std::move(*frame->screenshot), target, drawn});
  }
  return Status::Ok();
}

void Engine::Impl::SetError(Source& s, std::string_view error) {
  MutexLock lock(&s.mu);
  s.last_error = error;
  s.last_error_ms = RealtimeMs();
}

Status Engine::Impl::CheckPages(Worker& w, const WorkerPages& current) {
  const int64_t now = clock_.MonotonicNs();
  for (size_t i = 0; i < w.sources.size(); ++i) {
    Source& s = *w.sources[i];
    capture::LivePage::Errors errors = current.pages[i]->TakeErrors();
    if (errors.count > 0) {
      s.page_errors += errors.count;
      SetError(s, "the page threw: " + errors.newest.back());
      s.errors_unlogged += errors.count;
    }
    if (s.errors_unlogged > 0 && now - s.errors_logged_ns >= nanoseconds(kErrorLogEvery).count()) {
      std::string line = "source " + s.spec.id + ": the page threw: " +
                         (errors.newest.empty() ? std::string("(see earlier)") : errors.newest.back());
      if (s.errors_unlogged > 1) line += " (and " + std::to_string(s.errors_unlogged - 1) + " more exceptions)";
      as_run_.Line(CurrentTick(), line);
      s.errors_unlogged = 0;
      s.errors_logged_ns = now;
    }
  }
  if (now - w.pinged_ns < nanoseconds(kPingEvery).count()) return Status::Ok();
  w.pinged_ns = now;
  for (size_t i = 0; i < w.sources.size(); ++i) {
    const milliseconds limit = HangLimit();
    Status answered = current.pages[i]->Ping(limit);
    if (answered.ok()) continue;
    if (answered.code() != StatusCode::kDeadlineExceeded) return answered;
    return DeadlineExceededError("the page of source '" + w.sources[i]->spec.id +
                                 "' has not run a script for " + std::to_string(limit.count() / 1000) +
                                 " s (its main thread is stuck: a loop in the page, or a call that never returns)");
  }
  return Status::Ok();
}

void Engine::Impl::PrepareLoop(Worker& w) {
  while (std::optional<Drawn> drawn = w.prepare_queue->Pop()) {
    Source& s = *drawn->source;
    Result<encode::Image> image = encode::DecodeScreenshot(drawn->shot.screenshot());
    if (!image.ok()) {
      SetError(s, image.status().message());
      continue;
    }
    const int width = s.spec.width > 0 ? s.spec.width : show_.width;
    const int height = s.spec.height > 0 ? s.spec.height : show_.height;
    Result<Picture> picture =
        PreparePicture(image->rgba.data(), image->width, image->height, image->width * 4, width, height);
    if (!picture.ok()) {
      SetError(s, picture.status().message());
      continue;
    }
    const int64_t arrived = clock_.MonotonicNs();
    s.prepare_time.Add(arrived - drawn->drawn_ns);
    const double took = static_cast<double>(arrived - drawn->drawn_ns);
    const double ema = w.prepare_ema_ns.load(std::memory_order_relaxed);
    w.prepare_ema_ns.store(ema == 0 ? took : ema + (took - ema) / 8, std::memory_order_relaxed);
    auto shared = std::make_shared<const Picture>(std::move(picture).value());
    {
      MutexLock lock(&s.mu);
      s.latest = shared;
    }
    s.slot.Put(std::move(shared), arrived, drawn->for_tick);
    s.frames++;
    s.last_paint_ms = RealtimeMs();
  }
}

void Engine::Impl::EncodeLoop(Encoding& enc) {
  std::vector<std::unique_ptr<encode::Converter>> converters;
  for (const auto& e : enc.encoders) converters.push_back(e->NewConverter());
  bool failed = false;
  int64_t sound_end = 0;  // The sample after the last tick's sound (unshifted).
  auto hand_out = [&](TickPackets packets) {
    for (Output* out : enc.outputs) {
      TickPackets copy = packets;
      copy.after_gap = out->missed;
      if (out->queue->TryPush(std::move(copy))) {
        out->missed = false;
      } else {
        out->dropped++;
        out->missed = true;
      }
    }
  };
  while (std::optional<Tick> tick = enc.queue->Pop()) {
    if (failed) {
      for (Output* out : enc.outputs) out->dropped++;
      continue;
    }
    const Picture& p = *tick->picture;
    const bool keyframe = enc.keyframe_wanted.exchange(false);
    TickPackets packets;
    packets.index = tick->index;
    Status status;
    for (size_t i = 0; i < enc.encoders.size() && status.ok(); ++i) {
      Result<std::unique_ptr<encode::PreparedFrame>> prepared =
          converters[i]->Convert(encode::RgbaView{p.pixels.data(), p.width, p.height, p.stride()});
      std::vector<encode::PacketPtr> made;
      status = prepared.ok() ? enc.encoders[i]->Encode(std::move(prepared).value(), tick->index, keyframe, &made)
                             : prepared.status();
      for (encode::PacketPtr& packet : made) {
        packets.packets.push_back(std::move(packet));
        packets.streams.push_back(static_cast<int>(i));
      }
    }
    if (!status.ok()) {
      // An encoder that refuses a frame will refuse the next: its outputs end here.
      failed = true;
      as_run_.Line(CurrentTick(), "encoder of " + enc.outputs.front()->spec.id + " failed: " +
                                      std::string(status.message()));
      for (Output* out : enc.outputs) {
        MutexLock lock(&out->mu);
        out->last_error = status.message();
        out->dropped++;
      }
      continue;
    }
    packets.keyframe = packets.packets.size() == enc.encoders.size() &&
                       std::all_of(packets.packets.begin(), packets.packets.end(),
                                   [](const encode::PacketPtr& packet) { return packet->keyframe(); });
    // The tick's sound, stamped kSoundLatencySamples before its tick's samples (the time
    // the page played it; what falls before the show's start is dropped): a tick this
    // encoder never got is silence in the track, so later sound keeps its time.
    packets.sound.resize(enc.sounds.size());
    if (tick->sound) {
      const int64_t count = static_cast<int64_t>(tick->sound->size()) / encode::kSoundChannels;
      const int64_t first = tick->first_sample - kSoundLatencySamples;
      const int64_t skip = std::clamp<int64_t>(-first, 0, count);
      sound_end = tick->first_sample + count;
      for (size_t k = 0; k < enc.sounds.size() && skip < count && status.ok(); ++k) {
        status = enc.sounds[k]->Encode(tick->sound->data() + skip * encode::kSoundChannels,
                                       count - skip, first + skip, &packets.sound[k]);
      }
    }
    if (!status.ok()) {
      failed = true;
      as_run_.Line(CurrentTick(), "sound encoder of " + enc.outputs.front()->spec.id + " failed: " +
                                      std::string(status.message()));
      continue;
    }
    hand_out(std::move(packets));
  }
  // The end: what the encoders still hold (zero-latency H.264 holds nothing).
  if (!failed) {
    TickPackets rest;
    rest.index = -1;
    for (size_t i = 0; i < enc.encoders.size(); ++i) {
      std::vector<encode::PacketPtr> made;
      if (!enc.encoders[i]->Flush(&made).ok()) continue;
      for (encode::PacketPtr& packet : made) {
        rest.packets.push_back(std::move(packet));
        rest.streams.push_back(static_cast<int>(i));
      }
    }
    // The track ends with the pictures: the last kSoundLatencySamples (sound the page made
    // after the last tick's picture) are silence.
    rest.sound.resize(enc.sounds.size());
    const int64_t pad_from = std::max<int64_t>(0, sound_end - kSoundLatencySamples);
    for (size_t k = 0; k < enc.sounds.size(); ++k) {
      if (!enc.sounds[k]->Encode(nullptr, sound_end - pad_from, pad_from, &rest.sound[k]).ok() ||
          !enc.sounds[k]->Flush(&rest.sound[k]).ok()) {
        rest.sound[k].clear();
      }
    }
    if (!rest.packets.empty() || !enc.sounds.empty()) {
      for (Output* out : enc.outputs) out->queue->TryPush(rest);
    }
  }
  for (Output* out : enc.outputs) out->queue->Close();
}

void Engine::Impl::OutputLoop(Output& out) {
  milliseconds backoff = kFirstBackoff;
  int64_t retry_at_ns = 0;
  // An output starts, and starts again after a gap, at a tick whose packets are keyframes.
  bool wait_for_keyframe = true;
  encode::LibavLogCapture libav_lines;  // libav's lines about this output, for last_error.
  // The sink's byte count after each frame written on this connection (the last few
  // seconds'): a receiver that acknowledges (SRT) and went away never got the frames that
  // end past the last byte it acknowledged.
  std::deque<int64_t> frame_ends;
  int64_t earlier_bytes = 0;  // What the sinks of earlier connections took.
  encode::SrtLinkStats earlier_link;  // SRT's totals on earlier connections.
  auto take_link = [&](bool closing) {
    if (!out.muxer) return;
    const std::optional<encode::SrtLinkStats> link = out.muxer->link();
    if (!link) return;
    out.srt = true;
    out.srt_dropped = earlier_link.packets_dropped + link->packets_dropped;
    out.srt_retransmitted = earlier_link.packets_retransmitted + link->packets_retransmitted;
    out.srt_rtt_ms = link->rtt_ms;
    if (closing) {
      earlier_link.packets_dropped += link->packets_dropped;
      earlier_link.packets_retransmitted += link->packets_retransmitted;
    }
  };
  auto fail = [&](const Status& status) {
    take_link(/*closing=*/true);
    std::string message(status.message());
    const std::string said = libav_lines.Last();
    if (!said.empty() && message.find(said) == std::string::npos) message += " (libav: " + said + ")";
    if (const std::optional<int64_t> from = out.muxer ? out.muxer->unacknowledged_from() : std::nullopt) {
      const int64_t lost = std::count_if(frame_ends.begin(), frame_ends.end(), [&](int64_t end) { return end > *from; });
      if (lost > 0) {
        out.frames -= lost;
        out.dropped += lost;
        message += "; the " + std::to_string(lost) + " frames sent since its last acknowledgement count as dropped";
      }
    }
    frame_ends.clear();
    if (out.muxer) earlier_bytes += out.muxer->bytes_written();
    out.rate.Clear();
    {
      MutexLock lock(&out.mu);
      out.last_error = message;
    }
    as_run_.Line(CurrentTick(), "output " + out.spec.id + " failed: " + message);
    out.muxer.reset();
    out.connected = false;
    retry_at_ns = clock_.MonotonicNs() + nanoseconds(backoff).count();
    backoff = std::min(backoff * 2, kMaxBackoff);
  };
  while (std::optional<TickPackets> tick = out.queue->Pop()) {
    const bool end = tick->index < 0;  // The encoders' last packets, after the last tick.
    if (!out.muxer) {
      if (end || clock_.MonotonicNs() < retry_at_ns || stopping_ || draining_) {
        if (!end) out.dropped++;
        continue;
      }
      out.connecting = true;
      libav_lines.Clear();
      Result<std::unique_ptr<encode::PacketMuxer>> opened = OpenOutput(out);
      out.connecting = false;
      if (!opened.ok()) {
        fail(opened.status());
        out.dropped++;
        continue;
      }
      if (out.frames > 0 || out.reconnects > 0 || out.dropped > 0) out.reconnects++;
      out.muxer = std::move(opened).value();
      out.connected = true;
      backoff = kFirstBackoff;
      wait_for_keyframe = true;
      out.encoding->keyframe_wanted = true;
      as_run_.Line(CurrentTick(), "output " + out.spec.id + " connected to " + out.spec.stream.sink.target);
    }
    if (tick->after_gap && !wait_for_keyframe) {
      wait_for_keyframe = true;
      out.encoding->keyframe_wanted = true;
    }
    if (wait_for_keyframe && !end) {
      if (!tick->keyframe) {
        out.dropped++;
        continue;
      }
      wait_for_keyframe = false;
    }
    if (wait_for_keyframe) continue;
    Status written;
    for (size_t i = 0; i < tick->packets.size() && written.ok(); ++i) {
      written = out.muxer->Write(*tick->packets[i], tick->streams[i]);
    }
    if (out.sound >= 0 && static_cast<size_t>(out.sound) < tick->sound.size()) {
      const int stream = static_cast<int>(out.encoding->encoders.size());  // After the pictures.
      for (const encode::PacketPtr& packet : tick->sound[static_cast<size_t>(out.sound)]) {
        if (!written.ok()) break;
        written = out.muxer->Write(*packet, stream);
      }
    }
    if (!written.ok()) {
      fail(written);
      if (!end) out.dropped++;
      continue;
    }
    if (!end) out.frames++;
    const int64_t connection_bytes = out.muxer->bytes_written();
    out.bytes = earlier_bytes + connection_bytes;
    if (!end) {
      frame_ends.push_back(connection_bytes);
      if (frame_ends.size() > kFrameEndsKept) frame_ends.pop_front();
    }
    take_link(/*closing=*/false);
    out.rate.Add(clock_.MonotonicNs(), out.frames.load(), out.bytes.load());
  }
  if (out.muxer) {
    take_link(/*closing=*/false);  // Before Finish() closes the connection.
    out.final_status = out.muxer->Finish();
    out.bytes = earlier_bytes + out.muxer->bytes_written();
    if (!out.final_status.ok()) {
      out.final_status = Status(out.final_status.code(), "output " + out.spec.id + ": " +
                                                             std::string(out.final_status.message()));
    }
  }
}

ShowStatus Engine::Impl::CurrentStatus() const {
  ShowStatus st;
  st.clock.ticks = ticks_made_.load();
  st.clock.late = late_.load();
  st.clock.phase_p50_us = phase_.Quantile(0.5);
  st.clock.phase_p99_us = phase_.Quantile(0.99);
  st.clock.phase_max_us = phase_.Max();
  st.clock.mix_p50_us = mix_.Quantile(0.5);
  st.clock.mix_p99_us = mix_.Quantile(0.99);
  st.clock.mix_max_us = mix_.Max();
  st.clock.sound_samples = sound_samples_.load();
  st.sound = sound_note_;
  {
    MutexLock lock(&scheduling_mu_);
    st.clock.scheduling = scheduling_;
  }
  st.seconds = static_cast<double>(st.clock.ticks) / show_.fps.ToDouble();
  for (const auto& s : sources_) {
    SourceStatus& ss = st.sources.emplace_back();
    ss.id = s->spec.id;
    ss.worker = s->worker;
    ss.phase = s->phase.ToDouble();
    const FrameSlotStats slot = s->slot.Stats();
    ss.frames = s->frames.load();
    ss.repeated = slot.repeated;
    ss.discarded = slot.discarded;
    ss.skipped = s->skipped.load();
    ss.restarts = s->restarts.load();
    ss.browser_pid = s->browser_pid.load();
    ss.draw_p50_ms = s->draw_time.Quantile(0.5) / 1000;
    ss.draw_p99_ms = s->draw_time.Quantile(0.99) / 1000;
    ss.prepare_p50_ms = s->prepare_time.Quantile(0.5) / 1000;
    ss.lead_p50_ms = s->lead_time.Quantile(0.5) / 1000;
    ss.lead_ms = static_cast<double>(workers_[s->worker_index]->lead_ns.load()) / 1e6;
    ss.step = workers_[s->worker_index]->step.load();
    ss.last_paint_ms = s->last_paint_ms.load();
    ss.arrival_ms = static_cast<double>(slot.arrival_offset_ns) / 1e6;
    ss.fps_show = st.seconds > 0 ? static_cast<double>(slot.taken) / st.seconds : 0;
    ss.freshness_show = st.clock.ticks > 0 ? static_cast<double>(slot.taken) / static_cast<double>(st.clock.ticks) : 0;
    const int window = s->freshness->ticks();
    ss.freshness = window > 0 ? static_cast<double>(s->freshness->count()) / window : 0;
    ss.fps = ss.freshness * show_.fps.ToDouble();
    {
      MutexLock lock(&s->mu);
      ss.visible = s->target > 0;
      ss.opacity = s->level * s->spec.opacity;
      ss.last_error = s->last_error;
      ss.last_error_ms = s->last_error_ms;
    }
    ss.page_errors = s->page_errors.load();
    const Worker& w = *workers_[s->worker_index];
    if (w.sound) {
      const SoundBufferStats sound = w.sound->Stats();
      ss.sound_live = sound.started && w.sound_capture->Connected();
      ss.sound_underruns = sound.underruns;
      ss.sound_padded = sound.padded;
      ss.sound_overruns = sound.overruns;
      ss.sound_dropped = sound.dropped;
      ss.sound_gaps = sound.gaps;
      ss.sound_gap_samples = sound.gap_samples;
      ss.sound_buffer_ms = static_cast<double>(sound.level) * 1000.0 / encode::kSoundRate;
    }
  }
  for (const auto& o : outputs_) {
    OutputStatus& os = st.outputs.emplace_back();
    os.id = o->spec.id;
    os.target = o->spec.stream.sink.target;
    os.frames = o->frames.load();
    os.dropped = o->dropped.load();
    os.queue_depth = static_cast<int64_t>(o->queue->size());
    os.bytes = o->bytes.load();
    const auto [fps, bytes_per_second] = o->rate.Rate(clock_.MonotonicNs(), os.frames, os.bytes);
    os.fps = fps;
    os.bitrate_kbps = bytes_per_second * 8 / 1000;
    os.encoder = o->encoding->index;
    os.reconnects = o->reconnects.load();
    os.connected = o->connected.load();
    os.srt = o->srt.load();
    os.srt_dropped_packets = o->srt_dropped.load();
    os.srt_retransmitted_packets = o->srt_retransmitted.load();
    os.srt_rtt_ms = o->srt_rtt_ms.load();
    {
      MutexLock lock(&o->mu);
      os.last_error = o->last_error;
    }
  }
  return st;
}

Source* Engine::Impl::SourceOf(const std::string& id) {
  for (auto& s : sources_) {
    if (s->spec.id == id) return s.get();
  }
  return nullptr;
}

Status Engine::Impl::SetVisible(const std::string& id, bool visible, int fade_frames) {
  Source* s = SourceOf(id);
  if (s == nullptr) return NotFoundError("no source is called '" + id + "'");
  if (fade_frames < 0 || fade_frames > 100'000) {
    return InvalidArgumentError("a fade of " + std::to_string(fade_frames) +
                                " frames is outside 0 to 100000");
  }
  {
    MutexLock lock(&s->mu);
    s->target = visible ? 1 : 0;
    s->step = fade_frames == 0 ? 1.0 : 1.0 / fade_frames;
  }
  as_run_.Line(CurrentTick(), std::string(visible ? "show " : "hide ") + id +
                                  (fade_frames == 0 ? " (cut)" : " (fade over " + std::to_string(fade_frames) + " frames)"));
  return Status::Ok();
}

Result<Engine::Impl::PageRef> Engine::Impl::PageOf(const std::string& id) {
  for (auto& w : workers_) {
    for (size_t i = 0; i < w->sources.size(); ++i) {
      if (w->sources[i]->spec.id != id) continue;
      MutexLock lock(&w->page_mu);
      if (w->pages.size() <= i) return UnavailableError("source '" + id + "' is restarting; try again");
      return PageRef{w->browser, w->pages[i], w->sources[i], w.get(), i};
    }
  }
  return NotFoundError("no source is called '" + id + "'");
}

Result<std::string> Engine::Impl::CallSource(const std::string& id, const std::string& expression) {
  PR_ASSIGN_OR_RETURN(PageRef ref, PageOf(id));
  as_run_.Line(CurrentTick(), "call " + id + ": " + expression.substr(0, 200));
  Result<std::string> result = ref.page->Evaluate(expression, HangLimit());
  if (result.ok()) {
    MutexLock lock(&ref.source->mu);
    if (ref.source->calls.size() == kRememberedCalls) ref.source->calls.erase(ref.source->calls.begin());
    ref.source->calls.push_back(expression);
  }
  return result;
}

void Engine::Impl::RestoreState(Worker& w, const WorkerPages& current) {
  const auto deadline = std::chrono::steady_clock::now() + show_.source_timeout;
  for (size_t i = 0; i < w.sources.size(); ++i) {
    std::vector<std::string> calls;
    {
      MutexLock lock(&w.sources[i]->mu);
      calls = w.sources[i]->calls;
    }
    // Also without calls to replay: a picture taken before the page has loaded would put a
    // blank source on air where its last picture still stands.
    while (!current.pages[i]->loaded() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    for (const std::string& call : calls) {
      Result<std::string> replayed = current.pages[i]->Evaluate(call);
      if (!replayed.ok()) {
        as_run_.Line(CurrentTick(), "source " + w.sources[i]->spec.id + ": replaying '" +
                                        call.substr(0, 80) + "' failed: " +
                                        std::string(replayed.status().message()));
      }
    }
  }
}

Status Engine::Impl::Navigate(const std::string& id, const std::string& url) {
  PR_ASSIGN_OR_RETURN(PageRef ref, PageOf(id));
  std::string target = url;
  if (target.empty()) {
    MutexLock lock(&ref.source->mu);
    target = ref.source->current_url;
  }
  as_run_.Line(CurrentTick(), (url.empty() ? "reload " + id : "navigate " + id + " to " + url));
  // The new page is loaded beside the one on air, in the same browser, and takes its place
  // only once it has loaded: until then (and for good, if it cannot load) the source shows
  // its old page, with its transparency, and keeps its template state.
  Result<std::unique_ptr<capture::LivePage>> opened =
      capture::LivePage::Open(*ref.browser, PageOptions(*ref.source, target));
  if (!opened.ok()) {
    as_run_.Line(CurrentTick(), "navigate " + id + " refused, the source is unchanged: " +
                                    std::string(opened.status().message()));
    return Status(opened.status().code(), std::string(opened.status().message()) +
                                              "; the source still shows its page");
  }
  std::shared_ptr<capture::LivePage> page = std::move(opened).value();
  const auto deadline = std::chrono::steady_clock::now() + show_.source_timeout;
  while (!page->loaded() && std::chrono::steady_clock::now() < deadline && !stopping_) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  if (!page->loaded()) {
    const std::string why = target.substr(0, 200) + " did not finish loading within " +
                            std::to_string(show_.source_timeout.count() / 1000) +
                            " s; the source still shows its page";
    as_run_.Line(CurrentTick(), "navigate " + id + " refused: " + why);
    return DeadlineExceededError(why);
  }
  {
    Worker& w = *ref.worker;
    MutexLock lock(&w.page_mu);
    if (w.browser != ref.browser || w.pages.size() <= ref.index) {
      return UnavailableError("source '" + id + "' restarted meanwhile; try again");
    }
    w.pages[ref.index] = std::move(page);
  }
  {
    MutexLock lock(&ref.source->mu);
    ref.source->current_url = target;
    ref.source->calls.clear();  // A new document starts from its own state.
  }
  // Its first pictures are taken whether or not the page changed; the one before is kept
  // on air until then.
  ref.source->hold_pictures = kHeldPictures;
  ref.source->has_picture = false;
  as_run_.Line(CurrentTick(), "source " + id + " now shows " + target.substr(0, 200));
  return Status::Ok();
}

void Engine::Impl::Shutdown() {
  stopping_ = true;
  for (auto& w : workers_) {
    w->thread.request_stop();
    if (w->thread.joinable()) w->thread.join();
    if (w->prepare_queue) w->prepare_queue->Close();
    if (w->prepare_thread.joinable()) w->prepare_thread.join();
  }
  for (auto& enc : encodings_) {
    enc->queue->Close();
    if (enc->thread.joinable()) enc->thread.join();
  }
  for (auto& out : outputs_) {
    out->queue->Close();
    if (out->thread.joinable()) out->thread.join();
  }
  for (auto& w : workers_) {
    MutexLock lock(&w->page_mu);
    w->pages.clear();
    w->browser.reset();
  }
  encode::SetLibavLogSink(nullptr);
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::Start(const ShowSpec& show, TickClock& clock) {
  auto impl = std::make_unique<Impl>(show, clock);
  PR_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Status Engine::Run(int64_t ticks, const std::atomic<bool>* stop) { return impl_->Run(ticks, stop); }
ShowStatus Engine::CurrentStatus() const { return impl_->CurrentStatus(); }
std::shared_ptr<const Picture> Engine::Program() const { return impl_->Program(); }
std::shared_ptr<const Picture> Engine::SourcePicture(const std::string& source) const {
  return impl_->SourcePicture(source);
}
Status Engine::SetVisible(const std::string& source, bool visible, int fade_frames) {
  return impl_->SetVisible(source, visible, fade_frames);
}
Result<std::string> Engine::CallSource(const std::string& source, const std::string& expression) {
  return impl_->CallSource(source, expression);
}
Status Engine::Navigate(const std::string& source, const std::string& url) {
  return impl_->Navigate(source, url);
}

}  // namespace pagereel::live
