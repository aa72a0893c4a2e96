// The mixer with real libavformat/libavcodec/libavfilter: media made in the test (WAV
// written here; MP3, AAC and Opus made from it by the ffmpeg command line), timelines with
// clicks at known film times, and the mixed samples searched for every onset.
#include "audio/mixer.h"

#include <cmath>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audio/test_sounds.h"
#include "testing/scratch_dir.h"

namespace pagereel::audio {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test_sounds::ClickTrack;
using test_sounds::Onsets;
using test_sounds::Peak;
using test_sounds::Wav;

// 1 ms at 48 kHz: the bound for an onset.
constexpr int64_t kMs = 48;

MATCHER_P(Near, expected, "within 1 ms of " + ::testing::PrintToString(expected)) {
  return std::llabs(arg - expected) <= kMs;
}
MATCHER_P2(Within, ms, expected, "within " + ::testing::PrintToString(ms) + " ms of " + ::testing::PrintToString(expected)) {
  return std::llabs(arg - expected) <= ms * kMs;
}

Rational Seconds(int64_t num, int64_t den = 1) { return Rational::Make(num, den); }

Span Play(Rational start, std::optional<Rational> end = std::nullopt, Rational offset = Rational{0, 1}) {
  Span s;
  s.start = start;
  s.end = end;
  s.ended_by = end ? SpanEnd::kPaused : SpanEnd::kOpen;
  s.offset = offset;
  return s;
}

class MixerTest : public ::testing::Test {
 protected:
  // Stores `bytes` and returns a sound of them with `spans`.
  Sound Stored(const std::string& id, const std::string& bytes, std::vector<Span> spans) {
    Result<std::string> sha = store_.Put(bytes);
    EXPECT_TRUE(sha.ok()) << sha.status().message();
    return Sound{id, "<audio id=" + id + ">", sha.ok() ? *sha : "", std::move(spans)};
  }

  // The whole mix of `sounds` over `samples` samples, read in uneven pieces.
  std::vector<float> Mix(const std::vector<Sound>& sounds, int64_t samples,
                         std::vector<std::string>* problems = nullptr) {
    Timeline t;
    t.until = Seconds(samples, 48000);
    t.sounds = sounds;
    Result<std::unique_ptr<Mixer>> mixer = Mixer::Open(t, store_, samples);
    EXPECT_TRUE(mixer.ok()) << mixer.status().message();
    if (!mixer.ok()) return {};
    std::vector<float> out(static_cast<size_t>(samples) * 2);
    int64_t done = 0;
    for (int64_t piece = 1000;; piece = piece * 7 % 9973 + 1) {
      Result<int64_t> got = (*mixer)->Read(out.data() + done * 2, std::min(piece, samples - done));
      EXPECT_TRUE(got.ok()) << got.status().message();
      if (!got.ok() || *got == 0) break;
      done += *got;
    }
    EXPECT_EQ(done, samples);
    if (problems != nullptr) {
      for (const Mixer::Problem& p : (*mixer)->problems()) problems->push_back(p.text);
    }
    return out;
  }

  testing::ScratchDir scratch_{"audio"};
  const fs::path& dir_ = scratch_.path();
  MediaStore store_{(scratch_.path() / "media").string()};
};

TEST_F(MixerTest, EverySpanStartsOnTheSampleOfItsFilmTime) {
  // One click at the media's first sample, played at five film times, two of them frame
  // times at 29.97 (frame 45 at 1.5015 s, frame 61 at 2.0353... s).
  const std::string click = Wav(ClickTrack(48000, 2, 0.1, {0}), 2, 48000);
  const std::vector<Rational> starts = {Seconds(1, 2), Seconds(45 * 1001, 30000), Seconds(61 * 1001, 30000),
                                        Seconds(3), Seconds(3123, 1000)};
  std::vector<Sound> sounds;
  for (size_t i = 0; i < starts.size(); ++i) {
    sounds.push_back(Stored("click-" + std::to_string(i), click, {Play(starts[i])}));
  }
  const std::vector<float> mix = Mix(sounds, 4 * 48000);
  std::vector<int64_t> expected;
  for (const Rational& s : starts) expected.push_back(SampleAt(s));
  EXPECT_EQ(Onsets(mix, 2), expected);  // To the sample: a WAV at the film's rate.
  EXPECT_NEAR(Peak(mix, 2, 0, 4 * 48000), 0.8, 0.01);  // Not normalised by amix.
}

TEST_F(MixerTest, MediaInEveryCommonFormatLandsWithinAMillisecond) {
  // Clicks at media times 0.2 s and 0.7 s, as WAV at 44.1 kHz mono, MP3, AAC in M4A and
  // Opus in Ogg; each played from its own film time.
  const std::vector<float> track = ClickTrack(44100, 1, 1.0, {8820, 30870});
  const std::string wav = (dir_ / "clicks.wav").string();
  test_sounds::WriteFile(wav, Wav(track, 1, 44100));
  struct Case {
    std::string id;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"wav", test_sounds::ReadFile(wav)},
      {"mp3", test_sounds::Encoded(wav, (dir_ / "clicks.mp3").string(), "-c:a libmp3lame -b:a 192k")},
      {"aac", test_sounds::Encoded(wav, (dir_ / "clicks.m4a").string(), "-c:a aac -b:a 192k")},
      {"opus", test_sounds::Encoded(wav, (dir_ / "clicks.opus").string(), "-c:a libopus -b:a 128k")},
  };
  std::vector<Sound> sounds;
  std::vector<int64_t> expected;
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_FALSE(cases[i].bytes.empty()) << "ffmpeg could not make the " << cases[i].id << " file";
    const Rational start = Seconds(static_cast<int64_t>(1 + 2 * i));  // 1 s, 3 s, 5 s, 7 s.
    sounds.push_back(Stored(cases[i].id, cases[i].bytes, {Play(start)}));
    expected.push_back(SampleAt(start) + 9600);
    expected.push_back(SampleAt(start) + 33600);
  }
  std::vector<std::string> problems;
  const std::vector<float> mix = Mix(sounds, 9 * 48000, &problems);
  EXPECT_THAT(problems, IsEmpty());
  const std::vector<int64_t> onsets = Onsets(mix, 2);
  ASSERT_EQ(onsets.size(), expected.size()) << ::testing::PrintToString(onsets);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_THAT(onsets[i], Near(expected[i])) << "click " << i << " of " << cases[i / 2].id;
  }
}

TEST_F(MixerTest, SeekLoopPauseAndRateAreHonoured) {
  // Clicks at media times 0.1 s and 0.4 s of a 0.5 s file (and at 0 and 0.4 s of another).
  const std::string media = Wav(ClickTrack(48000, 2, 0.5, {4800, 19200}), 2, 48000);
  const std::string from_zero = Wav(ClickTrack(48000, 2, 0.5, {0, 19200}), 2, 48000);
  Span seek = Play(Seconds(1), Seconds(2), Seconds(3, 10));  // From media 0.3: click at 1.1.
  Span loop = Play(Seconds(2), Seconds(3, 1));               // 2.1, 2.4, 2.6, 2.9.
  loop.loop = true;
  Span paused = Play(Seconds(4), Seconds(4200, 1000));       // 4.1; paused before 4.4.
  Span fast = Play(Seconds(5));                              // Twice as fast: 5.05, 5.2.
  fast.rate = 2;
  fast.preserves_pitch = false;
  Span slow = Play(Seconds(6));                              // Half as fast, pitch kept: 6, 6.8.
  slow.rate = 0.5;
  const std::vector<float> mix = Mix({Stored("seek", media, {seek}), Stored("loop", media, {loop}),
                                      Stored("paused", media, {paused}), Stored("fast", media, {fast}),
                                      Stored("slow", from_zero, {slow})},
                                     8 * 48000);
  // Keeping the pitch (atempo, WSOLA) starts the span on its sample, but moves what
  // follows by up to a few of its 20 ms windows (measured: 15 to 85 ms early at rates
  // 0.25 to 2; audio/README.md).
  EXPECT_THAT(Onsets(mix, 2, 0.3f, 2000),
              ElementsAre(Near(52800), Near(100800), Near(115200), Near(124800), Near(139200),
                          Near(196800), Near(242400), Near(249600), Near(288000), Within(100, 326400)));
}

TEST_F(MixerTest, AVolumeChangeTakesEffectOnItsSample) {
  // A 1 s tone at 0.5, heard at full volume from 1 s, then at a quarter from 1.5 s on
  // (the second span carries on in the media where the first stopped).
  const std::string tone = Wav(test_sounds::Tone(48000, 2, 1.0, 0.5f), 2, 48000);
  Span loud = Play(Seconds(1), Seconds(3, 2));
  loud.ended_by = SpanEnd::kChanged;
  Span quiet = Play(Seconds(3, 2), std::nullopt, Seconds(1, 2));
  quiet.volume = 0.25;
  const std::vector<float> mix = Mix({Stored("tone", tone, {loud, quiet})}, 3 * 48000);
  EXPECT_NEAR(Peak(mix, 2, 48000, 72000), 0.5, 0.01);
  EXPECT_NEAR(Peak(mix, 2, 72000, 96000), 0.125, 0.01);
  EXPECT_EQ(Peak(mix, 2, 96000 + 10, 3 * 48000), 0);  // The media ran out at 2 s.
  EXPECT_EQ(Peak(mix, 2, 0, 48000), 0);
  // The change is on its sample (72000): each side's last and first 60 samples hold a
  // peak of the 440 Hz tone (a half period is 54.5 samples).
  EXPECT_GT(Peak(mix, 2, 72000 - 60, 72000), 0.45);
  EXPECT_LT(Peak(mix, 2, 72000, 72000 + 60), 0.13);
}

TEST_F(MixerTest, MediaThatCannotBeDecodedIsNamedAndTheRestIsMixed) {
  const std::string click = Wav(ClickTrack(48000, 2, 0.1, {0}), 2, 48000);
  std::vector<std::string> problems;
  Sound missing{"gone", "<audio src=gone.mp3>", std::string(64, 'a'), {Play(Seconds(1))}};
  const std::vector<float> mix =
      Mix({Stored("noise", std::string(5000, 'x'), {Play(Seconds(1, 2))}), missing,
           Stored("click", click, {Play(Seconds(2))})},
          3 * 48000, &problems);
  EXPECT_EQ(Onsets(mix, 2), std::vector<int64_t>{96000});
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], ::testing::HasSubstr("sound 'noise' (<audio id=noise>)"));
  EXPECT_THAT(problems[0], ::testing::HasSubstr("could not be decoded"));
  EXPECT_THAT(problems[1], ::testing::HasSubstr("sound 'gone' (<audio src=gone.mp3>)"));
  EXPECT_THAT(problems[1], ::testing::HasSubstr("is not in"));
}

TEST_F(MixerTest, GivesExactlyTheFilmsSamplesWhateverTheSoundsDo) {
  // A sound that plays past the film's end, one that starts after it, and none at all.
  const std::string tone = Wav(test_sounds::Tone(48000, 2, 2.0, 0.5f), 2, 48000);
  for (int64_t samples : {int64_t{1}, int64_t{1601}, int64_t{48000 + 7}}) {
    const std::vector<float> mix =
        Mix({Stored("long", tone, {Play(Seconds(0))}), Stored("late", tone, {Play(Seconds(5))})}, samples);
    EXPECT_EQ(mix.size(), static_cast<size_t>(samples) * 2);
  }
  const std::vector<float> silence = Mix({}, 4801);
  EXPECT_EQ(Peak(silence, 2, 0, 4801), 0);
}

}  // namespace
}  // namespace pagereel::audio
