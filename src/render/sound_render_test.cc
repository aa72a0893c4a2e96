// A page's sound in the film, end to end: a real page over loopback HTTP starts a WAV of
// clicks from a timer (new Audio()) and an <audio autoplay> tone; the film is rendered by
// the real browser and encoders, and its sound decoded.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audio/test_sounds.h"
#include "audio/timeline.h"
#include "encode/sound.h"
#include "render/renderer.h"
#include "render/sound_test_film.h"
#include "testing/http_server.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::render {
namespace {

namespace fs = std::filesystem;

constexpr int kRate = 48000;
constexpr int64_t kFrames = 60;  // 2 s at 30 fps.
using audio::test_sounds::kClicks;
using audio::test_sounds::kClicksStart;

// Sounds the film cannot carry, each started on a known frame (n counts animation frames:
// frame n runs the callback that sees n): media that is not there (from the start), a MediaStream as
// srcObject (frame 10), an MSE player's blob: URL (frame 20), speech (frame 30); and a tone
// that is in the film.
constexpr char kLeftOutPage[] = R"(<!doctype html>
<body style="background:#213">
<audio autoplay src="tone.wav"></audio>
<audio autoplay src="missing.wav"></audio>
<script>
  let n = 0;
  requestAnimationFrame(function tick() {
    if (n === 10) { const a = new Audio(); a.srcObject = new MediaStream(); a.play(); }
    if (n === 20) { const a = new Audio(); a.src = URL.createObjectURL(new MediaSource()); a.play(); }
    if (n === 30) speechSynthesis.speak(new SpeechSynthesisUtterance('hello'));
    n++;
    requestAnimationFrame(tick);
  });
</script>
</body>)";

// The clicks start on the 15th animation frame: a lane that jumped to its segment ran
// fewer of them, so it starts the clicks later than the lane that ran every frame.
constexpr char kCountedPage[] = R"(<!doctype html>
<body style="background:#132">
<script>
  let n = 0;
  requestAnimationFrame(function tick() {
    if (n++ === 15) new Audio('clicks.wav').play();
    requestAnimationFrame(tick);
  });
</script>
</body>)";

// Media named by <source> children, and in iframes (two of one URL: their sounds are
// apart, not one).
constexpr char kNestedPage[] = R"(<!doctype html>
<body style="background:#312">
<audio autoplay><source src="nothing.ogg" type="audio/ogg; codecs=nonesuch"><source src="clicks.wav" type="audio/wav"></audio>
<iframe src="inner.html" width="100" height="50"></iframe>
<iframe src="inner.html" width="100" height="50"></iframe>
</body>)";
constexpr char kInnerPage[] = R"(<!doctype html>
<body><audio autoplay src="tone.wav"></audio></body>)";

class SoundRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::HttpServer::Response clicks;
    clicks.content_type = "audio/wav";
    clicks.body = audio::test_sounds::ClicksWav();
    server_.Serve("/clicks.wav", clicks);
    testing::HttpServer::Response tone = clicks;
    tone.body = audio::test_sounds::ToneWav();
    server_.Serve("/tone.wav", tone);
    server_.Serve("/page.html", std::string(audio::test_sounds::kClicksPage));
    server_.Serve("/silent.html", std::string(audio::test_sounds::kSilentPage));
    server_.Serve("/left-out.html", std::string(kLeftOutPage));
    // Only the MediaStream of kLeftOutPage (no page errors: --strict fails on the sound alone).
    server_.Serve("/stream.html", audio::test_sounds::ReadFile(std::string(PAGEREEL_SOURCE_DIR) +
                                                               "/tests/pages/sound/left-out.html"));
    server_.Serve("/counted.html", std::string(kCountedPage));
    server_.Serve("/nested.html", std::string(kNestedPage));
    server_.Serve("/inner.html", std::string(kInnerPage));
  }

  RenderOptions Options(const std::string& page, const std::string& output, int lanes) {
    return SoundTestFilm(server_.Url(page), (scratch_.path() / output).string(), lanes, kFrames);
  }

  testing::ScratchDir scratch_{"sound-render"};
  testing::HttpServer server_;
};

TEST_F(SoundRenderTest, ClicksLandOnTheirFilmTimeInAnyLaneCount) {
  std::vector<float> decoded[2];
  for (int lanes : {1, 3}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    Result<RenderStats> stats = Render(Options("/page.html", "film" + std::to_string(lanes) + ".mp4", lanes));
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->sounds.size(), 2u);
    EXPECT_TRUE(stats->sounds_left_out.empty()) << stats->sounds_left_out.front();
    Result<testing::DecodedAudio> sound = testing::DecodeAudio(stats->output);
    ASSERT_TRUE(sound.ok()) << sound.status().ToString();
    EXPECT_EQ(sound->codec, "aac");
    EXPECT_EQ(sound->sample_rate, kRate);
    // As long as the pictures: the samples of 60 frames at 30 fps, as the container says.
    EXPECT_EQ(sound->stated_samples, encode::SoundSamples(kFrames, Rational{30, 1}));
    Result<testing::DecodedVideo> video = testing::DecodeVideo(stats->output, false);
    ASSERT_TRUE(video.ok());
    EXPECT_EQ(video->pts_seconds.size(), static_cast<size_t>(kFrames));
    std::vector<int64_t> onsets = audio::test_sounds::Onsets(sound->samples, sound->channels);
    ASSERT_EQ(onsets.size(), kClicks.size());
    for (size_t i = 0; i < kClicks.size(); ++i) {
      EXPECT_NEAR(onsets[i], kClicksStart + kClicks[i], kRate / 1000) << "click " << i;
    }
    // The tone plays from the start (quietly: under the clicks' threshold).
    EXPECT_NEAR(audio::test_sounds::Peak(sound->samples, sound->channels, 2400, 20000), 0.05, 0.01);
    decoded[lanes == 1 ? 0 : 1] = std::move(sound->samples);
  }
  EXPECT_TRUE(decoded[0] == decoded[1]) << "the sound differs between 1 and 3 lanes";
}

TEST_F(SoundRenderTest, APageWithoutSoundOrNoAudioHasNoSoundTrack) {
  Result<RenderStats> silent = Render(Options("/silent.html", "silent.mp4", 1));
  ASSERT_TRUE(silent.ok()) << silent.status().ToString();
  EXPECT_TRUE(silent->sounds.empty());
  EXPECT_EQ(testing::DecodeAudio(silent->output).status().code(), StatusCode::kNotFound);

  RenderOptions options = Options("/page.html", "no-audio.mp4", 1);
  options.sound.sound = FilmSound::kNone;
  Result<RenderStats> muted = Render(options);
  ASSERT_TRUE(muted.ok()) << muted.status().ToString();
  EXPECT_EQ(testing::DecodeAudio(muted->output).status().code(), StatusCode::kNotFound);
}

// What cannot be in the film is named with its frame and why; the rest is mixed.
TEST_F(SoundRenderTest, SoundsLeftOutAreNamedWithTheirFrame) {
  Result<RenderStats> stats = Render(Options("/left-out.html", "left-out.mp4", 1));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->sounds, std::vector<std::string>{"<audio src=tone.wav>"});
  std::string all;
  for (const std::string& l : stats->sounds_left_out) all += l + "\n";
  ASSERT_EQ(stats->sounds_left_out.size(), 4u) << all;
  auto listed = [&](const std::string& what) {
    return all.find(what) != std::string::npos;
  };
  EXPECT_TRUE(listed("<audio src=missing.wav> at frame 0 (0.000 s): could not fetch")) << all;
  EXPECT_TRUE(listed("HTTP status 404")) << all;
  EXPECT_TRUE(listed("srcobject:MediaStream> at frame 10 (0.333 s): its srcObject is a MediaStream")) << all;
  EXPECT_TRUE(listed("> at frame 20 (0.667 s): a blob: URL (an MSE player's MediaSource")) << all;
  EXPECT_TRUE(listed("speechSynthesis.speak(\"hello\") at frame 30 (1.000 s): speech synthesis")) << all;
  // The tone is still there.
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(stats->output);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  EXPECT_NEAR(audio::test_sounds::Peak(sound->samples, sound->channels, 2400, 40000), 0.05, 0.01);
}

// --strict: a sound left out fails the render, naming it; nothing is written, the segments
// are kept, and joining them without --strict writes the film without that sound.
TEST_F(SoundRenderTest, StrictFailsOnASoundLeftOutAndKeepsTheSegments) {
  RenderOptions options = Options("/stream.html", "strict.mp4", 1);
  options.strict = true;
  Result<RenderStats> refused = Render(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  const std::string message(refused.status().message());
  EXPECT_NE(message.find("1 sound would be left out of " + options.output + " (--strict): "
                         "<audio src=srcobject:MediaStream> at frame 10"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("pagereel concat"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(options.output));
  const std::string work = DefaultWorkDir(options.output);
  ASSERT_TRUE(fs::exists(work));

  Result<JoinStats> joined = JoinFilm(work, options.output, AfterJoin::kRemove);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(joined->sounds, std::vector<std::string>{"<audio src=tone.wav>"});
  EXPECT_EQ(joined->sounds_left_out.size(), 1u);
  EXPECT_TRUE(testing::DecodeAudio(options.output).ok());
}

// A lane that jumped to its segment started the clicks later than the lane that ran every
// frame: their timelines disagree on the time both saw, which the join names (the pictures
// of such a page may not show it). Exact pre-roll gives the film its clicks.
TEST_F(SoundRenderTest, AJumpedLaneThatHeardOtherwiseIsNamed) {
  RenderOptions options = Options("/counted.html", "jumped.mp4", 3);
  options.frames = 120;
  options.segment_frames = 10;
  options.preroll = PreRollMode::kJump;
  Result<RenderStats> jumped = Render(options);
  ASSERT_TRUE(jumped.ok()) << jumped.status().ToString();
  ASSERT_GT(jumped->jumps, 0);
  ASSERT_EQ(jumped->sounds_left_out.size(), 1u);
  const std::string& why = jumped->sounds_left_out.front();
  EXPECT_NE(why.find("sound 'media-1' (<audio src=clicks.wav>) played from "), std::string::npos) << why;
  EXPECT_NE(why.find("from 0.500 s at media time 0.000 s, rate 1, volume 1"), std::string::npos) << why;
  EXPECT_NE(why.find("all sound (the film has none"), std::string::npos) << why;
  EXPECT_NE(why.find("use exact pre-roll"), std::string::npos) << why;
  EXPECT_TRUE(jumped->sounds.empty());
  EXPECT_EQ(testing::DecodeAudio(jumped->output).status().code(), StatusCode::kNotFound);

  // --strict: a film without its sound is not written.
  RenderOptions strict = options;
  strict.strict = true;
  strict.output = (scratch_.path() / "jumped-strict.mp4").string();
  Result<RenderStats> refused = Render(strict);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("would be left out"), std::string_view::npos)
      << refused.status().ToString();
  EXPECT_FALSE(fs::exists(strict.output));

  options.preroll = PreRollMode::kExact;
  options.output = (scratch_.path() / "exact.mp4").string();
  Result<RenderStats> exact = Render(options);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_TRUE(exact->sounds_left_out.empty()) << exact->sounds_left_out.front();
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(exact->output);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  std::vector<int64_t> onsets = audio::test_sounds::Onsets(sound->samples, sound->channels);
  ASSERT_EQ(onsets.size(), kClicks.size());
  EXPECT_NEAR(onsets[0], kRate / 2 + kClicks[0], kRate / 1000);  // Frame 15: 0.5 s.
}

// <source> children and media in iframes are in the film, each sound apart.
TEST_F(SoundRenderTest, SourceChildrenAndIframesAreInTheFilm) {
  Result<RenderStats> stats = Render(Options("/nested.html", "nested.mp4", 1));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->sounds.size(), 3u);
  EXPECT_TRUE(stats->sounds_left_out.empty()) << stats->sounds_left_out.front();
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(stats->output);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  // Autoplay started while the page loaded, at film time -lead (docs/page-contract.md: one
  // frame, in whole ms, 34 at 30 fps): at frame 0 the clicks are that far in.
  constexpr int64_t kLead = 34 * kRate / 1000;
  std::vector<int64_t> onsets = audio::test_sounds::Onsets(sound->samples, sound->channels);
  ASSERT_EQ(onsets.size(), kClicks.size());
  for (size_t i = 0; i < kClicks.size(); ++i) {
    EXPECT_NEAR(onsets[i], kClicks[i] - kLead, kRate / 1000) << "click " << i;
  }
  // Both iframes' tones, from the start: twice one tone's level between the clicks.
  EXPECT_NEAR(audio::test_sounds::Peak(sound->samples, sound->channels, 6000, 15000), 0.1, 0.01);
}

}  // namespace
}  // namespace pagereel::render
