// A page's sound in /v1/clip answers, on the real service, the real chrome-headless-shell and
// the real encoders: pages over loopback HTTP play WAVs of clicks (audio/test_sounds.h, the
// pages render's sound tests use), and every answer is decoded with libavformat/libavcodec.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "audio/test_sounds.h"
#include "encode/sound.h"
#include "serve/clip_test_service.h"
#include "testing/http_client.h"
#include "testing/http_server.h"
#include "testing/media.h"

namespace pagereel::serve {
namespace {

using nlohmann::json;
using testing::Encode;
using testing::Get;
using Reply = testing::HttpReply;
namespace test_sounds = audio::test_sounds;

constexpr int kRate = 48000;
constexpr int64_t kFrames = 60;  // 2 s at 30 fps.
// The service's cap on one clip's media in these tests: clicks.wav and tone.wav fit in it
// (144 KB and 576 KB), big.wav (2.1 MB) does not.
constexpr int64_t kMediaCap = int64_t{1} << 20;

class ServeClipSoundTest : public ClipServiceTest {
 protected:
  ServeClipSoundTest() : ClipServiceTest("serve-clip-sound") {}

  void SetUp() override {
    testing::HttpServer::Response wav;
    wav.content_type = "audio/wav";
    wav.body = test_sounds::ClicksWav();
    pages_.Serve("/clicks.wav", wav);
    refused_.Serve("/clicks.wav", wav);
    local_wav_ = scratch_.path() / "clicks.wav";
    test_sounds::WriteFile(local_wav_.string(), wav.body);
    wav.body = test_sounds::ToneWav();
    pages_.Serve("/tone.wav", wav);
    wav.body = test_sounds::Wav(test_sounds::Tone(kRate, 2, 11, 0.05f), 2, kRate);
    pages_.Serve("/big.wav", wav);
    pages_.Serve("/clicks.html", std::string(test_sounds::kClicksPage));
    pages_.Serve("/silent.html", std::string(test_sounds::kSilentPage));
    // Web Audio: an oscillator from 0.25 s to 0.35 s, scheduled ahead at frame 0.
    pages_.Serve("/web-audio.html",
                 "<!doctype html><body><script>const ctx = new AudioContext();"
                 "requestAnimationFrame(() => { const osc = ctx.createOscillator();"
                 "  osc.connect(ctx.destination);"
                 "  osc.start(ctx.currentTime + 0.25); osc.stop(ctx.currentTime + 0.35); });"
                 "</script></body>");
    // At frame 0: clicks from an address the service's egress policy refuses, clicks from a
    // local file, and media over the service's cap; beside the tone, which is in the clip.
    pages_.Serve("/left-out.html",
                 "<!doctype html><body style='background:#213'>"
                 "<audio autoplay src='tone.wav'></audio><script>"
                 "requestAnimationFrame(() => {"
                 "  new Audio('" + refused_.Url("/clicks.wav") + "').play();"
                 "  new Audio('file://" + local_wav_.string() + "').play();"
                 "  new Audio('big.wav').play();"
                 "});</script></body>");

    Limits limits;
    limits.max_clip_media_bytes = kMediaCap;
    StartService(limits);
  }

  Reply Clip(const std::string& page, const std::string& more = "") {
    return Get(port_, "/v1/clip?width=160&height=90&fps=30&frames=" + std::to_string(kFrames) +
                          more + "&url=" + Encode(pages_.Url(page)));
  }

  std::string Save(const Reply& reply, const std::string& name) {
    const std::string path = (scratch_.path() / name).string();
    test_sounds::WriteFile(path, reply.body);
    return path;
  }

  json LastLog() {
    std::vector<json> logs = Logs();
    return logs.empty() ? json() : logs.back();
  }

  testing::HttpServer refused_;  // Loopback, not opened to the pages.
  std::filesystem::path local_wav_;
};

TEST_F(ServeClipSoundTest, AClipCarriesThePagesSoundOnItsFilmTime) {
  struct Case {
    const char* format;
    const char* codec;
    const char* more;
  };
  // The WebM clip keeps its transparency through the join that adds the sound.
  for (const Case& c : {Case{"mp4", "aac", ""}, Case{"webm", "opus", "&transparent=true"}}) {
    SCOPED_TRACE(c.format);
    Reply reply = Clip("/clicks.html", std::string("&format=") + c.format + c.more);
    ASSERT_EQ(reply.status, 200) << reply.body << reply.error;
    const std::string path = Save(reply, std::string("clicks.") + c.format);
    Result<testing::DecodedAudio> sound = testing::DecodeAudio(path);
    ASSERT_TRUE(sound.ok()) << sound.status().ToString();
    EXPECT_EQ(sound->codec, c.codec);
    EXPECT_EQ(sound->sample_rate, kRate);
    EXPECT_EQ(sound->channels, 2);
    // As long as the pictures: the samples of 60 frames at 30 fps. MP4 states it in its
    // edit list (FFmpeg hands out the last AAC frame whole); WebM decodes to it.
    const int64_t samples = encode::SoundSamples(kFrames, Rational{30, 1});
    const bool mp4 = std::string(c.format) == "mp4";
    if (mp4) {
      EXPECT_EQ(sound->stated_samples, samples);
      // Still faststart: its index before its media, for players that stream it.
      EXPECT_LT(reply.body.find("moov"), reply.body.find("mdat"));
    } else {
      EXPECT_EQ(sound->length(), samples);
    }
    Result<testing::DecodedVideo> video = testing::DecodeVideo(path);
    ASSERT_TRUE(video.ok()) << video.status().ToString();
    EXPECT_EQ(video->pts_seconds.size(), static_cast<size_t>(kFrames));
    EXPECT_EQ(video->has_alpha, !mp4);
    // Every click within 1 ms of its film time.
    std::vector<int64_t> onsets = test_sounds::Onsets(sound->samples, sound->channels);
    ASSERT_EQ(onsets.size(), test_sounds::kClicks.size());
    for (size_t i = 0; i < onsets.size(); ++i) {
      EXPECT_NEAR(onsets[i], test_sounds::kClicksStart + test_sounds::kClicks[i], kRate / 1000)
          << "click " << i;
    }
    // The tone plays from the start, under the clicks.
    EXPECT_NEAR(test_sounds::Peak(sound->samples, sound->channels, 2400, 20000), 0.05, 0.01);
    // The answer says what it mixed.
    EXPECT_EQ(reply.Headers("Pagereel-Sounds-Mixed"), std::vector<std::string>{"2"});
    EXPECT_EQ(reply.Headers("Pagereel-Sounds-Left-Out"), std::vector<std::string>{"0"});
    EXPECT_EQ(reply.Headers("Pagereel-Sound-Mixed"),
              (std::vector<std::string>{"<audio src=tone.wav> from frame 0 (0.000 s)",
                                        "<audio src=clicks.wav> from frame 15 (0.500 s)"}))
        << reply.headers.size();
    EXPECT_EQ(LastLog().value("sounds", json::array()).size(), 2u) << LastLog().dump();
  }
  EXPECT_TRUE(std::filesystem::is_empty(scratch_.path() / "work")) << "a clip's media was left";
}

// Web Audio is in clips as in films: the AudioContext stand-in is on by default.
TEST_F(ServeClipSoundTest, WebAudioIsInTheClip) {
  Reply reply = Clip("/web-audio.html");
  ASSERT_EQ(reply.status, 200) << reply.body << reply.error;
  EXPECT_EQ(reply.Headers("Pagereel-Sounds-Mixed"), std::vector<std::string>{"1"});
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(Save(reply, "web-audio.mp4"));
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  EXPECT_LT(test_sounds::Peak(sound->samples, sound->channels, 0, kRate / 5), 0.01);
  EXPECT_GT(test_sounds::Peak(sound->samples, sound->channels, kRate / 4 + 480, kRate * 7 / 20 - 480), 0.5);
  EXPECT_LT(test_sounds::Peak(sound->samples, sound->channels, kRate * 2 / 5, kRate), 0.01);
}

TEST_F(ServeClipSoundTest, AudioFalseOrAPageWithoutSoundGivesNoAudioStream) {
  Reply muted = Clip("/clicks.html", "&audio=false");
  ASSERT_EQ(muted.status, 200) << muted.body;
  EXPECT_EQ(testing::DecodeAudio(Save(muted, "muted.mp4")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(muted.Headers("Pagereel-Sounds-Mixed").empty());

  Reply silent = Clip("/silent.html", "&format=webm");
  ASSERT_EQ(silent.status, 200) << silent.body;
  EXPECT_EQ(testing::DecodeAudio(Save(silent, "silent.webm")).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(silent.Headers("Pagereel-Sounds-Mixed"), std::vector<std::string>{"0"});

  // A GIF has no sound to leave out: the parameters are refused, not ignored.
  Reply gif = Get(port_, "/v1/gif?audio=true&frames=2&url=" + Encode(pages_.Url("/clicks.html")));
  EXPECT_EQ(gif.status, 400);
  EXPECT_NE(gif.body.find("audio: does not apply to a GIF"), std::string::npos) << gif.body;
}

// Media goes through the capture's own browser context, so its egress policy: a sound at a
// refused address, or in a local file, is left out and named, and so is media over the
// service's cap; the rest is mixed. strict=true refuses such a clip, naming the sound.
TEST_F(ServeClipSoundTest, SoundTheServiceMustNotFetchIsLeftOutAndNamed) {
  Reply reply = Clip("/left-out.html");
  ASSERT_EQ(reply.status, 200) << reply.body << reply.error;
  EXPECT_EQ(reply.Headers("Pagereel-Sounds-Mixed"), std::vector<std::string>{"1"});
  EXPECT_EQ(reply.Headers("Pagereel-Sounds-Left-Out"), std::vector<std::string>{"3"});
  std::string all;
  for (const std::string& l : reply.Headers("Pagereel-Sound-Left-Out")) all += l + "\n";
  auto listed = [&](const std::string& what) { return all.find(what) != std::string::npos; };
  EXPECT_TRUE(listed("<audio src=clicks.wav> at frame 0 (0.000 s): could not fetch " +
                     refused_.Url("/clicks.wav") + ": HTTP status 403"))
      << all;
  EXPECT_TRUE(listed("<audio src=clicks.wav> at frame 0 (0.000 s): could not fetch file://" +
                     local_wav_.string()))
      << all;
  EXPECT_TRUE(listed("<audio src=big.wav> at frame 0 (0.000 s): could not fetch " +
                     pages_.Url("/big.wav") + ": the page's media would pass 1 MiB"))
      << all;
  EXPECT_TRUE(refused_.Requests().empty()) << "the media was fetched around the egress policy";
  // The tone is in the clip, the clicks are not.
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(Save(reply, "left-out.mp4"));
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  EXPECT_NEAR(test_sounds::Peak(sound->samples, sound->channels, 2400, 90000), 0.05, 0.01);
  EXPECT_EQ(LastLog().value("sounds_left_out", json::array()).size(), 3u) << LastLog().dump();

  Reply strict = Clip("/left-out.html", "&strict=true");
  EXPECT_EQ(strict.status, 422) << strict.body;
  EXPECT_NE(strict.body.find("3 sounds would be left out of the clip (strict=true): "
                             "<audio src=clicks.wav> at frame 0 (0.000 s): could not fetch " +
                             refused_.Url("/clicks.wav")),
            std::string::npos)
      << strict.body;
  EXPECT_NE(strict.body.find("audio=false"), std::string::npos) << strict.body;
  EXPECT_TRUE(refused_.Requests().empty());

  Reply metrics = Get(port_, "/metrics");
  EXPECT_NE(metrics.body.find("pagereel_clip_sounds_total{outcome=\"left_out\"} 6"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("pagereel_clip_sounds_total{outcome=\"mixed\"} 1"), std::string::npos)
      << metrics.body;
  EXPECT_TRUE(std::filesystem::is_empty(scratch_.path() / "work")) << "a clip's media was left";
}

}  // namespace
}  // namespace pagereel::serve
