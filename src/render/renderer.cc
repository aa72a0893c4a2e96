#include "render/renderer.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/thread.h"
#include "render/frame_window.h"
#include "render/slices.h"

namespace pagereel::render {

namespace {

using Clock = std::chrono::steady_clock;

// The longest film a page may ask for by itself (24 hours), as for --duration.
constexpr double kMaxDurationSeconds = 24 * 3600;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One lane's browser and the page it is rendering.
struct LaneState {
  std::unique_ptr<browser::Browser> browser;
  std::unique_ptr<capture::Page> page;
};

// What a lane did, added to RenderStats when it ends.
struct LaneCounters {
  Clock::duration busy{};
  Clock::duration preroll_busy{};
  int64_t preroll_frames = 0;
  int64_t loads = 0;
  int retries = 0;
};

Result<LaneState> OpenLane(const RenderOptions& options) {
  LaneState lane;
  PR_ASSIGN_OR_RETURN(lane.browser, browser::Browser::Launch(options.launch));
  PR_ASSIGN_OR_RETURN(lane.page, capture::Page::Open(*lane.browser, options.page));
  return lane;
}

int64_t DefaultWindow(const RenderOptions& options) {
  // Keep the screenshots held to about 512 MB: JPEG frames are about a tenth of their raw
  // size, fast PNG about half (measured on the bundled examples).
  double raw = static_cast<double>(options.page.width) * options.page.height * 4;
  double per_frame = options.page.alpha ? raw * 0.5 : raw * 0.1;
  auto by_memory = static_cast<int64_t>((512.0 * 1024 * 1024) / std::max(per_frame, 1.0));
  int64_t wanted = (options.lanes + 1) * options.slice_frames;
  // The lowest frame always has room, so a window of one still makes progress.
  return std::max<int64_t>(1, std::min(wanted, by_memory));
}

class Run {
 public:
  Run(const RenderOptions& options, int64_t frames)
      : options_(options),
        page_options_(options.page),
        frames_(frames),
        slices_(PlanSlices(frames, options.slice_frames)),
        window_(frames, options.window_frames > 0 ? options.window_frames : DefaultWindow(options),
                options.cancel) {
    page_options_.should_stop = [this] { return Cancelled() || window_.cancelled(); };
  }

  void Fail(Status status) {
    {
      std::lock_guard lock(mu_);
      if (failure_.ok()) failure_ = std::move(status);
    }
    window_.Cancel();
  }

  Status failure() {
    std::lock_guard lock(mu_);
    return failure_;
  }

  bool Cancelled() const { return options_.cancel != nullptr && options_.cancel->load(); }

  void Note(const std::string& text) {
    if (options_.on_note) options_.on_note(text);
  }

  void LaneLoop(int lane, LaneState state) {
    SetCurrentThreadName("lane-" + std::to_string(lane));
    LaneCounters counters;
    while (std::optional<Slice> slice = slices_.Take()) {
      if (!RenderSlice(lane, *slice, state, counters)) break;
    }
    state.page.reset();
    state.browser.reset();
    std::lock_guard lock(mu_);
    stats_.browser_seconds += Seconds(counters.busy);
    stats_.preroll_frames += counters.preroll_frames;
    stats_.preroll_seconds += Seconds(counters.preroll_busy);
    stats_.page_loads += counters.loads;
    stats_.retries += counters.retries;
  }

  // Renders one slice into the window; false when the render is over (failed, cancelled).
  bool RenderSlice(int lane, const Slice& slice, LaneState& state, LaneCounters& counters) {
    int attempts = 1;
    for (int64_t f = slice.first_frame; f < slice.end_frame();) {
      if (!window_.WaitForRoom(f)) return false;
      Clock::time_point start = Clock::now();
      Result<capture::EncodedFrame> frame = MakeFrame(state, f, counters);
      counters.busy += Clock::now() - start;
      if (state.page && !CollectMessages(*state.page)) return false;
      if (frame.ok()) {
        window_.Put(f, std::move(frame).value());
        if (options_.after_frame) options_.after_frame(lane, f, *state.browser);
        ++f;
        continue;
      }
      if (Cancelled() || window_.cancelled()) return false;
      std::string where = "slice " + std::to_string(slice.index) + " (frames " +
                          std::to_string(slice.first_frame) + "-" +
                          std::to_string(slice.end_frame() - 1) + ")";
      if (frame.status().code() == StatusCode::kUnavailable &&
          attempts < options_.max_attempts_per_slice) {
        ++attempts;
        ++counters.retries;
        Note("lane " + std::to_string(lane) + ": " + frame.status().ToString() + "; retrying " +
             where + " from frame " + std::to_string(f) + " on a fresh browser (attempt " +
             std::to_string(attempts) + " of " + std::to_string(options_.max_attempts_per_slice) +
             ")");
        state.page.reset();
        state.browser.reset();
        continue;
      }
      Fail(frame.status().WithContext(where));
      return false;
    }
    return true;
  }

  // Frame `f` from the lane's page: relaunches a browser that died, reopens a page that is
  // already past `f`, and runs the frames before `f` that the page has not run.
  Result<capture::EncodedFrame> MakeFrame(LaneState& state, int64_t f, LaneCounters& counters) {
    if (!state.page || state.page->next_frame() > f) {
      state.page.reset();
      if (!state.browser || !state.browser->client().connection_status().ok()) {
        state.browser.reset();
        PR_ASSIGN_OR_RETURN(state.browser, browser::Browser::Launch(options_.launch));
      }
      ++counters.loads;
      PR_ASSIGN_OR_RETURN(state.page, capture::Page::Open(*state.browser, page_options_));
    }
    if (state.page->next_frame() < f) {
      Clock::time_point start = Clock::now();
      counters.preroll_frames += f - state.page->next_frame();
      Status preroll = state.page->PreRoll(f);
      counters.preroll_busy += Clock::now() - start;
      PR_RETURN_IF_ERROR(preroll);
    }
    return state.page->Capture(f);
  }

  // Records what the page reported, once per message and frame whichever lane saw it;
  // false when strict mode ends the render over it.
  bool CollectMessages(capture::Page& page) {
    std::vector<capture::PageMessage> messages = page.TakeMessages();
    if (messages.empty()) return true;
    std::lock_guard lock(mu_);
    for (capture::PageMessage& m : messages) {
      std::string key = std::to_string(static_cast<int>(m.kind)) + '\n' + m.text + '\n' +
                        m.source + '\n' + std::to_string(m.frame);
      if (!seen_messages_.insert(std::move(key)).second) continue;
      ++stats_.page_message_count;
      if (stats_.page_messages.size() < kMaxReportedMessages) stats_.page_messages.push_back(m);
      if (options_.strict && failure_.ok()) {
        failure_ = FailedPreconditionError(
            "the page " + options_.page.url + " reported an error " +
            (m.frame < 0 ? std::string("while it loaded") : "at frame " + std::to_string(m.frame)) +
            ": " + m.text + (m.source.empty() ? "" : " (" + m.source + ")"));
      }
    }
    if (options_.strict && !failure_.ok()) {
      window_.Cancel();
      return false;
    }
    return true;
  }

  // Decodes screenshots and converts them for the encoder (colour conversion, or image
  // compression for sequences), in parallel, so the encoding thread only encodes.
  void DecodeLoop(int worker, std::unique_ptr<encode::Converter> converter) {
    SetCurrentThreadName("decode-" + std::to_string(worker));
    Clock::duration busy{};
    while (std::optional<capture::EncodedFrame> frame = window_.Claim()) {
      Clock::time_point start = Clock::now();
      int64_t index = frame->index;
      Result<capture::Image> image = capture::DecodeFrame(*frame);
      if (!image.ok()) {
        Fail(image.status().WithContext("frame " + std::to_string(index)));
        break;
      }
      if (image->width != options_.page.width || image->height != options_.page.height) {
        Fail(InternalError("frame " + std::to_string(index) + " came back " +
                           std::to_string(image->width) + "x" + std::to_string(image->height)));
        break;
      }
      Result<std::unique_ptr<encode::PreparedFrame>> prepared = converter->Convert(
          encode::RgbaView{image->rgba.data(), image->width, image->height, image->width * 4});
      busy += Clock::now() - start;
      if (!prepared.ok()) {
        Fail(prepared.status().WithContext("frame " + std::to_string(index)));
        break;
      }
      window_.PutPrepared(index, std::move(prepared).value());
    }
    std::lock_guard lock(mu_);
    stats_.decode_seconds += Seconds(busy);
  }

  Result<RenderStats> Go(LaneState first_lane) {
    Clock::time_point start = Clock::now();
    encode::EncoderOptions encoder_options = options_.encoder;
    encoder_options.width = options_.page.width;
    encoder_options.height = options_.page.height;
    encoder_options.fps = options_.page.fps;
    encoder_options.alpha = options_.page.alpha;
    PR_ASSIGN_OR_RETURN(std::unique_ptr<encode::Encoder> encoder,
                        encode::Encoder::Open(encoder_options));

    int lanes = std::max(1, options_.lanes);
    std::vector<std::jthread> threads;
    threads.emplace_back([this, s = std::move(first_lane)]() mutable { LaneLoop(0, std::move(s)); });
    for (int i = 1; i < lanes; ++i) {
      threads.emplace_back([this, i] { LaneLoop(i, LaneState{}); });
    }
    for (int i = 0; i < std::max(1, options_.decode_threads); ++i) {
      threads.emplace_back(
          [this, i, c = encoder->NewConverter()]() mutable { DecodeLoop(i, std::move(c)); });
    }

    Clock::duration encode_busy{};
    for (int64_t i = 0; i < frames_; ++i) {
      std::unique_ptr<encode::PreparedFrame> frame = window_.TakePrepared(i);
      if (!frame) break;
      Clock::time_point t = Clock::now();
      Status written = encoder->WritePrepared(std::move(frame));
      encode_busy += Clock::now() - t;
      if (!written.ok()) {
        Fail(written.WithContext("writing frame " + std::to_string(i)));
        break;
      }
      window_.Encoded(i);
      if (options_.on_progress) {
        options_.on_progress(Progress{i + 1, frames_, Clock::now() - start});
      }
    }
    window_.Cancel();  // Done or failed: release every thread still waiting.
    threads.clear();   // Joins.

    if (Status f = failure(); !f.ok()) return f;
    if (Cancelled()) return CancelledError("render interrupted; no output was written");
    Clock::time_point t = Clock::now();
    PR_RETURN_IF_ERROR(encoder->Finish());
    encode_busy += Clock::now() - t;

    stats_.output = encoder->final_path();
    stats_.frames = frames_;
    stats_.lanes = lanes;
    stats_.wall_seconds = Seconds(Clock::now() - start);
    stats_.encode_seconds = Seconds(encode_busy);
    stats_.peak_window_frames = window_.peak_held();
    return stats_;
  }

 private:
  const RenderOptions& options_;
  capture::PageOptions page_options_;  // options_.page, plus a stop check for pre-roll.
  const int64_t frames_;
  SliceQueue slices_;
  FrameWindow window_;

  std::mutex mu_;
  Status failure_;     // Guarded by mu_.
  RenderStats stats_;  // Guarded by mu_ while threads run.
  std::set<std::string> seen_messages_;  // Guarded by mu_.
};

}  // namespace

Result<RenderStats> Render(const RenderOptions& options) {
  Clock::time_point start = Clock::now();
  // The first lane opens the page before anything else starts, so a page that cannot load
  // fails fast with its own message, and its declared duration can size the film.
  PR_ASSIGN_OR_RETURN(LaneState first, OpenLane(options));
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
  Run run(options, frames);
  Result<RenderStats> stats = run.Go(std::move(first));
  if (stats.ok()) {
    stats->wall_seconds = Seconds(Clock::now() - start);
    stats->page_loads += 1;
  }
  return stats;
}

}  // namespace pagereel::render
