#include "render/renderer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "audio/media_store.h"
#include "audio/mixer.h"
#include "audio/summary.h"
#include "audio/timeline.h"
#include "base/bounded_queue.h"
#include "base/mutex.h"
#include "base/thread.h"
#include "encode/concat.h"
#include "encode/film_writer.h"
#include "render/segments.h"
#include "render/work_dir.h"

namespace pagereel::render {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The longest film a page may ask for by itself (24 hours), as for --duration.
constexpr double kMaxDurationSeconds = 24 * 3600;

// Screenshots a segment's writer holds before its lane waits: enough to ride out the
// encoder's own bursts (a keyframe, a flush), small enough to keep memory flat (a 1080p
// PNG screenshot is about 4 MB).
constexpr size_t kWriterQueueFrames = 8;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Range(int64_t first, int64_t end) {
  return "frames " + std::to_string(first) + "-" + std::to_string(end - 1);
}

// What each of the film's segments is (encode/concat.h says why a GIF's are another kind).
encode::FilmSpec SegmentFilm(const RenderOptions& options) {
  encode::FilmSpec film;
  film.kind = encode::SegmentKind(options.kind);
  film.width = options.page.width;
  film.height = options.page.height;
  film.fps = options.page.fps;
  film.alpha = options.page.alpha;
  film.quality = options.quality;
  film.preset = options.preset;
  return film;
}

std::string ScreenshotsText(const RenderOptions& options) {
  if (options.page.alpha || options.page.screenshots == encode::ImageFormat::kPng) {
    return "PNG (exact)";
  }
  return "JPEG q" + std::to_string(options.page.jpeg_quality);
}

std::string SegmentName(const Segment& s) {
  return "segment " + std::to_string(s.index) + " (" + Range(s.first_frame, s.end_frame()) + ")";
}

// One lane's browser and the page it is rendering. The page must go before its browser:
// Close() does that, and assignment is deleted, since a member-wise move would replace the
// browser first and leave the old page on a browser that is gone.
struct LaneState {
  LaneState() = default;
  LaneState(LaneState&&) = default;
  LaneState& operator=(LaneState&&) = delete;
  ~LaneState() { Close(); }

  void Close() {
    page.reset();
    browser.reset();
  }

  std::unique_ptr<browser::Browser> browser;
  std::unique_ptr<capture::Page> page;
};

// What a lane did, added to RenderStats when it ends.
struct LaneCounters {
  Clock::duration busy{};
  Clock::duration preroll_busy{};
  int64_t preroll_frames = 0;
  int64_t frames = 0;
  int64_t loads = 0;
  int64_t jumps = 0;
  int retries = 0;
};

// --preroll auto's one comparison: the frame after the first segment, made by a page that
// ran every frame before it and by one that jumped there. Whoever renders the first
// segment offers the run frame as it goes; the first lane that would jump makes the
// jumped one; if nobody in this run renders the first segment, a waiting lane runs to the
// frame itself. Thread-safe.
class JumpCheck {
 public:
  enum class Way { kRun = 0, kJumped = 1 };
  enum class Verdict { kUnknown, kAgree, kDisagree };

  JumpCheck(int64_t frame, bool run_frame_coming)
      : frame_(frame), run_coming_(run_frame_coming) {}

  int64_t frame() const { return frame_; }

  Verdict verdict() const {
    MutexLock lock(&mu_);
    return verdict_;
  }

  bool Wanted(Way way) const {
    MutexLock lock(&mu_);
    return verdict_ == Verdict::kUnknown && !frames_[Index(way)].has_value();
  }

  // Once per way; the run frame only when nobody will offer it along the way.
  bool Claim(Way way) {
    MutexLock lock(&mu_);
    if (verdict_ != Verdict::kUnknown || claimed_[Index(way)]) return false;
    if (way == Way::kRun && run_coming_) return false;
    claimed_[Index(way)] = true;
    return true;
  }

  // A claim that could not be kept (the lane failed): someone else may try.
  void Unclaim(Way way) {
    MutexLock lock(&mu_);
    claimed_[Index(way)] = false;
    if (way == Way::kRun) run_coming_ = false;
    cv_.SignalAll();
  }

  void Offer(Way way, const capture::EncodedFrame& frame) {
    MutexLock lock(&mu_);
    std::optional<std::string>& slot = frames_[Index(way)];
    if (verdict_ != Verdict::kUnknown || slot.has_value()) return;
    slot.emplace(frame.base64(), frame.length);
    if (frames_[0].has_value() && frames_[1].has_value()) {
      verdict_ = *frames_[0] == *frames_[1] ? Verdict::kAgree : Verdict::kDisagree;
    }
    cv_.SignalAll();
  }

  // Until there is a verdict, or `stop`. With `run_claimable`, returns kUnknown early when
  // the run frame is nobody's job any more, so the caller can claim it.
  Verdict Wait(const std::function<bool()>& stop) {
    MutexLock lock(&mu_);
    while (verdict_ == Verdict::kUnknown) {
      if (stop()) return Verdict::kUnknown;
      if (!run_coming_ && !claimed_[Index(Way::kRun)] && !frames_[Index(Way::kRun)]) {
        return Verdict::kUnknown;
      }
      cv_.WaitFor(&mu_, std::chrono::milliseconds(100));
    }
    return verdict_;
  }

 private:
  static size_t Index(Way way) { return static_cast<size_t>(way); }

  const int64_t frame_;
  mutable Mutex mu_;
  CondVar cv_;
  bool run_coming_ GUARDED_BY(mu_);
  bool claimed_[2] GUARDED_BY(mu_) = {false, false};
  std::optional<std::string> frames_[2] GUARDED_BY(mu_);  // Base64 of each way's frame.
  Verdict verdict_ GUARDED_BY(mu_) = Verdict::kUnknown;
};

class Run;

// Encodes one segment on its own thread, so lanes never wait for each other's frames:
// decode and colour conversion, the encoder, then the finished file is hashed and recorded
// in the work folder. Put() blocks while kWriterQueueFrames screenshots wait.
class SegmentWriter {
 public:
  // Opens the film writer on its own thread (x264's start-up stays off the lane's path).
  SegmentWriter(Run& run, const Segment& segment, encode::FilmWriterOptions writer_options,
                std::string reached_by);
  ~SegmentWriter();  // Abandons an unfinished segment (its partial file is removed).

  // False once the writer failed or the render stopped.
  bool Put(capture::EncodedFrame frame);
  // No more frames: the thread finishes the file and records it, with the sound timeline
  // of its page up to the segment's end (audio::ToJson).
  void Close(std::string sound_json);

 private:
  void Loop();

  Run& run_;
  const Segment segment_;
  const std::string reached_by_;
  const encode::FilmWriterOptions writer_options_;
  BoundedQueue<capture::EncodedFrame> queue_{kWriterQueueFrames};
  std::string sound_json_;  // Set before closed_.
  std::atomic<bool> closed_{false};
  std::jthread thread_;
};

class Run {
 public:
  Run(const RenderOptions& options, int64_t frames, WorkDir work_dir, std::vector<Segment> todo,
      int64_t frames_resumed, int64_t shard_frames)
      : options_(options),
        page_options_(options.page),
        frames_(frames),
        segment_frames_(work_dir.film().segment_frames),
        work_dir_(std::move(work_dir)),
        todo_(std::move(todo)),
        lanes_(std::max(1, std::min<int>(options.lanes, static_cast<int>(todo_.size())))),
        queue_(todo_, lanes_, Stealing::kNo),
        frames_resumed_(frames_resumed),
        shard_frames_(shard_frames) {
    page_options_.should_stop = [this] { return Stopped(); };
    if (options_.preroll == PreRollMode::kJump) queue_.set_stealing(Stealing::kYes);
    // The check frame is the first frame of segment 1. A run that renders segment 0 has its
    // lane 0 run there anyway (lane 0's block starts with segment 0).
    const bool has_first = !todo_.empty() && todo_.front().index == 0;
    if (options_.preroll == PreRollMode::kAuto && frames_ > segment_frames_) {
      check_.emplace(segment_frames_, has_first);
    }
  }

  bool Stopped() const {
    return (options_.cancel != nullptr && options_.cancel->load()) || stopped_.load();
  }

  void Fail(Status status) {
    {
      MutexLock lock(&mu_);
      if (failure_.ok()) failure_ = std::move(status);
    }
    stopped_.store(true);
  }

  Status failure() {
    MutexLock lock(&mu_);
    return failure_;
  }

  // Whether --strict ended the render over something the page reported: the same command
  // would end the same way, so its finished segments are worth nothing.
  bool RefusedByStrict() {
    MutexLock lock(&mu_);
    return refused_by_strict_;
  }

  void Note(const std::string& text) {
    if (options_.on_note) options_.on_note(text);
  }

  const WorkDir& work_dir() const { return work_dir_; }
  const RenderOptions& options() const { return options_; }

  // A writer's frame is written: progress, in whatever order segments advance.
  void FrameWritten() {
    MutexLock lock(&progress_mu_);
    ++frames_written_;
    if (options_.on_progress) {
      options_.on_progress(Progress{frames_resumed_ + frames_written_, shard_frames_,
                                    frames_resumed_, Clock::now() - start_});
    }
  }

  void WriterDone(double decode_seconds, double encode_seconds, bool finished) {
    MutexLock lock(&mu_);
    stats_.decode_seconds += decode_seconds;
    stats_.encode_seconds += encode_seconds;
    if (finished) ++stats_.segments_rendered;
  }

  void LaneLoop(int lane, LaneState state) {
    SetCurrentThreadName("lane-" + std::to_string(lane));
    LaneCounters counters;
    std::vector<std::unique_ptr<SegmentWriter>> writers;
    std::optional<Segment> segment = queue_.Take(lane);
    while (segment && !Stopped()) {
      // A lane keeps at most two writers: the one finishing and the one it feeds.
      if (writers.size() >= 2) writers.erase(writers.begin());
      if (!RenderSegment(lane, *segment, state, counters, writers)) break;
      segment = queue_.Take(lane);
      if (!segment || !check_ || segment->first_frame != check_->frame()) {
        OfferRunFrame(state, counters);
      }
    }
    writers.clear();  // Joins: finishes closed segments, abandons the rest.
    state.Close();
    MutexLock lock(&mu_);
    stats_.browser_seconds += Seconds(counters.busy);
    stats_.preroll_frames += counters.preroll_frames;
    stats_.preroll_seconds += Seconds(counters.preroll_busy);
    stats_.page_loads += counters.loads;
    stats_.retries += counters.retries;
    stats_.jumps += counters.jumps;
    stats_.frames_rendered += counters.frames;
  }

  // Renders one segment into its own writer; false when the render is over (failed,
  // cancelled).
  bool RenderSegment(int lane, const Segment& segment, LaneState& state, LaneCounters& counters,
                     std::vector<std::unique_ptr<SegmentWriter>>& writers) {
    encode::FilmWriterOptions writer_options;
    writer_options.film = SegmentFilm(options_);
    writer_options.path = work_dir_.SegmentTarget(segment.index);
    if (encode::IsSequence(writer_options.film.kind)) {
      std::error_code ec;
      fs::create_directories(work_dir_.SegmentPath(segment.index), ec);
    }

    int attempts = 1;
    std::unique_ptr<SegmentWriter> writer;
    for (int64_t f = segment.first_frame; f < segment.end_frame();) {
      if (Stopped()) return false;
      Clock::time_point start = Clock::now();
      std::optional<capture::EncodedFrame> ready;
      std::string reached_by;
      Status reached = f == segment.first_frame ? ReachStart(state, f, counters, &ready, &reached_by)
                                                : ReachAfterRetry(state, f, counters);
      Result<capture::EncodedFrame> frame =
          !reached.ok() ? Result<capture::EncodedFrame>(reached)
          : ready       ? Result<capture::EncodedFrame>(std::move(*ready))
                        : state.page->Capture(f);
      counters.busy += Clock::now() - start;
      if (state.page && !CollectMessages(*state.page)) return false;
      if (frame.ok()) {
        if (!writer) {
          writer = std::make_unique<SegmentWriter>(*this, segment, writer_options, reached_by);
        }
        if (check_ && f == check_->frame() && !state.page->jumped()) {
          check_->Offer(JumpCheck::Way::kRun, *frame);
        }
        if (!writer->Put(std::move(frame).value())) return false;
        ++counters.frames;
        ++f;
        continue;
      }
      if (Stopped()) return false;
      const std::string where = SegmentName(segment);
      if (frame.status().code() == StatusCode::kUnavailable &&
          attempts < options_.max_attempts_per_segment) {
        ++attempts;
        ++counters.retries;
        Note("lane " + std::to_string(lane) + ": " + frame.status().ToString() + "; retrying " +
             where + " from frame " + std::to_string(f) + " on a fresh browser (attempt " +
             std::to_string(attempts) + " of " + std::to_string(options_.max_attempts_per_segment) +
             ")");
        state.page.reset();
        state.browser.reset();
        continue;
      }
      Fail(frame.status().WithContext(where));
      return false;
    }
    if (!writer) return true;  // A segment has frames; this only tells the compiler so.
    Result<audio::Timeline> sound =
        state.page->Sound(audio::MediaStore(work_dir_.MediaPath()),
                          segment.end_frame() == frames_ ? capture::Page::SoundEnd::kFilmEnds
                                                         : capture::Page::SoundEnd::kMoreFrames);
    if (!sound.ok()) {
      Fail(sound.status().WithContext("the sound of " + SegmentName(segment)));
      return false;
    }
    writer->Close(audio::ToJson(*sound));
    writers.push_back(std::move(writer));
    return true;
  }

  // Makes sure the lane has a browser and a page no further than frame `f`.
  Status OpenPageAtOrBefore(LaneState& state, int64_t f, LaneCounters& counters) {
    if (state.page && state.page->next_frame() <= f) return Status::Ok();
    state.page.reset();
    if (!state.browser || !state.browser->client().connection_status().ok()) {
      state.browser.reset();
      PR_ASSIGN_OR_RETURN(state.browser, browser::Browser::Launch(options_.launch));
    }
    ++counters.loads;
    PR_ASSIGN_OR_RETURN(state.page, capture::Page::Open(*state.browser, page_options_));
    return Status::Ok();
  }

  Status RunTo(LaneState& state, int64_t f, LaneCounters& counters) {
    if (state.page->jumped()) {
      state.page.reset();  // A jumped page cannot be run exactly from where it is.
      PR_RETURN_IF_ERROR(OpenPageAtOrBefore(state, f, counters));
    }
    Clock::time_point start = Clock::now();
    counters.preroll_frames += f - state.page->next_frame();
    Status s = state.page->PreRoll(f);
    counters.preroll_busy += Clock::now() - start;
    return s;
  }

  Status JumpTo(LaneState& state, int64_t f, LaneCounters& counters) {
    Clock::time_point start = Clock::now();
    ++counters.jumps;
    Status s = state.page->JumpTo(f);
    counters.preroll_busy += Clock::now() - start;
    return s;
  }

  // Brings the lane's page to frame `f`, the first of a segment. With auto and no verdict
  // yet, this lane may make the check's frames; `ready` then may hold frame `f` itself.
  Status ReachStart(LaneState& state, int64_t f, LaneCounters& counters,
                    std::optional<capture::EncodedFrame>* ready, std::string* reached_by) {
    PR_RETURN_IF_ERROR(OpenPageAtOrBefore(state, f, counters));
    const int64_t at = state.page->next_frame();
    if (at == f) {
      *reached_by = f == 0 ? "start" : "continued";
      return Status::Ok();
    }
    switch (Mode()) {
      case PreRollMode::kExact:
        *reached_by = "run";
        return RunTo(state, f, counters);
      case PreRollMode::kJump:
        *reached_by = "jump";
        return JumpTo(state, f, counters);
      case PreRollMode::kAuto:
        break;
    }
    PR_RETURN_IF_ERROR(MakeCheckFrames(state, f, counters, ready));
    if (ready->has_value()) {
      *reached_by = "jump";
      return Status::Ok();
    }
    PR_RETURN_IF_ERROR(OpenPageAtOrBefore(state, f, counters));
    if (state.page->next_frame() == f) {
      *reached_by = "continued";
      return Status::Ok();
    }
    if (Mode() == PreRollMode::kJump) {
      *reached_by = "jump";
      return JumpTo(state, f, counters);
    }
    *reached_by = "run";
    return RunTo(state, f, counters);
  }

  // After a crash inside a segment: the fresh page reaches `f` the way segment starts are
  // reached once the mode is settled; while auto is undecided, exactly (this lane may be
  // the one whose run frame the check waits for).
  Status ReachAfterRetry(LaneState& state, int64_t f, LaneCounters& counters) {
    PR_RETURN_IF_ERROR(OpenPageAtOrBefore(state, f, counters));
    if (state.page->next_frame() == f) return Status::Ok();
    if (Mode() == PreRollMode::kJump) return JumpTo(state, f, counters);
    return RunTo(state, f, counters);
  }

  // The settled way to reach segment starts: auto becomes jump or exact on its verdict.
  PreRollMode Mode() const {
    if (options_.preroll != PreRollMode::kAuto) return options_.preroll;
    if (!check_) return PreRollMode::kExact;
    switch (check_->verdict()) {
      case JumpCheck::Verdict::kAgree: return PreRollMode::kJump;
      case JumpCheck::Verdict::kDisagree: return PreRollMode::kExact;
      case JumpCheck::Verdict::kUnknown: return PreRollMode::kAuto;
    }
    return PreRollMode::kExact;
  }

  // Auto, undecided: makes whichever of the check's frames is this lane's to make, and
  // waits for the verdict. When the jumped frame is the segment's first frame (`f` is the
  // check frame) and the verdict is to jump, it is handed back in `ready`.
  Status MakeCheckFrames(LaneState& state, int64_t f, LaneCounters& counters,
                         std::optional<capture::EncodedFrame>* ready) {
    const int64_t c = check_->frame();
    std::optional<capture::EncodedFrame> jumped;
    if (check_->Claim(JumpCheck::Way::kJumped)) {
      Status made = [&]() -> Status {
        PR_RETURN_IF_ERROR(OpenPageAtOrBefore(state, c, counters));
        if (state.page->next_frame() < c) PR_RETURN_IF_ERROR(JumpTo(state, c, counters));
        PR_ASSIGN_OR_RETURN(capture::EncodedFrame frame, state.page->Capture(c));
        check_->Offer(JumpCheck::Way::kJumped, frame);
        jumped = std::move(frame);
        return Status::Ok();
      }();
      if (!made.ok()) {
        check_->Unclaim(JumpCheck::Way::kJumped);
        return made;
      }
    }
    for (;;) {
      JumpCheck::Verdict v = check_->Wait([this] { return Stopped(); });
      if (Stopped()) return CancelledError("the render is ending");
      if (v == JumpCheck::Verdict::kAgree) {
        queue_.set_stealing(Stealing::kYes);
        NoteVerdict();
        if (jumped && f == c) *ready = std::move(jumped);
        return Status::Ok();
      }
      if (v == JumpCheck::Verdict::kDisagree) {
        NoteVerdict();
        return Status::Ok();
      }
      // Nobody renders the first segment in this run: run a page to the check frame here.
      if (check_->Claim(JumpCheck::Way::kRun)) {
        Status made = [&]() -> Status {
          state.page.reset();
          PR_RETURN_IF_ERROR(OpenPageAtOrBefore(state, c, counters));
          PR_RETURN_IF_ERROR(RunTo(state, c, counters));
          PR_ASSIGN_OR_RETURN(capture::EncodedFrame frame, state.page->Capture(c));
          check_->Offer(JumpCheck::Way::kRun, frame);
          return Status::Ok();
        }();
        if (!made.ok()) {
          check_->Unclaim(JumpCheck::Way::kRun);
          return made;
        }
      }
    }
  }

  // A lane that has just run up to the check frame without jumping offers it, if the
  // check still wants it (its next segment would not start there).
  void OfferRunFrame(LaneState& state, LaneCounters& counters) {
    if (!check_ || !state.page || state.page->jumped() ||
        state.page->next_frame() != check_->frame() || !check_->Wanted(JumpCheck::Way::kRun)) {
      return;
    }
    Clock::time_point start = Clock::now();
    Result<capture::EncodedFrame> frame = state.page->Capture(check_->frame());
    counters.busy += Clock::now() - start;
    if (frame.ok()) {
      check_->Offer(JumpCheck::Way::kRun, *frame);
    } else {
      check_->Unclaim(JumpCheck::Way::kRun);  // Someone else runs there.
      state.page.reset();
    }
  }

  void NoteVerdict() {
    MutexLock lock(&mu_);
    if (verdict_noted_) return;
    verdict_noted_ = true;
    const std::string frame = "frame " + std::to_string(check_->frame());
    if (check_->verdict() == JumpCheck::Verdict::kAgree) {
      stats_.preroll = "auto: jump (" + frame + " came out identical jumped and run)";
    } else {
      stats_.preroll = "auto: exact (" + frame + " differed jumped and run: the page keeps "
                       "state per animation frame, or dates things from its last tick)";
    }
  }

  // Records what the page reported, once per message and frame whichever lane saw it;
  // false when strict mode ends the render over it.
  bool CollectMessages(capture::Page& page) {
    std::vector<capture::PageMessage> messages = page.TakeMessages();
    if (messages.empty()) return true;
    MutexLock lock(&mu_);
    for (capture::PageMessage& m : messages) {
      std::string key = std::to_string(static_cast<int>(m.kind)) + '\n' + m.text + '\n' +
                        m.source + '\n' + std::to_string(m.frame);
      if (!seen_messages_.insert(std::move(key)).second) continue;
      ++stats_.page_message_count;
      if (stats_.page_messages.size() < kMaxReportedMessages) stats_.page_messages.push_back(m);
      if (options_.strict && failure_.ok()) {
        const std::string when =
            m.frame < 0 ? std::string("while it loaded") : "at frame " + std::to_string(m.frame);
        const std::string source = m.source.empty() ? "" : " (" + m.source + ")";
        refused_by_strict_ = true;
        failure_ = FailedPreconditionError(
            m.kind == capture::PageMessage::Kind::kDialog
                ? "the page " + options_.page.url + " opened a dialog " + when + ": " + m.text +
                      source + "; a film has nobody to answer it"
                : "the page " + options_.page.url + " reported an error " + when + ": " + m.text +
                      source);
      }
    }
    if (options_.strict && !failure_.ok()) {
      stopped_.store(true);
      return false;
    }
    return true;
  }

  Result<RenderStats> Go(LaneState first_lane) {
    start_ = Clock::now();
    {
      std::vector<std::jthread> threads;
      threads.emplace_back(
          [this, s = std::move(first_lane)]() mutable { LaneLoop(0, std::move(s)); });
      for (int i = 1; i < lanes_; ++i) {
        threads.emplace_back([this, i] { LaneLoop(i, LaneState{}); });
      }
    }  // Joins.
    if (Status f = failure(); !f.ok()) return f;
    if (options_.cancel != nullptr && options_.cancel->load()) {
      return CancelledError("render interrupted");
    }
    MutexLock lock(&mu_);
    if (stats_.preroll.empty()) {
      if (stats_.jumps == 0 && stats_.preroll_frames == 0) {
        stats_.preroll = "none needed";
      } else {
        stats_.preroll = stats_.jumps > 0 ? "jump" : "exact";
      }
    }
    stats_.frames = frames_;
    stats_.lanes = lanes_;
    return stats_;
  }

 private:
  const RenderOptions& options_;
  capture::PageOptions page_options_;  // options_.page, plus a stop check for pre-roll.
  const int64_t frames_;
  const int64_t segment_frames_;
  const WorkDir work_dir_;
  const std::vector<Segment> todo_;
  const int lanes_;
  SegmentQueue queue_;
  std::optional<JumpCheck> check_;
  const int64_t frames_resumed_;
  const int64_t shard_frames_;
  Clock::time_point start_;
  std::atomic<bool> stopped_{false};

  Mutex progress_mu_;
  int64_t frames_written_ GUARDED_BY(progress_mu_) = 0;

  Mutex mu_;
  Status failure_ GUARDED_BY(mu_);
  RenderStats stats_ GUARDED_BY(mu_);
  bool verdict_noted_ GUARDED_BY(mu_) = false;
  bool refused_by_strict_ GUARDED_BY(mu_) = false;
  std::set<std::string> seen_messages_ GUARDED_BY(mu_);
};

SegmentWriter::SegmentWriter(Run& run, const Segment& segment,
                             encode::FilmWriterOptions writer_options, std::string reached_by)
    : run_(run),
      segment_(segment),
      reached_by_(std::move(reached_by)),
      writer_options_(std::move(writer_options)),
      thread_([this] { Loop(); }) {}

SegmentWriter::~SegmentWriter() {
  queue_.Close();  // Unless Close() came first, the loop sees it unfinished and abandons.
  if (thread_.joinable()) thread_.join();
}

bool SegmentWriter::Put(capture::EncodedFrame frame) { return queue_.Push(std::move(frame)); }

void SegmentWriter::Close(std::string sound_json) {
  sound_json_ = std::move(sound_json);
  closed_.store(true);
  queue_.Close();
}

void SegmentWriter::Loop() {
  SetCurrentThreadName("seg-" + std::to_string(segment_.index));
  const std::string where = SegmentName(segment_);
  Result<std::unique_ptr<encode::FilmWriter>> opened = encode::FilmWriter::Open(writer_options_);
  if (!opened.ok()) {
    run_.Fail(opened.status().WithContext(where));
    queue_.Close();
    run_.WriterDone(0, 0, false);
    return;
  }
  std::unique_ptr<encode::FilmWriter> writer = std::move(opened).value();
  Sha256 frames_sha;
  Clock::duration hashing{};
  while (std::optional<capture::EncodedFrame> frame = queue_.Pop()) {
    if (run_.Stopped()) break;
    const Clock::time_point start = Clock::now();
    frames_sha.Update(frame->base64(), frame->length);
    hashing += Clock::now() - start;
    Status written = writer->Write(frame->screenshot());
    if (!written.ok()) {
      run_.Fail(written.WithContext("frame " + std::to_string(frame->index)));
      break;
    }
    run_.FrameWritten();
  }
  queue_.Close();  // However the loop ended, the lane's next Put() fails instead of waiting.
  bool finished = false;
  if (closed_.load() && writer->frames() == segment_.frame_count && !run_.Stopped()) {
    Status status = writer->Finish();
    SegmentRecord record;
    record.index = segment_.index;
    record.first_frame = segment_.first_frame;
    record.frame_count = segment_.frame_count;
    record.file = run_.work_dir().SegmentFileName(segment_.index);
    record.frames_sha256 = frames_sha.Hex();
    record.reached_by = reached_by_;
    const std::string path = run_.work_dir().SegmentPath(segment_.index);
    if (status.ok()) {
      std::error_code ec;
      record.bytes = 0;
      if (fs::is_directory(path, ec)) {
        for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
          record.bytes += static_cast<int64_t>(e.file_size(ec));
        }
      } else {
        record.bytes = static_cast<int64_t>(fs::file_size(path, ec));
      }
      Result<std::string> sha = HashPath(path);
      status = sha.ok() ? Status::Ok() : sha.status();
      if (sha.ok()) record.file_sha256 = *sha;
    }
    if (status.ok()) status = run_.work_dir().RecordSound(segment_.index, sound_json_);
    if (status.ok()) status = run_.work_dir().Record(record);
    if (status.ok()) {
      finished = true;
    } else {
      run_.Fail(status.WithContext(where));
    }
  }
  const double decode = Seconds(writer->decode_time() + hashing);
  const double encode = Seconds(writer->encode_time());
  writer.reset();  // An unfinished writer removes its partial file.
  run_.WriterDone(decode, encode, finished);
}

// What makes this film: everything that changes its segments.
FilmRecord MakeFilmRecord(const RenderOptions& options, int64_t frames, int64_t segment_frames,
                          capture::Page& page, browser::Browser& browser) {
  FilmRecord film;
  film.url = options.page.url;
  film.page_files = HashLocalFiles(page.requested_urls());
  film.width = options.page.width;
  film.height = options.page.height;
  film.fps = options.page.fps;
  film.frames = frames;
  film.segment_frames = segment_frames;
  film.alpha = options.page.alpha;
  film.quality = options.quality;
  film.kind = options.kind;
  encode::FilmSpec described = SegmentFilm(options);
  described.kind = options.kind;
  film.encoder = encode::DescribeFilm(described) + ", screenshots " + ScreenshotsText(options);
  film.timezone = options.page.timezone;
  film.locale = options.page.locale;
  film.fonts = HashFontFiles();
  film.browser = browser.product();
  return film;
}

Result<JoinStats> Join(const std::string& work_path, const std::string& output, AfterJoin after,
                       bool verify_contents, const SoundOptions& sound);

}  // namespace

std::string DefaultWorkDir(const std::string& output) {
  fs::path target(output);
  fs::path folder = target.parent_path();
  std::string name = target.filename().string();
  // A sequence pattern's folder holds only frames: keep the work beside the folder.
  if (name.find('%') != std::string::npos) {
    name = folder.filename().string() + "-frames";
    folder = folder.parent_path();
  }
  return (folder / ("." + name + ".pagereel")).string();
}

Result<RenderStats> Render(const RenderOptions& requested) {
  Clock::time_point start = Clock::now();
  // The browser hands over the frames the film needs: exact ones unless it is lossy anyway.
  RenderOptions options = requested;
  encode::FilmSpec output = SegmentFilm(options);
  output.kind = options.kind;
  options.page.screenshots = options.screenshots.value_or(encode::ScreenshotFormatFor(output));
  auto redrawn = std::make_shared<std::atomic<int64_t>>(0);
  options.page.on_redrawn_frame = [redrawn] { redrawn->fetch_add(1, std::memory_order_relaxed); };
  if (options.sound.sound == FilmSound::kIfAny &&
      options.sound.codec != encode::SoundCodec::kAuto) {
    PR_RETURN_IF_ERROR(encode::ChooseSoundCodec(options.kind, options.sound.codec).status());
  }
  if (options.shard_count < 1 || options.shard_index < 0 ||
      options.shard_index >= options.shard_count) {
    return InvalidArgumentError("shard " + std::to_string(options.shard_index) + " of " +
                                std::to_string(options.shard_count) + " does not exist");
  }
  // The first lane opens the page before anything else starts, so a page that cannot load
  // fails fast with its own message, and its declared duration can size the film.
  LaneState first;
  PR_ASSIGN_OR_RETURN(first.browser, browser::Browser::Launch(options.launch));
  PR_ASSIGN_OR_RETURN(first.page, capture::Page::Open(*first.browser, options.page));
  int64_t frames = 0;
  if (options.frames.has_value()) {
    frames = *options.frames;
  } else if (std::optional<double> d = first.page->declared_duration()) {
    if (*d > kMaxDurationSeconds) {
      return InvalidArgumentError("the page sets window.pagereel.duration to " +
                                  std::to_string(*d) + " s; films are at most " +
                                  std::to_string(static_cast<int>(kMaxDurationSeconds)) +
                                  " s; give the film's length to override it");
    }
    frames = FramesInDuration(*d, options.page.fps);
  } else {
    return InvalidArgumentError(
        "how long is the film? Give its length, or have the page set "
        "window.pagereel = { duration: SECONDS }");
  }
  if (frames <= 0) return InvalidArgumentError("the film has no frames; give a longer duration");

  const int64_t segment_frames = options.segment_frames > 0
                                     ? options.segment_frames
                                     : DefaultSegmentFrames(frames, options.page.fps);
  const std::vector<Segment> plan = PlanSegments(frames, segment_frames);
  const std::vector<Segment> share = ShardSegments(plan, options.shard_index, options.shard_count);
  const std::string work_path =
      options.work_dir.empty() ? DefaultWorkDir(options.output) : options.work_dir;
  FilmRecord film =
      MakeFilmRecord(options, frames, segment_frames, *first.page, *first.browser);
  PR_ASSIGN_OR_RETURN(
      WorkDir work_dir,
      WorkDir::Open(work_path, film, options.restart ? OnChange::kStartOver : OnChange::kRefuse));

  std::vector<std::string> problems;
  std::vector<SegmentRecord> finished = work_dir.Finished(/*verify_contents=*/true, &problems);
  for (const std::string& p : problems) {
    if (options.on_note) options.on_note("work folder " + work_path + ": " + p);
  }
  std::set<int64_t> done;
  for (const SegmentRecord& r : finished) done.insert(r.index);
  std::vector<Segment> todo;
  int64_t share_frames = 0;
  int64_t resumed_frames = 0;
  int64_t resumed_segments = 0;
  for (const Segment& s : share) {
    share_frames += s.frame_count;
    if (done.count(s.index)) {
      resumed_frames += s.frame_count;
      ++resumed_segments;
    } else {
      todo.push_back(s);
    }
  }
  if (resumed_segments > 0 && options.on_note) {
    options.on_note("resuming: " + std::to_string(resumed_segments) + " of " +
                    std::to_string(share.size()) + " segments (" +
                    std::to_string(resumed_frames) + " frames) already finished in " +
                    work_path + "; --restart starts over");
  }

  RenderStats stats;
  if (!todo.empty()) {
    // A lane reaches segment 0 with the first page; other lanes open their own.
    Run run(options, frames, work_dir, todo, resumed_frames, share_frames);
    Result<RenderStats> ran = run.Go(std::move(first));
    if (!ran.ok()) {
      // Finished segments stay for the next run; a folder with none is not worth keeping,
      // nor one the same command would end on again (--strict refused what the page
      // reported), whichever lanes happened to finish a segment before that.
      // (Shards share theirs: another may be writing into it.)
      if (options.shard_count == 1 &&
          (run.RefusedByStrict() || work_dir.Finished(false, nullptr).empty())) {
        (void)work_dir.Remove();
      }
      return ran.status();
    }
    stats = *ran;
  } else {
    first.Close();  // Nothing for this run to render (all resumed, or a shard of no segment).
    stats.frames = frames;
    stats.lanes = 0;
    stats.preroll = "none needed";
  }
  stats.page_loads += 1;
  stats.screenshots = ScreenshotsText(options);
  stats.redrawn_frames = redrawn->load();
  stats.segments = static_cast<int64_t>(plan.size());
  stats.segments_resumed = resumed_segments;
  stats.work_dir = work_path;

  if (options.shard_count == 1) {
    SoundOptions sound = options.sound;
    if (options.strict) sound.left_out = LeftOutSounds::kFail;
    Result<JoinStats> joined =
        Join(work_path, options.output,
             options.keep_work_dir ? AfterJoin::kKeep : AfterJoin::kRemove,
             /*verify_contents=*/false, sound);
    if (!joined.ok()) return joined.status();
    stats.sounds = joined->sounds;
    stats.sounds_left_out = joined->sounds_left_out;
    stats.output = joined->output;
    stats.join_seconds = joined->seconds;
  }
  stats.wall_seconds = Seconds(Clock::now() - start);
  return stats;
}

namespace {

// JoinFilm, with the segments' contents hashed again (`verify_contents`: segments another
// process made) or only their sizes checked (Render's own join: it hashed every segment
// as it wrote it, or when it found it at the start).
// The film's sound, mixed from its segments' timelines (none for a folder made before
// pagereel recorded sound, nor for --no-audio), with the sounds it holds and leaves out.
struct FilmSoundMix {
  std::unique_ptr<audio::Mixer> mixer;
  encode::SoundCodec codec = encode::SoundCodec::kAuto;
  std::vector<std::string> sounds;
  std::vector<std::string> left_out;
  size_t mixer_problems_seen = 0;  // Of mixer->problems(), already in left_out.
};

// --strict: a film without some of its page's sound is not the film that was asked for.
Status RefuseLeftOutSounds(const FilmSoundMix& mix, const SoundOptions& options,
                           const std::string& work_path, const std::string& output) {
  if (options.left_out != LeftOutSounds::kFail || mix.left_out.empty()) return Status::Ok();
  const size_t n = mix.left_out.size();
  return FailedPreconditionError(
      std::to_string(n) + (n == 1 ? " sound" : " sounds") + " would be left out of " + output +
      " (--strict): " + audio::ListText(mix.left_out, 3) + ". Nothing was written; the finished segments are kept in " +
      work_path + ": `pagereel concat " + work_path + " -o " + output +
      "` writes the film without them (--no-audio: without any sound)");
}

Result<FilmSoundMix> MixSound(const WorkDir& work_dir, const std::vector<Segment>& plan,
                              encode::FilmKind kind, const SoundOptions& options) {
  FilmSoundMix mix;
  if (options.sound == FilmSound::kNone) return mix;
  std::vector<audio::Timeline> parts;
  std::string missing;
  for (const Segment& s : plan) {
    std::error_code ec;
    const std::string path = work_dir.SoundPath(s.index);
    if (!fs::exists(path, ec)) {
      if (missing.empty()) missing = SegmentName(s);
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Result<audio::Timeline> part = audio::FromJson(text);
    if (!part.ok()) return part.status().WithContext(path);
    parts.push_back(std::move(part).value());
  }
  if (parts.empty()) return mix;  // Segments made before pagereel recorded sound.
  if (!missing.empty()) {
    return FailedPreconditionError(
        "the sound of " + missing + " is not in " + work_dir.path() +
        " (its segment was made by a pagereel that did not record sound); render it again "
        "with --restart");
  }
  // Lanes that disagree (a page that reached its segment by a jump started a sound
  // elsewhere): the pictures are still the film's, so the film is written without sound
  // and the summary says why.
  Result<audio::Timeline> merged = audio::Merge(parts);
  if (!merged.ok()) {
    mix.left_out.push_back("all sound (the film has none: its segments heard the page "
                           "differently): " + std::string(merged.status().message()));
    return mix;
  }
  const audio::Timeline& film = *merged;
  const Rational fps = work_dir.film().fps;
  for (const audio::LeftOut& l : film.left_out) mix.left_out.push_back(audio::LeftOutText(l, fps));
  if (film.empty()) return mix;
  if (!encode::DefaultSoundCodec(kind) && options.codec == encode::SoundCodec::kAuto) {
    for (const audio::Sound& s : film.sounds) {
      mix.left_out.push_back(audio::LeftOutText(
          {s.source, s.spans.front().start,
           "a " + std::string(encode::FilmKindName(kind)) + " film carries no sound"},
          fps));
    }
    return mix;
  }
  PR_ASSIGN_OR_RETURN(mix.codec, encode::ChooseSoundCodec(kind, options.codec));
  PR_ASSIGN_OR_RETURN(mix.mixer,
                      audio::Mixer::Open(film, audio::MediaStore(work_dir.MediaPath()),
                                         encode::SoundSamples(work_dir.film().frames,
                                                              work_dir.film().fps)));
  for (const audio::Heard& h : audio::SoundsHeard(film)) mix.sounds.push_back(h.source);
  return mix;
}

Result<JoinStats> Join(const std::string& work_path, const std::string& output, AfterJoin after,
                       bool verify_contents, const SoundOptions& sound) {
  Clock::time_point start = Clock::now();
  PR_ASSIGN_OR_RETURN(WorkDir work_dir, WorkDir::OpenForJoin(work_path));
  const FilmRecord& film = work_dir.film();
  PR_ASSIGN_OR_RETURN(encode::FilmKind kind, encode::FilmKindForPath(output, film.alpha));
  if (kind != film.kind) {
    return InvalidArgumentError("the segments in " + work_path + " were made for a " +
                                std::string(encode::FilmKindName(film.kind)) + " film; '" +
                                output + "' is a " + std::string(encode::FilmKindName(kind)) +
                                " film");
  }
  std::vector<std::string> problems;
  std::vector<SegmentRecord> finished = work_dir.Finished(verify_contents, &problems);
  std::map<int64_t, SegmentRecord> by_index;
  for (const SegmentRecord& r : finished) by_index[r.index] = r;
  const std::vector<Segment> plan = PlanSegments(film.frames, film.segment_frames);
  std::vector<encode::SegmentFile> files;
  std::string missing;
  int64_t missing_count = 0;
  for (const Segment& s : plan) {
    auto it = by_index.find(s.index);
    if (it == by_index.end() || it->second.first_frame != s.first_frame ||
        it->second.frame_count != s.frame_count) {
      ++missing_count;
      if (missing_count <= 8) missing += (missing.empty() ? "" : ", ") + SegmentName(s);
      continue;
    }
    files.push_back(
        encode::SegmentFile{work_dir.SegmentTarget(s.index), s.first_frame, s.frame_count});
  }
  if (missing_count > 0) {
    std::string damaged;
    for (const std::string& p : problems) damaged += "; " + p;
    return FailedPreconditionError(
        std::to_string(missing_count) + " of " + std::to_string(plan.size()) +
        " segments are not finished in " + work_path + ": " + missing +
        (missing_count > 8 ? ", ..." : "") + damaged +
        "; run the render (or the shards that own them) again to make them");
  }
  PR_ASSIGN_OR_RETURN(FilmSoundMix mix, MixSound(work_dir, plan, film.kind, sound));
  // Media that cannot be decoded is known once the mix is open; media damaged part way
  // only once it is read, so --strict checks both, before and after writing.
  auto mixer_problems = [&] {
    if (!mix.mixer) return;
    const std::vector<audio::Mixer::Problem>& heard = mix.mixer->problems();
    for (size_t i = mix.mixer_problems_seen; i < heard.size(); ++i) {
      mix.left_out.push_back(audio::ProblemText(heard[i], film.fps));
    }
    mix.mixer_problems_seen = heard.size();
  };
  mixer_problems();
  PR_RETURN_IF_ERROR(RefuseLeftOutSounds(mix, sound, work_path, output));
  encode::JoinOptions join;
  join.kind = film.kind;
  join.fps = film.fps;
  join.sound = mix.mixer.get();
  join.sound_codec = mix.codec;
  PR_RETURN_IF_ERROR(encode::JoinSegments(files, output, join));
  mixer_problems();
  if (Status refused = RefuseLeftOutSounds(mix, sound, work_path, output); !refused.ok()) {
    std::error_code ec;
    fs::remove(output, ec);  // Not the film that was asked for (only films carry sound).
    return refused;
  }
  // The film is complete; a folder that cannot be removed only costs disk space.
  if (after == AfterJoin::kRemove) (void)work_dir.Remove();
  JoinStats stats;
  stats.output = output;
  stats.frames = film.frames;
  stats.segments = static_cast<int64_t>(plan.size());
  stats.seconds = Seconds(Clock::now() - start);
  stats.sounds = std::move(mix.sounds);
  stats.sounds_left_out = std::move(mix.left_out);
  return stats;
}

}  // namespace

Result<JoinStats> JoinFilm(const std::string& work_path, const std::string& output,
                           AfterJoin after, const SoundOptions& sound) {
  return Join(work_path, output, after, /*verify_contents=*/true, sound);
}

}  // namespace pagereel::render
