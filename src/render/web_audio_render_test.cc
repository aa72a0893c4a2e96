// Web Audio in the film, end to end: a real page over loopback HTTP plays an oscillator
// scheduled ahead and a click from a WAV it fetched and decoded (decodeAudioData) through
// an AudioContext; the film is rendered by the real browser and encoders, and its sound
// decoded (page_script.js "Web Audio", capture/web_audio.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "audio/test_sounds.h"
#include "encode/sound.h"
#include "render/renderer.h"
#include "render/sound_test_film.h"
#include "testing/http_server.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::render {
namespace {

constexpr int kRate = 48000;
constexpr int64_t kFrames = 60;  // 2 s at 30 fps.
constexpr int64_t kClickInWav = 2400;  // 50 ms into click.wav.

// At frame 0: an oscillator from 0.5 s to 0.7 s (scheduled ahead on the context's clock),
// and a timer that plays the decoded click "now" at 1.2 s.
constexpr char kPage[] = R"(<!doctype html>
<body style="background:#123">
<script>
  const ctx = new AudioContext();
  const click = fetch('click.wav').then((r) => r.arrayBuffer()).then((b) => ctx.decodeAudioData(b));
  requestAnimationFrame(async () => {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.connect(gain).connect(ctx.destination);
    osc.start(ctx.currentTime + 0.5);
    osc.stop(ctx.currentTime + 0.7);
    const buffer = await click;
    setTimeout(() => {
      const source = ctx.createBufferSource();
      source.buffer = buffer;
      source.connect(ctx.destination);
      source.start();
    }, 1200);
  });
</script>
</body>)";

// Waits for resume() before it is ready (a real AudioContext's never settles without a
// user's gesture), then plays a tone from 0.25 s to 0.35 s.
constexpr char kResumePage[] = R"(<!doctype html>
<body style="background:#234">
<script>
  const ctx = new AudioContext();
  window.pagereel = { ready: ctx.resume().then(() => {
    const osc = ctx.createOscillator();
    osc.connect(ctx.destination);
    osc.start(ctx.currentTime + 0.25);
    osc.stop(ctx.currentTime + 0.35);
  }) };
</script>
</body>)";

// A tone from 9.5 s to 10.5 s, across the first boundary of the 10 s pieces the sound is
// handed over in (capture/web_audio.h), and a background as bright as an AnalyserNode's
// peak reading in each frame.
constexpr char kAnalyserPage[] = R"(<!doctype html>
<body style="margin:0">
<script>
  const ctx = new AudioContext();
  const analyser = ctx.createAnalyser();
  analyser.connect(ctx.destination);
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  gain.gain.value = 0.5;
  osc.connect(gain).connect(analyser);
  osc.start(9.5);
  osc.stop(10.5);
  const data = new Float32Array(analyser.fftSize);
  const draw = () => {
    analyser.getFloatTimeDomainData(data);
    let peak = 0;
    for (const v of data) peak = Math.max(peak, Math.abs(v));
    const level = Math.round(peak * 255);
    document.body.style.background = 'rgb(' + level + ',' + level + ',' + level + ')';
    requestAnimationFrame(draw);
  };
  requestAnimationFrame(draw);
</script>
</body>)";

// A tone from the start; the page suspends its context at 0.5 s and resumes it at 1 s,
// and feeds it an <audio> element (whose effects cannot be rendered: left out).
constexpr char kSuspendPage[] = R"(<!doctype html>
<body>
<script>
  const ctx = new AudioContext();
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  gain.gain.value = 0.5;
  osc.connect(gain).connect(ctx.destination);
  osc.start();
  ctx.createMediaElementSource(new Audio());
  requestAnimationFrame(() => {
    setTimeout(() => ctx.suspend(), 500);
    setTimeout(() => ctx.resume(), 1000);
  });
</script>
</body>)";

// A tone from 0.5 s to the film's end, after an AudioWorklet module of the page's own
// (JavaScript; none when empty) is added to its context.
std::string TonePage(const std::string& module) {
  return R"(<!doctype html>
<body>
<script>
  const ctx = new AudioContext();
  const module = `)" +
         module + R"(`;
  if (module) ctx.audioWorklet.addModule('data:text/javascript,' + encodeURIComponent(module));
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  gain.gain.value = 0.5;
  osc.connect(gain).connect(ctx.destination);
  osc.start(0.5);
</script>
</body>)";
}

// Keeps the worklet's currentFrame a render quantum behind once rendering has begun.
// Chromium's lags so in a quantum whose end finds the audio graph's lock taken (it is set
// with a TryLock, BaseAudioContext::UpdateWorkletGlobalScopeOnRenderingThread), which a
// render meets at random; here every quantum meets it.
constexpr char kLaggingClock[] = R"(
  let owner = globalThis;
  while (!Object.getOwnPropertyDescriptor(owner, 'currentFrame')) owner = Object.getPrototypeOf(owner);
  const real = Object.getOwnPropertyDescriptor(owner, 'currentFrame').get;
  Object.defineProperty(globalThis, 'currentFrame', {
    get() { const frame = real.call(globalThis); return frame > 0 ? frame - 128 : frame; },
    configurable: true,
  });)";

// Has the worklet's MessagePorts run `change` in place of sending (`send` sends): the
// recorder's samples are how pagereel hears a context, so this stands in for a fault of
// its own.
std::string PortChange(const std::string& change) {
  return R"(
  const send = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function postMessage(message, transfer) { )" +
         change + " };";
}

// TonePage's oscillator, sample for sample, in [from, to) of `sound`: a block of it missing
// or moved (by a quantum: 1.17 periods of 440 Hz) is off by up to the tone's height.
void ExpectTone(const testing::DecodedAudio& sound, int64_t from, int64_t to) {
  double worst = 0;
  int64_t worst_at = from;
  for (int64_t n = from; n < to; ++n) {
    const double tone = 0.5 * std::sin(2 * M_PI * 440 * static_cast<double>(n - 24000) / kRate);
    const double off = std::abs(
        static_cast<double>(sound.samples[static_cast<size_t>(n * sound.channels)]) - tone);
    if (off > worst) {
      worst = off;
      worst_at = n;
    }
  }
  EXPECT_LT(worst, 0.01) << "at sample " << worst_at;
}

class WebAudioRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::HttpServer::Response click;
    click.content_type = "audio/wav";
    click.body = audio::test_sounds::Wav(audio::test_sounds::ClickTrack(kRate, 1, 0.5, {kClickInWav}), 1, kRate);
    server_.Serve("/click.wav", click);
    server_.Serve("/page.html", std::string(kPage));
    server_.Serve("/resume.html", std::string(kResumePage));
    server_.Serve("/analyser.html", std::string(kAnalyserPage));
    server_.Serve("/suspend.html", std::string(kSuspendPage));
    server_.Serve("/lagging.html", TonePage(kLaggingClock));
    server_.Serve("/tone.html", TonePage(""));
    server_.Serve("/lost.html", TonePage(PortChange("/* Sends nothing. */")));
    server_.Serve("/moved.html",
                  TonePage(PortChange("message.at += 128; send.call(this, message, transfer);")));
  }

  RenderOptions Options(const std::string& page, const std::string& output, int lanes) {
    RenderOptions o = SoundTestFilm(server_.Url(page), (scratch_.path() / output).string(), lanes, kFrames);
    o.page.timeout = std::chrono::seconds(10);
    return o;
  }

  // The sound of a film of `page` with its sound exact (16-bit PCM in a .mov `output`).
  Result<testing::DecodedAudio> RenderExact(const std::string& page, const std::string& output,
                                            int lanes) {
    RenderOptions options = Options(page, output, lanes);
    options.sound.codec = encode::SoundCodec::kPcm16;
    PR_ASSIGN_OR_RETURN(RenderStats stats, Render(options));
    return testing::DecodeAudio(stats.output);
  }

  testing::ScratchDir scratch_{"web-audio-render"};
  testing::HttpServer server_;
};

TEST_F(WebAudioRenderTest, OscillatorAndDecodedClickLandOnTheirSampleInAnyLaneCountAndRun) {
  std::vector<std::vector<float>> decoded;
  int run = 0;
  for (int lanes : {1, 3, 1}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes) + ", run " + std::to_string(run));
    Result<RenderStats> stats = Render(Options("/page.html", "film" + std::to_string(run++) + ".mp4", lanes));
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    ASSERT_EQ(stats->sounds, std::vector<std::string>{"Web Audio (AudioContext 1)"});
    EXPECT_TRUE(stats->sounds_left_out.empty()) << stats->sounds_left_out.front();
    Result<testing::DecodedAudio> sound = testing::DecodeAudio(stats->output);
    ASSERT_TRUE(sound.ok()) << sound.status().ToString();
    EXPECT_EQ(sound->sample_rate, kRate);
    EXPECT_EQ(sound->stated_samples, encode::SoundSamples(kFrames, Rational{30, 1}));
    std::vector<int64_t> onsets = audio::test_sounds::Onsets(sound->samples, sound->channels);
    ASSERT_EQ(onsets.size(), 2u);
    // Sample-exact: the oscillator's sine passes the onset threshold (0.3) on its 6th
    // sample; the click is where it is in the WAV (AAC may move an onset by a sample).
    EXPECT_NEAR(onsets[0], 24000 + 6, 1) << "oscillator";
    EXPECT_NEAR(onsets[1], 57600 + kClickInWav, 1) << "click";
    // The oscillator stopped at 0.7 s.
    EXPECT_GT(audio::test_sounds::Peak(sound->samples, sound->channels, 24000, 33000), 0.9);
    EXPECT_LT(audio::test_sounds::Peak(sound->samples, sound->channels, 34000, 57000), 0.05);
    decoded.push_back(std::move(sound->samples));
  }
  EXPECT_TRUE(decoded[0] == decoded[1]) << "the sound differs between 1 and 3 lanes";
  EXPECT_TRUE(decoded[0] == decoded[2]) << "the sound differs between two runs";
}

TEST_F(WebAudioRenderTest, SoundAcrossPiecesAndAnalyserReadingsAreTheSameInAnyLaneCount) {
  constexpr int64_t kLongFrames = 130;  // 13 s at 10 fps, in segments of 3 s.
  std::vector<float> sound[2];
  std::vector<std::vector<uint8_t>> pictures[2];
  for (int lanes : {1, 3}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    RenderOptions options = Options("/analyser.html", "analyser" + std::to_string(lanes) + ".mp4", lanes);
    options.page.width = 64;
    options.page.height = 36;
    options.page.fps = Rational{10, 1};
    options.frames = kLongFrames;
    options.segment_frames = 30;
    Result<RenderStats> stats = Render(options);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    ASSERT_EQ(stats->sounds, std::vector<std::string>{"Web Audio (AudioContext 1)"});
    Result<testing::DecodedAudio> decoded = testing::DecodeAudio(stats->output);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->stated_samples, encode::SoundSamples(kLongFrames, Rational{10, 1}));
    const std::vector<float>& s = decoded->samples;
    const int c = decoded->channels;
    std::vector<int64_t> onsets = audio::test_sounds::Onsets(s, c);
    ASSERT_EQ(onsets.size(), 1u);
    EXPECT_NEAR(onsets[0], 456000 + 11, 1);  // 0.5 * sin passes 0.3 on the 11th sample.
    // Whole on both sides of 10 s, where one piece of the context's sound ends and the next
    // begins; silent after 10.5 s.
    EXPECT_NEAR(audio::test_sounds::Peak(s, c, 456100, 480000), 0.5, 0.02);
    EXPECT_NEAR(audio::test_sounds::Peak(s, c, 479950, 480050), 0.5, 0.1);
    EXPECT_NEAR(audio::test_sounds::Peak(s, c, 480000, 503900), 0.5, 0.02);
    EXPECT_LT(audio::test_sounds::Peak(s, c, 505000, 624000), 0.01);
    sound[lanes == 1 ? 0 : 1] = s;
    Result<testing::DecodedVideo> video = testing::DecodeVideo(stats->output);
    ASSERT_TRUE(video.ok()) << video.status().ToString();
    // The analyser heard the tone: frames at 10 s are bright, at 5 s dark.
    EXPECT_GT(video->rgb[100][0], 100);
    EXPECT_LT(video->rgb[50][0], 20);
    pictures[lanes == 1 ? 0 : 1] = std::move(video->rgb);
  }
  EXPECT_TRUE(sound[0] == sound[1]) << "the sound differs between 1 and 3 lanes";
  ASSERT_EQ(pictures[0].size(), pictures[1].size());
  for (size_t i = 0; i < pictures[0].size(); ++i) {
    EXPECT_TRUE(pictures[0][i] == pictures[1][i]) << "frame " << i << " differs between 1 and 3 lanes";
  }
}

TEST_F(WebAudioRenderTest, ASuspendedContextIsSilentAndCarriesOnWhenResumed) {
  Result<RenderStats> stats = Render(Options("/suspend.html", "suspend.mp4", 1));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->sounds_left_out.size(), 1u);
  EXPECT_NE(stats->sounds_left_out[0].find("createMediaElementSource(<audio>)"), std::string::npos)
      << stats->sounds_left_out[0];
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(stats->output);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  const std::vector<float>& s = sound->samples;
  const int c = sound->channels;
  // Playing until 0.5 s, to its last sample; silent until 1 s; playing again from 1 s.
  EXPECT_NEAR(audio::test_sounds::Peak(s, c, 2400, 23900), 0.5, 0.02);
  EXPECT_NEAR(audio::test_sounds::Peak(s, c, 23900, 24000), 0.5, 0.05);
  EXPECT_LT(audio::test_sounds::Peak(s, c, 24010, 47990), 0.01);
  EXPECT_NEAR(audio::test_sounds::Peak(s, c, 48000, 48100), 0.5, 0.05);
  EXPECT_NEAR(audio::test_sounds::Peak(s, c, 48100, 94000), 0.5, 0.02);
}

TEST_F(WebAudioRenderTest, AWorkletClockThatLagsAQuantumNeitherStallsTheRenderNorMovesTheSound) {
  // Before the recorder counted its own quanta, its render's last samples never came and
  // the first frame's sync waited until the render failed.
  Result<testing::DecodedAudio> sound = RenderExact("/lagging.html", "lagging.mov", 1);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  std::vector<int64_t> onsets = audio::test_sounds::Onsets(sound->samples, sound->channels);
  ASSERT_EQ(onsets.size(), 1u);
  EXPECT_NEAR(onsets[0], 24000 + 11, 1);  // 0.5 * sin passes 0.3 on the 11th sample.
  ExpectTone(*sound, 24000, kFrames * 1600);
}

// The render failed with `code`, its message holding `text`.
void ExpectFailure(const Result<RenderStats>& stats, StatusCode code, const std::string& text) {
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), code);
  EXPECT_NE(stats.status().message().find(text), std::string::npos) << stats.status().ToString();
}

TEST_F(WebAudioRenderTest, ARenderWhoseSamplesNeverComeFailsNamingWhatItWaitedFor) {
  RenderOptions options = Options("/lost.html", "lost.mp4", 1);
  options.page.timeout = std::chrono::seconds(6);
  // Frame 1 is at 34 ms: the render stops at the last whole quantum before it, 1,536 samples.
  ExpectFailure(
      Render(options), StatusCode::kDeadlineExceeded,
      "did not bring its Web Audio to the frame's time at frame 1: AudioContext 1 "
      "reached 0.032 s of its time, but its recorder's samples stop at 0.000 s after 6 s");
}

TEST_F(WebAudioRenderTest, SamplesThatWouldLandElsewhereFailTheRender) {
  ExpectFailure(
      Render(Options("/moved.html", "moved.mp4", 1)), StatusCode::kInternal,
      "Web Audio could not follow the film at frame 1: AudioContext 1 rendered to 0.032 s "
      "of its time, but its recorder sent samples from 0.003 s where 0.000 s was next");
}

TEST_F(WebAudioRenderTest, TheLastFrameHasItsSound) {
  // Each frame's sound used to be rendered before the next frame: the last frame had none.
  Result<testing::DecodedAudio> sound = RenderExact("/tone.html", "last.mov", 3);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  ASSERT_EQ(sound->length(), kFrames * 1600);
  ExpectTone(*sound, (kFrames - 2) * 1600, kFrames * 1600);
}

TEST_F(WebAudioRenderTest, APageWaitingForResumeRendersWithItsSound) {
  Result<RenderStats> stats = Render(Options("/resume.html", "resume.mp4", 1));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  Result<testing::DecodedAudio> sound = testing::DecodeAudio(stats->output);
  ASSERT_TRUE(sound.ok()) << sound.status().ToString();
  std::vector<int64_t> onsets = audio::test_sounds::Onsets(sound->samples, sound->channels);
  ASSERT_EQ(onsets.size(), 1u);
  EXPECT_NEAR(onsets[0], 12000 + 6, 1);
}

TEST_F(WebAudioRenderTest, WebAudioOutsideASecureContextIsNamedAsLeftOut) {
  // A data: URL is no secure context: no AudioWorklet to record with.
  RenderOptions options = Options("/page.html", "insecure.mp4", 1);
  options.page.url =
      "data:text/html,<body><script>const c = new AudioContext(); const o = c.createOscillator();"
      "o.connect(c.destination); o.start();</script>";
  Result<RenderStats> stats = Render(options);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_TRUE(stats->sounds.empty());
  ASSERT_EQ(stats->sounds_left_out.size(), 1u);
  EXPECT_NE(stats->sounds_left_out[0].find("AudioContext at frame 0 (0.000 s): Web Audio is recorded only in a secure context"),
            std::string::npos)
      << stats->sounds_left_out[0];
}

}  // namespace
}  // namespace pagereel::render
