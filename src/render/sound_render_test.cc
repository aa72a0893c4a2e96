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
// Media times of the clicks in clicks.wav, in samples at 48 kHz; the page starts it at 0.5 s.
const std::vector<int64_t> kClicks = {4800, 16800, 38400};  // 0.1, 0.35, 0.8 s.
constexpr int64_t kClicksStart = 24000;                     // Film time 0.5 s.

constexpr char kPage[] = R"(<!doctype html>
<body style="background:#123">
<audio id="tone" autoplay src="tone.wav"></audio>
<script>
  // At frame 0, a timer for 500 ms: the clicks start then, from a detached element.
  requestAnimationFrame(() => setTimeout(() => new Audio('clicks.wav').play(), 500));
</script>
</body>)";

constexpr char kSilentPage[] = R"(<!doctype html><body style="background:#321"></body>)";

class SoundRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::HttpServer::Response clicks;
    clicks.content_type = "audio/wav";
    clicks.body = audio::test_sounds::Wav(audio::test_sounds::ClickTrack(kRate, 1, 1.5, kClicks), 1, kRate);
    server_.Serve("/clicks.wav", clicks);
    testing::HttpServer::Response tone = clicks;
    tone.body = audio::test_sounds::Wav(audio::test_sounds::Tone(kRate, 2, 3, 0.05f), 2, kRate);
    server_.Serve("/tone.wav", tone);
    server_.Serve("/page.html", std::string(kPage));
    server_.Serve("/silent.html", std::string(kSilentPage));
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

}  // namespace
}  // namespace pagereel::render
