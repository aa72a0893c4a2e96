// Renders real pages with the real browser and encoders, then decodes the films.
#include "render/renderer.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "testing/media.h"
#include "testing/scratch_dir.h"
#include "testing/timecode.h"

namespace pagereel::render {
namespace {

namespace fs = std::filesystem;

class RendererTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"render"};
  const fs::path& dir_ = scratch_.path();

  RenderOptions Options(const std::string& page, const std::string& output) {
    RenderOptions o;
    o.page.url = testing::TestPageUrl(page);
    o.page.width = 640;
    o.page.height = 360;
    o.page.fps = Rational{30, 1};
    o.output = (dir_ / output).string();
    o.kind = encode::FilmKindForPath(o.output, false).value();
    o.segment_frames = 30;
    return o;
  }

  static std::string Bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A progress callback that cancels the render once a segment is recorded as finished in
  // `work_dir`, as a user's Ctrl-C part way through would.
  static std::function<void(const Progress&)> CancelOnceASegmentIsFinished(
      const std::string& work_dir, std::atomic<bool>& cancel) {
    return [work_dir, &cancel](const Progress&) {
      std::error_code ec;
      for (const fs::directory_entry& e : fs::directory_iterator(work_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with("seg-") && name.ends_with(".json") && !name.ends_with(".sound.json")) {
          cancel = true;
        }
      }
    };
  }

  // Decodes `path` and checks it holds exactly the frames of `reference`.
  static void ExpectSameFilm(const std::string& reference, const std::string& path, size_t frames) {
    Result<testing::DecodedVideo> a = testing::DecodeVideo(reference);
    Result<testing::DecodedVideo> b = testing::DecodeVideo(path);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->rgb.size(), frames);
    ASSERT_EQ(b->rgb.size(), frames) << path;
    for (size_t n = 0; n < frames; ++n) {
      ASSERT_TRUE(a->rgb[n] == b->rgb[n]) << path << ": frame " << n << " differs";
      EXPECT_NEAR(b->pts_seconds[n], a->pts_seconds[n], 1e-9) << n;
    }
  }

  // Renders `page` as a PNG sequence with PNG screenshots (no JPEG step between the browser
  // and the comparison) and gives back each frame's pixels. The pre-roll is the default
  // unless `preroll` says otherwise.
  std::vector<std::vector<uint8_t>> RenderFrames(const std::string& page, const std::string& name,
                                                 int64_t frames, int lanes,
                                                 std::optional<PreRollMode> preroll = {}) {
    fs::path out = dir_ / name;
    fs::create_directories(out);
    RenderOptions options = Options(page, (out / "%03d.png").string());
    options.frames = frames;
    options.lanes = lanes;
    options.page.alpha = true;
    if (preroll) options.preroll = *preroll;
    Result<RenderStats> stats = Render(options);
    EXPECT_TRUE(stats.ok()) << page << ": " << stats.status().ToString();
    std::vector<std::vector<uint8_t>> pixels;
    for (int64_t n = 0; stats.ok() && n < frames; ++n) {
      char file[16];
      std::snprintf(file, sizeof file, "%03d.png", static_cast<int>(n));
      Result<testing::DecodedVideo> frame = testing::DecodeVideo((out / file).string());
      EXPECT_TRUE(frame.ok() && frame->rgb.size() == 1) << page << ": frame " << n;
      if (!frame.ok() || frame->rgb.size() != 1) break;
      pixels.push_back(std::move(frame->rgb[0]));
    }
    return pixels;
  }

  // The frames of `b` are those of `a`, to the pixel; names the frames that are not.
  static void ExpectSameFrames(const std::vector<std::vector<uint8_t>>& a,
                               const std::vector<std::vector<uint8_t>>& b, size_t frames,
                               const std::string& what) {
    ASSERT_EQ(a.size(), frames) << what;
    ASSERT_EQ(b.size(), frames) << what;
    std::string differ;
    int count = 0;
    for (size_t n = 0; n < frames; ++n) {
      if (a[n] == b[n]) continue;
      if (++count <= 20) differ += " " + std::to_string(n);
    }
    EXPECT_EQ(count, 0) << what << ": " << count << " of " << frames << " frames differ:" << differ;
  }
};

// timecode.html counts its animation frames, so a lane that jumped would paint another
// count: the default pre-roll runs every frame, and the film must not depend on the lane
// count, to the byte.
TEST_F(RendererTest, FilmIsIdenticalWhateverTheLaneCountAndEveryFrameShowsItsTime) {
  RenderOptions one = Options("timecode.html", "one.mp4");
  one.frames = 90;
  one.lanes = 1;
  Result<RenderStats> a = Render(one);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->preroll_frames, 0);
  EXPECT_EQ(a->segments, 3);
  EXPECT_FALSE(fs::exists(a->work_dir)) << "the work folder is removed once the film is whole";

  RenderOptions three = Options("timecode.html", "three.mp4");
  three.frames = 90;
  three.lanes = 3;
  Result<RenderStats> b = Render(three);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_GT(b->preroll_frames, 0);  // Lanes did run ahead, so the comparison means something.
  EXPECT_EQ(b->preroll, "exact");
  EXPECT_EQ(b->jumps, 0);

  EXPECT_TRUE(Bytes(a->output) == Bytes(b->output)) << "the films differ byte for byte";
  Result<testing::DecodedVideo> va = testing::DecodeVideo(a->output);
  ASSERT_TRUE(va.ok());
  ASSERT_EQ(va->rgb.size(), 90u);
  for (size_t n = 0; n < 90; ++n) {
    const int t = static_cast<int>(FrameTimeMillis(static_cast<int64_t>(n), Rational{30, 1}));
    const uint8_t* px = va->rgb[n].data();
    EXPECT_EQ(testing::ReadTimecodeRow(px, 640 * 3, 3, testing::kRafTimestamp), t) << n;
    EXPECT_EQ(testing::ReadTimecodeRow(px, 640 * 3, 3, testing::kCssAnimation), t) << n;
    EXPECT_EQ(testing::ReadTimecodeRow(px, 640 * 3, 3, testing::kRafCount), n + 1) << n;
    EXPECT_NEAR(va->pts_seconds[n], n / 30.0, 1e-6);
  }
}

// A page driven by its clocks alone (and a timer that runs late): auto checks one frame
// both ways, finds them identical and jumps, and the film is that of one lane.
TEST_F(RendererTest, AutoJumpsOnAPageDrivenByClocksAndTheFilmIsUnchanged) {
  RenderOptions one = Options("clocks.html", "one.mp4");
  one.frames = 120;
  one.lanes = 1;
  Result<RenderStats> a = Render(one);
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  RenderOptions three = Options("clocks.html", "three.mp4");
  three.frames = 120;
  three.lanes = 3;
  three.preroll = PreRollMode::kAuto;
  Result<RenderStats> b = Render(three);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_NE(b->preroll.find("auto: jump"), std::string::npos) << b->preroll;
  EXPECT_GT(b->jumps, 0);
  ExpectSameFilm(a->output, b->output, 120);
  Result<testing::DecodedVideo> video = testing::DecodeVideo(b->output);
  ASSERT_TRUE(video.ok());
  for (size_t n : {0u, 29u, 30u, 61u, 90u, 119u}) {
    const int t = static_cast<int>(FrameTimeMillis(static_cast<int64_t>(n), Rational{30, 1}));
    EXPECT_EQ(testing::ReadTimecodeRow(video->rgb[n].data(), 640 * 3, 3, testing::kCssAnimation), t);
    EXPECT_EQ(testing::ReadTimecodeRow(video->rgb[n].data(), 640 * 3, 3, testing::kDateNow), t);
    EXPECT_EQ(testing::ReadTimecodeRow(video->rgb[n].data(), 640 * 3, 3, 6), std::max(0, t - 700));
  }

  RenderOptions exact = Options("clocks.html", "exact.mp4");
  exact.frames = 120;
  exact.lanes = 2;
  exact.preroll = PreRollMode::kExact;
  Result<RenderStats> c = Render(exact);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->jumps, 0);
  EXPECT_GT(c->preroll_frames, 0);
  ExpectSameFilm(a->output, c->output, 120);
}

// A render stopped half way keeps its finished segments; the same render run again makes
// only the rest, and the film is the one an uninterrupted render makes. A changed
// parameter is refused, naming it, until --restart.
TEST_F(RendererTest, AnInterruptedRenderResumesFromItsFinishedSegments) {
  RenderOptions clean = Options("timecode.html", "clean.mp4");
  clean.frames = 90;
  Result<RenderStats> reference = Render(clean);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();

  RenderOptions options = Options("timecode.html", "resumed.mp4");
  options.frames = 90;
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  const std::string work = DefaultWorkDir(options.output);
  options.on_progress = CancelOnceASegmentIsFinished(work, cancel);
  Result<RenderStats> stopped = Render(options);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(fs::exists(dir_ / "resumed.mp4"));
  ASSERT_TRUE(fs::exists(fs::path(work) / "seg-000000.json")) << work;

  RenderOptions changed = options;
  changed.cancel = nullptr;
  changed.on_progress = nullptr;
  changed.quality = 50;
  Result<RenderStats> refused = Render(changed);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("quality: was 90, now 50"), std::string_view::npos)
      << refused.status().ToString();

  cancel = false;
  options.on_progress = nullptr;
  std::vector<std::string> notes;
  options.on_note = [&](const std::string& note) { notes.push_back(note); };
  Result<RenderStats> resumed = Render(options);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_GE(resumed->segments_resumed, 1);
  EXPECT_LE(resumed->frames_rendered, 60);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("resuming"), std::string::npos) << notes[0];
  EXPECT_TRUE(Bytes(reference->output) == Bytes(resumed->output));
  EXPECT_FALSE(fs::exists(work));

  changed.restart = true;
  Result<RenderStats> restarted = Render(changed);
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
}

// Shards render their share into one folder; joining it gives the film a single render
// makes, and joining an incomplete folder names what is missing.
TEST_F(RendererTest, ShardsJoinedAreTheFilmOfOneRender) {
  RenderOptions whole = Options("timecode.html", "whole.mp4");
  whole.frames = 90;
  Result<RenderStats> reference = Render(whole);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();

  const std::string work = (dir_ / "shared").string();
  for (int shard : {2, 0}) {
    RenderOptions part = Options("timecode.html", "sharded.mp4");
    part.frames = 90;
    part.work_dir = work;
    part.shard_index = shard;
    part.shard_count = 3;
    Result<RenderStats> stats = Render(part);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_TRUE(stats->output.empty());
    EXPECT_EQ(stats->frames_rendered, 30);
  }
  Result<JoinStats> incomplete =
      JoinFilm(work, (dir_ / "sharded.mp4").string(), AfterJoin::kRemove);
  ASSERT_FALSE(incomplete.ok());
  EXPECT_NE(incomplete.status().message().find("segment 1 (frames 30-59)"), std::string_view::npos)
      << incomplete.status().ToString();
  EXPECT_FALSE(fs::exists(dir_ / "sharded.mp4"));

  RenderOptions last = Options("timecode.html", "sharded.mp4");
  last.frames = 90;
  last.work_dir = work;
  last.shard_index = 1;
  last.shard_count = 3;
  Result<RenderStats> stats = Render(last);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->preroll, "exact");
  Result<JoinStats> joined = JoinFilm(work, (dir_ / "sharded.mp4").string(), AfterJoin::kRemove);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_TRUE(Bytes(reference->output) == Bytes(joined->output));
  EXPECT_FALSE(fs::exists(work));
}

// More shards than segments: a shard whose share is empty renders nothing, says so, and
// leaves the film to the shard that has its one segment.
TEST_F(RendererTest, AShardWithNoSegmentOfItsOwnEndsCleanly) {
  const std::string work = (dir_ / "shared").string();
  RenderOptions empty = Options("timecode.html", "short.mp4");
  empty.frames = 20;  // One segment of 20 frames (segments of 30).
  empty.work_dir = work;
  empty.shard_index = 0;
  empty.shard_count = 2;
  Result<RenderStats> nothing = Render(empty);
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_EQ(nothing->frames_rendered, 0);
  EXPECT_EQ(nothing->segments, 1);

  RenderOptions owner = empty;
  owner.shard_index = 1;
  Result<RenderStats> rendered = Render(owner);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  EXPECT_EQ(rendered->frames_rendered, 20);
  Result<JoinStats> joined = JoinFilm(work, (dir_ / "short.mp4").string(), AfterJoin::kRemove);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(joined->frames, 20);
}

// The same for a page driven by its clocks, where --preroll auto jumps: stopped and
// resumed on two lanes, and as three shards, the film is that of one uninterrupted lane.
TEST_F(RendererTest, AClockDrivenPageResumedOrShardedIsTheFilmOfOneLane) {
  RenderOptions whole = Options("clocks.html", "whole.mp4");
  whole.frames = 120;
  Result<RenderStats> reference = Render(whole);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();

  RenderOptions options = Options("clocks.html", "resumed.mp4");
  options.frames = 120;
  options.lanes = 2;
  options.preroll = PreRollMode::kAuto;
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  options.on_progress = CancelOnceASegmentIsFinished(DefaultWorkDir(options.output), cancel);
  ASSERT_FALSE(Render(options).ok());
  cancel = false;
  options.on_progress = nullptr;
  Result<RenderStats> resumed = Render(options);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_GE(resumed->segments_resumed, 1);
  EXPECT_TRUE(Bytes(reference->output) == Bytes(resumed->output)) << "resumed film differs";

  const std::string work = (dir_ / "shared").string();
  for (int shard : {1, 2, 0}) {
    RenderOptions part = Options("clocks.html", "sharded.mp4");
    part.frames = 120;
    part.preroll = PreRollMode::kAuto;
    part.work_dir = work;
    part.shard_index = shard;
    part.shard_count = 3;
    Result<RenderStats> stats = Render(part);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    if (shard > 0) {
      EXPECT_NE(stats->preroll.find("auto: jump"), std::string::npos) << stats->preroll;
    }
  }
  Result<JoinStats> joined = JoinFilm(work, (dir_ / "sharded.mp4").string(), AfterJoin::kRemove);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_TRUE(Bytes(reference->output) == Bytes(joined->output)) << "sharded film differs";
}

// Frames must not depend on the lane count, to the pixel: scaled composited layers (whose
// raster scale Chromium picks from the frame drawn last) and random numbers. Image
// sequences, so frames compare exactly. (tests/conformance covers pages written with
// animation libraries the same way.)
TEST_F(RendererTest, PagesAsUsersWriteThemAreIdenticalWhateverTheLaneCount) {
  for (const std::string& page : {std::string("scaled-layer.html"), std::string("random.html")}) {
    std::vector<std::string> films;
    for (int lanes : {1, 3}) {
      fs::path out = dir_ / (page + std::to_string(lanes));
      fs::create_directories(out);
      RenderOptions options = Options(page, (out / "%03d.png").string());
      options.frames = 60;
      options.lanes = lanes;
      options.page.alpha = true;  // PNG screenshots: no JPEG step between the browser and us.
      Result<RenderStats> stats = Render(options);
      ASSERT_TRUE(stats.ok()) << page << ": " << stats.status().ToString();
      films.push_back(out.string());
    }
    for (int n = 0; n < 60; ++n) {
      char name[16];
      std::snprintf(name, sizeof name, "%03d.png", n);
      Result<testing::DecodedVideo> one = testing::DecodeVideo(films[0] + "/" + name);
      Result<testing::DecodedVideo> three = testing::DecodeVideo(films[1] + "/" + name);
      ASSERT_TRUE(one.ok() && three.ok());
      ASSERT_TRUE(one->rgb[0] == three->rgb[0]) << page << ": frame " << n << " differs";
    }
  }
}

// What test-card.html draws at (x, y), as RGB.
std::array<uint8_t, 3> TestCardPixel(int x, int y) {
  if (y == 100) return {255, 0, 0};
  if (x >= 40 && x < 104 && y >= 140 && y < 204) {
    const uint8_t v = (x - 40 + y - 140) % 2 ? 255 : 0;
    return {v, v, v};
  }
  if (y >= 240 && y < 320 && x >= 200 && x < 480) {
    static constexpr std::array<std::array<uint8_t, 3>, 7> kBars = {{{255, 0, 0},
                                                                     {0, 255, 0},
                                                                     {0, 0, 255},
                                                                     {255, 0, 255},
                                                                     {255, 255, 0},
                                                                     {0, 255, 255},
                                                                     {127, 127, 127}}};
    return kBars[(x - 200) / 40];
  }
  return {0x10, 0x20, 0x40};
}

// Counts the pixels of a decoded 640x360 frame that are not what test-card.html drew.
int WrongTestCardPixels(const std::vector<uint8_t>& rgb) {
  int wrong = 0;
  for (int y = 0; y < 360; ++y) {
    for (int x = 0; x < 640; ++x) {
      const uint8_t* px = rgb.data() + (static_cast<size_t>(y) * 640 + x) * 3;
      const std::array<uint8_t, 3> want = TestCardPixel(x, y);
      if (px[0] != want[0] || px[1] != want[1] || px[2] != want[2]) ++wrong;
    }
  }
  return wrong;
}

// A lossless film or an image sequence holds exactly the pixels the page drew: no JPEG
// step between the browser and the encoder (the default, without --alpha, too).
TEST_F(RendererTest, LosslessFilmsAndImageSequencesHoldExactlyThePixelsThePageDrew) {
  fs::create_directories(dir_ / "png");
  for (const std::string& output : {std::string("card.mkv"), std::string("png/%03d.png")}) {
    RenderOptions options = Options("test-card.html", output);
    options.frames = 3;
    Result<RenderStats> stats = Render(options);
    ASSERT_TRUE(stats.ok()) << output << ": " << stats.status().ToString();
    const std::string first =
        output.ends_with(".png") ? (dir_ / "png/000.png").string() : stats->output;
    Result<testing::DecodedVideo> video = testing::DecodeVideo(first);
    ASSERT_TRUE(video.ok()) << output;
    ASSERT_FALSE(video->rgb.empty()) << output;
    ASSERT_EQ(video->rgb[0].size(), 640u * 360 * 3);
    EXPECT_EQ(WrongTestCardPixels(video->rgb[0]), 0) << output;
  }
}

// Pictures Chromium's compositor moves on by itself, on the frames it draws: animated GIF
// and WebP images (the compositor picks each image frame from the frames drawn before it)
// and a View Transition a timer starts at 1 s (its old state is captured in a drawn frame,
// and its animations start after that). A lane that reached its segment running frames
// without drawing them showed the images one image frame early and restarted the
// transition at its first frame. With the default pre-roll, three lanes and a second
// one-lane render give the frames of one lane, to the pixel.
TEST_F(RendererTest, CompositorAnimatedPicturesAreTheSameWhateverTheLaneCountAndRunToRun) {
  for (const auto& [page, frames] :
       {std::pair<std::string, int64_t>{"animated-images.html", 90}, {"view-transition.html", 120}}) {
    std::vector<std::vector<uint8_t>> one = RenderFrames(page, page + "-1", frames, 1);
    std::vector<std::vector<uint8_t>> again = RenderFrames(page, page + "-1-again", frames, 1);
    std::vector<std::vector<uint8_t>> three = RenderFrames(page, page + "-3", frames, 3);
    ExpectSameFrames(one, again, static_cast<size_t>(frames), page + ", a second one-lane render");
    ExpectSameFrames(one, three, static_cast<size_t>(frames), page + ", three lanes");
    ASSERT_EQ(one.size(), static_cast<size_t>(frames));
    EXPECT_FALSE(one[0] == one[frames - 1]) << page << " does not move";
  }
}

// A canvas handed to transferControlToOffscreen() and drawn in requestAnimationFrame paints
// the frame's timestamp: every frame must show the picture drawn for it, not the one
// before (which showed in 35-46 random frames of 90 per render, and in different frames
// each time).
TEST_F(RendererTest, AnOffscreenCanvasShowsThePictureDrawnForEachFrame) {
  constexpr int64_t kFrames = 90;
  std::vector<std::vector<uint8_t>> one = RenderFrames("offscreen-canvas.html", "one", kFrames, 1);
  std::vector<std::vector<uint8_t>> again = RenderFrames("offscreen-canvas.html", "again", kFrames, 1);
  std::vector<std::vector<uint8_t>> three = RenderFrames("offscreen-canvas.html", "three", kFrames, 3);
  ASSERT_EQ(one.size(), static_cast<size_t>(kFrames));
  for (int64_t n = 0; n < kFrames; ++n) {
    EXPECT_EQ(testing::ReadTimecodeRow(one[n].data(), 640 * 3, 3, 0),
              FrameTimeMillis(n, Rational{30, 1}))
        << "frame " << n;
  }
  ExpectSameFrames(one, again, kFrames, "a second one-lane render");
  ExpectSameFrames(one, three, kFrames, "three lanes");
}

// An animation a timer starts at 2.5 s, after the frame --preroll auto checks (frame 30,
// identical jumped and run): auto jumped there and its film differed from frame 90 on.
// The default pre-roll may not depend on such a sample.
TEST_F(RendererTest, TheDefaultPreRollGivesTheFilmOfOneLaneWhereOneCheckedFrameWouldLie) {
  constexpr int64_t kFrames = 120;
  std::vector<std::vector<uint8_t>> one = RenderFrames("late-animation.html", "one", kFrames, 1);
  std::vector<std::vector<uint8_t>> three = RenderFrames("late-animation.html", "three", kFrames, 3);
  ExpectSameFrames(one, three, kFrames, "three lanes");
  ASSERT_EQ(one.size(), static_cast<size_t>(kFrames));
  EXPECT_FALSE(one[89] == one[kFrames - 1]) << "the late animation does not move";
}

TEST_F(RendererTest, RandomNumbersRepeatAcrossLanes) {
  std::vector<std::vector<uint8_t>> films[2];
  for (int lanes : {1, 3}) {
    RenderOptions options = Options("random.html", "random" + std::to_string(lanes) + ".mp4");
    options.frames = 50;
    options.lanes = lanes;
    Result<RenderStats> stats = Render(options);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    Result<testing::DecodedVideo> video = testing::DecodeVideo(stats->output);
    ASSERT_TRUE(video.ok());
    films[lanes == 1 ? 0 : 1] = std::move(video->rgb);
  }
  ASSERT_EQ(films[0].size(), 50u);
  ASSERT_EQ(films[1].size(), 50u);
  for (size_t n = 0; n < 50; ++n) ASSERT_TRUE(films[0][n] == films[1][n]) << "frame " << n;
  // And the numbers do change from frame to frame.
  EXPECT_NE(testing::ReadTimecodeRow(films[0][10].data(), 640 * 3, 3, 0),
            testing::ReadTimecodeRow(films[0][11].data(), 640 * 3, 3, 0));
}

TEST_F(RendererTest, LaneWhoseBrowserDiesIsRetriedAndTheFilmIsUnchanged) {
  RenderOptions clean = Options("timecode.html", "clean.mp4");
  clean.frames = 60;
  clean.lanes = 1;
  Result<RenderStats> a = Render(clean);
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  RenderOptions crashy = Options("timecode.html", "crashy.mp4");
  crashy.frames = 60;
  crashy.lanes = 2;
  std::atomic<bool> killed{false};
  crashy.on_progress = [&](const Progress& p) {
    // Kill a lane's browser once, a third of the way into the lanes' segments.
    if (p.frames_done < 10 || killed.exchange(true)) return;
    std::vector<pid_t> browsers = browser::LiveBrowserGroups();
    ASSERT_EQ(browsers.size(), 2u);
    ::kill(-browsers.front(), SIGKILL);
  };
  std::vector<std::string> notes;
  crashy.on_note = [&](const std::string& note) { notes.push_back(note); };
  Result<RenderStats> b = Render(crashy);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(killed.load());
  EXPECT_EQ(b->retries, 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("retrying segment"), std::string::npos) << notes[0];

  ExpectSameFilm(a->output, b->output, 60);
}

// The browser hangs, not the page: its GPU process (where frames are drawn and read back)
// stopped, a beginFrame goes unanswered while the page's script is idle. The segment is
// retried on a fresh browser and the film is that of an undisturbed render. (Before, the
// render failed "stopped responding ... a script that does not end?", as a View
// Transition's frame did once beside two CPU hogs.)
TEST_F(RendererTest, ALaneWhoseBrowserHangsIsRetriedAndTheFilmIsUnchanged) {
  RenderOptions clean = Options("timecode.html", "steady.mp4");
  clean.frames = 30;
  clean.lanes = 1;
  Result<RenderStats> a = Render(clean);
  ASSERT_TRUE(a.ok()) << a.status().ToString();

  RenderOptions hung = Options("timecode.html", "hung.mp4");
  hung.frames = 30;
  hung.lanes = 1;
  hung.page.timeout = std::chrono::seconds(3);
  std::atomic<int> stopped{0};
  hung.on_progress = [&](const Progress& p) {
    if (p.frames_done < 10 || stopped.load() != 0) return;
    std::vector<pid_t> browsers = browser::LiveBrowserGroups();
    ASSERT_EQ(browsers.size(), 1u);
    // The browser's GPU process: in the browser's process group, "--type=gpu-process".
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      if (::getpgid(pid) != browsers.front()) continue;
      std::ifstream in(entry.path() / "cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (cmdline.find("--type=gpu-process") == std::string::npos) continue;
      ::kill(pid, SIGSTOP);
      stopped = pid;
    }
  };
  std::vector<std::string> notes;
  hung.on_note = [&](const std::string& note) { notes.push_back(note); };
  Result<RenderStats> b = Render(hung);
  ASSERT_NE(stopped.load(), 0) << "no GPU process found";
  ::kill(stopped.load(), SIGKILL);  // Gone with its browser already; in case it is not.
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->retries, 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the browser hung, not the page"), std::string::npos) << notes[0];
  ExpectSameFilm(a->output, b->output, 30);
}

TEST_F(RendererTest, PageThatRunsOutOfMemoryFailsAtOnceSayingSo) {
  // A crash retried on a fresh browser would only run out of memory again (twice more, 104 s
  // on a 4 GB heap): the render stops at the first, naming memory. A small heap keeps it
  // quick and light.
  RenderOptions options = Options("out-of-memory.html", "oom.mp4");
  options.frames = 60;
  options.lanes = 1;
  options.launch.extra_args.push_back("--js-flags=--max-old-space-size=64");
  std::vector<std::string> notes;
  options.on_note = [&](const std::string& note) { notes.push_back(note); };
  Result<RenderStats> stats = Render(options);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), StatusCode::kResourceExhausted) << stats.status().ToString();
  EXPECT_NE(stats.status().message().find("ran out of memory at frame 1"), std::string_view::npos)
      << stats.status().ToString();
  EXPECT_NE(stats.status().message().find("V8 javascript OOM"), std::string_view::npos)
      << stats.status().ToString();
  EXPECT_TRUE(notes.empty()) << "retried: " << notes.front();
  EXPECT_FALSE(fs::exists(dir_ / "oom.mp4"));
}

TEST_F(RendererTest, PageDeclaresItsOwnDuration) {
  RenderOptions options = Options("ready-late.html", "frames_%03d.png");
  Result<RenderStats> stats = Render(options);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->frames, 15);  // 0.5 s at 30 fps.
  EXPECT_TRUE(fs::exists(dir_ / "frames_014.png"));
  EXPECT_FALSE(fs::exists(dir_ / "frames_015.png"));
}

TEST_F(RendererTest, NoDurationAnywhereIsAClearError) {
  Result<RenderStats> stats = Render(Options("timecode.html", "x.mp4"));
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("how long is the film"), std::string_view::npos);
  // The library names no command-line flag: the service hands its messages to clients.
  EXPECT_EQ(stats.status().message().find("--"), std::string_view::npos);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(RendererTest, FailingPageLeavesNoOutput) {
  RenderOptions options = Options("navigates-away.html", "gone.mp4");
  options.frames = 60;
  Result<RenderStats> stats = Render(options);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("navigated away"), std::string_view::npos)
      << stats.status().ToString();
  EXPECT_FALSE(fs::exists(dir_ / "gone.mp4"));
  EXPECT_FALSE(fs::exists(DefaultWorkDir((dir_ / "gone.mp4").string())))
      << "a render that finished no segment leaves no work folder";
}

TEST_F(RendererTest, CancelStopsAndLeavesNoOutput) {
  RenderOptions options = Options("timecode.html", "cancelled.mp4");
  options.frames = 600;
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  options.on_progress = [&](const Progress& p) {
    if (p.frames_done == 10) cancel = true;
  };
  Result<RenderStats> stats = Render(options);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(fs::exists(dir_ / "cancelled.mp4"));
  EXPECT_FALSE(fs::exists(DefaultWorkDir((dir_ / "cancelled.mp4").string())));
}

}  // namespace
}  // namespace pagereel::render
