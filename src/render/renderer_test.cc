// Renders real pages with the real browser and encoders, then decodes the films.
#include "render/renderer.h"

#include <signal.h>

#include <filesystem>

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
    o.encoder.path = (dir_ / output).string();
    o.slice_frames = 20;
    return o;
  }

};

TEST_F(RendererTest, FilmIsIdenticalWhateverTheLaneCountAndEveryFrameShowsItsTime) {
  RenderOptions one = Options("timecode.html", "one.mp4");
  one.frames = 90;
  one.lanes = 1;
  Result<RenderStats> a = Render(one);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->preroll_frames, 0);

  RenderOptions three = Options("timecode.html", "three.mp4");
  three.frames = 90;
  three.lanes = 3;
  Result<RenderStats> b = Render(three);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_GT(b->preroll_frames, 0);  // Lanes did jump ahead, so the comparison means something.

  Result<testing::DecodedVideo> va = testing::DecodeVideo(a->output);
  Result<testing::DecodedVideo> vb = testing::DecodeVideo(b->output);
  ASSERT_TRUE(va.ok() && vb.ok());
  ASSERT_EQ(va->rgb.size(), 90u);
  ASSERT_EQ(vb->rgb.size(), 90u);
  for (size_t n = 0; n < 90; ++n) {
    ASSERT_TRUE(va->rgb[n] == vb->rgb[n]) << "frame " << n << " differs between 1 and 3 lanes";
    const int t = static_cast<int>(FrameTimeMillis(static_cast<int64_t>(n), Rational{30, 1}));
    const uint8_t* px = va->rgb[n].data();
    EXPECT_EQ(testing::ReadTimecodeRow(px, 640 * 3, 3, testing::kRafTimestamp), t) << n;
    EXPECT_EQ(testing::ReadTimecodeRow(px, 640 * 3, 3, testing::kCssAnimation), t) << n;
    EXPECT_EQ(testing::ReadTimecodeRow(px, 640 * 3, 3, testing::kRafCount), n + 1) << n;
    EXPECT_NEAR(va->pts_seconds[n], n / 30.0, 1e-6);
  }
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
  crashy.after_frame = [&](int, int64_t frame, browser::Browser& browser) {
    // Kill a lane's browser in the middle of its second slice, once.
    if (frame == 25 && !killed.exchange(true)) ::kill(browser.pid(), SIGKILL);
  };
  std::vector<std::string> notes;
  crashy.on_note = [&](const std::string& note) { notes.push_back(note); };
  Result<RenderStats> b = Render(crashy);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(killed.load());
  EXPECT_EQ(b->retries, 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("slice 1"), std::string::npos) << notes[0];

  Result<testing::DecodedVideo> va = testing::DecodeVideo(a->output);
  Result<testing::DecodedVideo> vb = testing::DecodeVideo(b->output);
  ASSERT_TRUE(va.ok() && vb.ok());
  ASSERT_EQ(vb->rgb.size(), 60u);
  for (size_t n = 0; n < 60; ++n) ASSERT_TRUE(va->rgb[n] == vb->rgb[n]) << "frame " << n;
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
  EXPECT_TRUE(fs::is_empty(dir_));
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
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace pagereel::render
