// A source's sound through SRT to a real receiver: ffmpeg listening on 127.0.0.1 (a
// contribution link's far end) writes what it got to an MPEG-TS file, decoded again with
// libav. Built twice: 10 s at each rate in the default suite (live_sound), and with
// PAGEREEL_SRT_SOUND_SLOW a minute in the slow one (live_sound_slow), under another name
// (ctest keeps one set of labels per test name).
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "encode/sound.h"
#include "live/engine.h"
#include "live/receiver_testing.h"
#include "live/sound_buffer.h"
#include "live/tone_testing.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

#if PAGEREEL_SRT_SOUND_SLOW
#define PAGEREEL_SRT_SOUND_SECONDS 60
#define PAGEREEL_SRT_SOUND_RUN Minute
#else
#define PAGEREEL_SRT_SOUND_SECONDS 10
#define PAGEREEL_SRT_SOUND_RUN TenSeconds
#endif

namespace pagereel::live {
namespace {

namespace fs = std::filesystem;

class SrtSoundTest : public ::testing::TestWithParam<Rational> {
 protected:
  testing::ScratchDir scratch_{"live-sound-srt"};
};

TEST_P(SrtSoundTest, AToneReachesAnSrtReceiverWithEachTicksShareAndNoGap) {
  const Rational fps = GetParam();
  const int64_t ticks = int64_t{PAGEREEL_SRT_SOUND_SECONDS} * fps.num / fps.den;
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "srt.ts";
  Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-c", "copy", got.string()});
  ASSERT_TRUE(receiver.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // Listening before we call.
  ShowSpec show = ToneShow(fps);
  OutputSpec out;
  out.id = "srt";
  out.stream.container = encode::Container::kMpegTs;
  out.stream.sink = {encode::Sink::Kind::kUrl, "srt://127.0.0.1:" + std::to_string(port) + "?mode=caller", nullptr};
  show.outputs.push_back(out);
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(ticks, nullptr).ok());
  const ShowStatus status = (*engine)->CurrentStatus();
  receiver.Stop(/*wait_for_end=*/true);
  ASSERT_EQ(status.sound.rfind("pulseaudio", 0), 0u) << status.sound;
  // Every tick took exactly its share, counted from tick 0.
  EXPECT_EQ(status.clock.sound_samples, encode::SoundSamples(ticks, fps));
  EXPECT_TRUE(status.outputs[0].connected);

  auto video = testing::DecodeVideo(got.string(), /*keep_pixels=*/false);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  auto audio = testing::DecodeAudio(got.string());
  ASSERT_TRUE(audio.ok()) << audio.status().ToString();
  EXPECT_EQ(audio->codec, "aac");
  EXPECT_EQ(audio->sample_rate, 48000);
  // What the receiver got from its first picture on (it may miss the first while SRT
  // connects, and its demuxer holds the last until the stream's end).
  const auto frames = static_cast<int64_t>(video->pts_seconds.size());
  EXPECT_GE(frames + 5, status.outputs[0].frames);
  // Sound and pictures as long, within a frame: the pictures' share of samples, plus the
  // 1,024 samples of AAC's priming and up to 1,024 of its last packet's padding, which
  // MPEG-TS carries (no container field hides them).
  const double want = static_cast<double>(encode::SoundSamples(frames, fps) + 1024);
  EXPECT_NEAR(static_cast<double>(audio->length()), want, static_cast<double>(TickSamples(0, fps) + 1024));
  ExpectEveryGapCounted(*audio, status.sources[0]);
}

INSTANTIATE_TEST_SUITE_P(PAGEREEL_SRT_SOUND_RUN, SrtSoundTest, ::testing::Values(Rational{30000, 1001}, Rational{60000, 1001}),
                         [](const ::testing::TestParamInfo<Rational>& param) {
                           return param.param.num == 30000 ? std::string("At29_97") : std::string("At59_94");
                         });

}  // namespace
}  // namespace pagereel::live
