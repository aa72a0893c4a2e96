// Films with sound, end to end through the real encoders and muxers: a timeline mixed by
// audio::Mixer into encode::FilmWriter (a film written in one piece) and into
// encode::JoinSegments (a film written in segments, its sound made once at the join from
// the segments' merged timelines), then decoded: every click within 1 ms of its film time,
// and as many samples as the pictures last.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "audio/mixer.h"
#include "audio/test_sounds.h"
#include "encode/concat.h"
#include "encode/film_writer.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::audio {
namespace {

namespace fs = std::filesystem;
using encode::FilmKind;
using encode::SoundCodec;
using test_sounds::ClickTrack;
using test_sounds::Onsets;
using test_sounds::Wav;

constexpr int kWidth = 64;
constexpr int kHeight = 48;

class SoundFilmTest : public ::testing::Test {
 protected:
  SoundFilmTest() {
    Result<std::string> click = store_.Put(Wav(ClickTrack(48000, 2, 0.1, {0}), 2, 48000));
    EXPECT_TRUE(click.ok());
    click_ = click.ok() ? *click : "";
  }

  // Clicks at `starts` (film times) and a 440 Hz tone across the middle.
  Timeline Clicks(const std::vector<Rational>& starts, Rational until) {
    Timeline t;
    t.until = until;
    for (size_t i = 0; i < starts.size(); ++i) {
      Span span;
      span.start = starts[i];
      t.sounds.push_back(Sound{"click-" + std::to_string(i), "<audio src=click.wav>", click_, {span}});
    }
    return t;
  }

  std::unique_ptr<Mixer> Mix(const Timeline& timeline, int64_t frames, Rational fps) {
    Result<std::unique_ptr<Mixer>> mixer = Mixer::Open(timeline, store_, encode::SoundSamples(frames, fps));
    EXPECT_TRUE(mixer.ok()) << mixer.status().message();
    return mixer.ok() ? std::move(mixer).value() : nullptr;
  }

  // Writes `frames` grey frames of a `kind` film to `path` with `sound`.
  Status WriteFilm(const std::string& path, FilmKind kind, int64_t frames, Rational fps,
                   encode::SoundSource* sound, SoundCodec codec = SoundCodec::kAuto) {
    encode::FilmWriterOptions options;
    options.film.kind = kind;
    options.film.width = kWidth;
    options.film.height = kHeight;
    options.film.fps = fps;
    options.path = path;
    options.sound = sound;
    options.sound_codec = codec;
    PR_ASSIGN_OR_RETURN(std::unique_ptr<encode::FilmWriter> writer, encode::FilmWriter::Open(options));
    std::vector<uint8_t> rgba(kWidth * kHeight * 4, 128);
    for (int64_t i = 0; i < frames; ++i) {
      PR_RETURN_IF_ERROR(writer->Write(encode::RgbaView{rgba.data(), kWidth, kHeight, kWidth * 4}));
    }
    return writer->Finish();
  }

  testing::ScratchDir scratch_{"sound-film"};
  const fs::path& dir_ = scratch_.path();
  MediaStore store_{(scratch_.path() / "media").string()};
  std::string click_;
};

// Every onset in `audio` within 1 ms (48 samples) of `expected`, and nothing else.
void ExpectClicksAt(const ::pagereel::testing::DecodedAudio& audio, const std::vector<int64_t>& expected) {
  const std::vector<int64_t> onsets = Onsets(audio.samples, audio.channels);
  ASSERT_EQ(onsets.size(), expected.size()) << ::testing::PrintToString(onsets);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(std::llabs(onsets[i] - expected[i]), 48) << "click " << i << " at " << onsets[i]
                                                       << ", not " << expected[i];
  }
}

TEST_F(SoundFilmTest, EveryKindOfFilmCarriesEachClickOnItsSampleForAsLongAsThePictures) {
  const Rational fps{30, 1};
  const int64_t frames = 60;
  const int64_t samples = encode::SoundSamples(frames, fps);
  ASSERT_EQ(samples, 96000);
  // Frame 0, frame 31, a time between frames, and the film's last frame.
  const std::vector<Rational> starts = {Rational{0, 1}, Rational::Make(31, 30), Rational::Make(1234, 1000),
                                        Rational::Make(59, 30)};
  std::vector<int64_t> expected;
  for (const Rational& s : starts) expected.push_back(SampleAt(s));
  struct Case {
    FilmKind kind;
    std::string file;
    std::string codec;
    SoundCodec asked = SoundCodec::kAuto;
  };
  for (const Case& c : {Case{FilmKind::kMp4, "film.mp4", "aac"}, Case{FilmKind::kWebm, "film.webm", "opus"},
                        Case{FilmKind::kMov, "film.mov", "pcm_s24le"}, Case{FilmKind::kMkv, "film.mkv", "flac"},
                        Case{FilmKind::kMp4, "opus.mp4", "opus", SoundCodec::kOpus},
                        Case{FilmKind::kMov, "aac.mov", "aac", SoundCodec::kAac},
                        Case{FilmKind::kMov, "pcm16.mov", "pcm_s16le", SoundCodec::kPcm16},
                        Case{FilmKind::kMkv, "opus.mkv", "opus", SoundCodec::kOpus},
                        Case{FilmKind::kMkv, "pcm24.mkv", "pcm_s24le", SoundCodec::kPcm24}}) {
    SCOPED_TRACE(c.file);
    std::unique_ptr<Mixer> mixer = Mix(Clicks(starts, Rational{2, 1}), frames, fps);
    ASSERT_NE(mixer, nullptr);
    const std::string path = (dir_ / c.file).string();
    Status written = WriteFilm(path, c.kind, frames, fps, mixer.get(), c.asked);
    ASSERT_TRUE(written.ok()) << written.message();
    Result<::pagereel::testing::DecodedAudio> audio = ::pagereel::testing::DecodeAudio(path);
    ASSERT_TRUE(audio.ok()) << audio.status().message();
    EXPECT_EQ(audio->codec, c.codec);
    EXPECT_EQ(audio->sample_rate, 48000);
    EXPECT_EQ(audio->channels, 2);
    ExpectClicksAt(*audio, expected);
    if (c.kind != FilmKind::kMkv && c.kind != FilmKind::kWebm && c.codec != "pcm_s24le" && c.codec != "pcm_s16le") {
      // The edit list says where the sound ends, to the sample (FFmpeg's decoder hands out
      // the last AAC or Opus frame whole).
      EXPECT_EQ(audio->stated_samples, samples);
      EXPECT_GE(audio->length(), samples);
    } else {
      EXPECT_EQ(audio->length(), samples);
    }
    Result<::pagereel::testing::DecodedVideo> video = ::pagereel::testing::DecodeVideo(path, false);
    ASSERT_TRUE(video.ok());
    EXPECT_EQ(video->pts_seconds.size(), static_cast<size_t>(frames));
  }
}

TEST_F(SoundFilmTest, AClipWrittenInMemoryCarriesItsSound) {
  // serve's clips: the film held in memory, MP4's index written in front.
  const Rational fps{25, 1};
  const Rational start = Rational::Make(7, 25);
  std::unique_ptr<Mixer> mixer = Mix(Clicks({start}, Rational{1, 1}), 25, fps);
  ASSERT_NE(mixer, nullptr);
  encode::FilmWriterOptions options;
  options.film.kind = FilmKind::kMp4;
  options.film.width = kWidth;
  options.film.height = kHeight;
  options.film.fps = fps;
  options.to = encode::WriteTo::kMemory;
  options.sound = mixer.get();
  Result<std::unique_ptr<encode::FilmWriter>> writer = encode::FilmWriter::Open(options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  std::vector<uint8_t> rgba(kWidth * kHeight * 4, 200);
  for (int i = 0; i < 25; ++i) {
    ASSERT_TRUE((*writer)->Write(encode::RgbaView{rgba.data(), kWidth, kHeight, kWidth * 4}).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  const std::string path = (dir_ / "clip.mp4").string();
  test_sounds::WriteFile(path, (*writer)->TakeBytes());
  Result<::pagereel::testing::DecodedAudio> audio = ::pagereel::testing::DecodeAudio(path);
  ASSERT_TRUE(audio.ok()) << audio.status().message();
  EXPECT_EQ(audio->stated_samples, 48000);
  ExpectClicksAt(*audio, {SampleAt(start)});
}

TEST_F(SoundFilmTest, AtNtscRatesTheSoundIsTheFramesShareRoundedDown) {
  // 50 frames at 29.97: 80,080 samples (1601.6 a frame), 1668.33 ms: not a whole
  // millisecond, so MP4's edit list must be in samples to state it.
  const Rational fps{30000, 1001};
  const int64_t frames = 50;
  const Rational start = Rational::Make(17 * 1001, 30000);  // Frame 17.
  for (const auto& [kind, file] : {std::pair{FilmKind::kWebm, "ntsc.webm"}, std::pair{FilmKind::kMp4, "ntsc.mp4"}}) {
    SCOPED_TRACE(file);
    std::unique_ptr<Mixer> mixer = Mix(Clicks({start}, Rational::Make(50 * 1001, 30000)), frames, fps);
    ASSERT_NE(mixer, nullptr);
    const std::string path = (dir_ / file).string();
    Status written = WriteFilm(path, kind, frames, fps, mixer.get());
    ASSERT_TRUE(written.ok()) << written.message();
    Result<::pagereel::testing::DecodedAudio> audio = ::pagereel::testing::DecodeAudio(path);
    ASSERT_TRUE(audio.ok()) << audio.status().message();
    if (kind == FilmKind::kMp4) {
      EXPECT_EQ(audio->stated_samples, 80080);
    } else {
      EXPECT_EQ(audio->length(), 80080);
    }
    ExpectClicksAt(*audio, {SampleAt(start)});
  }
}

TEST_F(SoundFilmTest, AFilmWithoutSoundHasNoAudioStream) {
  const std::string path = (dir_ / "silent.mp4").string();
  ASSERT_TRUE(WriteFilm(path, FilmKind::kMp4, 10, Rational{30, 1}, nullptr).ok());
  EXPECT_EQ(::pagereel::testing::DecodeAudio(path).status().code(), StatusCode::kNotFound);
}

TEST_F(SoundFilmTest, KindsAndCodecsThatCannotCarrySoundExactlyAreRefused) {
  std::unique_ptr<Mixer> mixer = Mix(Clicks({}, Rational{1, 1}), 30, Rational{30, 1});
  ASSERT_NE(mixer, nullptr);
  Status gif = WriteFilm((dir_ / "a.gif").string(), FilmKind::kGif, 30, Rational{30, 1}, mixer.get());
  EXPECT_EQ(gif.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(gif.message(), ::testing::HasSubstr("carries no sound"));
  Status mkv_aac = WriteFilm((dir_ / "a.mkv").string(), FilmKind::kMkv, 30, Rational{30, 1}, mixer.get(),
                             SoundCodec::kAac);
  EXPECT_EQ(mkv_aac.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(mkv_aac.message(), ::testing::HasSubstr("1,024 samples late"));
  Status webm_aac = WriteFilm((dir_ / "a.webm").string(), FilmKind::kWebm, 30, Rational{30, 1}, mixer.get(),
                              SoundCodec::kAac);
  EXPECT_THAT(webm_aac.message(), ::testing::HasSubstr("it takes opus"));
  // A sound made for another length of film.
  Status short_film = WriteFilm((dir_ / "b.mp4").string(), FilmKind::kMp4, 29, Rational{30, 1}, mixer.get());
  EXPECT_EQ(short_film.code(), StatusCode::kInternal);
  EXPECT_THAT(short_film.message(), ::testing::HasSubstr("48000 samples"));
  EXPECT_FALSE(fs::exists(dir_ / "b.mp4"));
}

TEST_F(SoundFilmTest, JoinedSegmentsGetTheSoundOnceFromTheirMergedTimelines) {
  // Three segments of 30 frames; a click in each, one right on a join, and a tone that
  // plays across both joins. Each segment stores the timeline of its own window (as JSON,
  // as the work folder will); the join merges them and mixes once.
  const Rational fps{30, 1};
  const std::string tone = *store_.Put(Wav(test_sounds::Tone(48000, 2, 2.0, 0.3f), 2, 48000));
  Timeline whole = Clicks({Rational::Make(1, 2), Rational{1, 1}, Rational::Make(5, 2)}, Rational{3, 1});
  Span across;
  across.start = Rational::Make(3, 4);
  across.end = Rational::Make(11, 4);
  across.ended_by = SpanEnd::kPaused;
  across.volume = 0.5;
  // Second: Merge lists sounds in the order they first play.
  whole.sounds.insert(whole.sounds.begin() + 1, Sound{"tone", "<video src=tone.webm>", tone, {across}});

  std::vector<encode::SegmentFile> segments;
  std::vector<Timeline> stored;
  for (int i = 0; i < 3; ++i) {
    const std::string path = (dir_ / ("seg-" + std::to_string(i) + ".mp4")).string();
    ASSERT_TRUE(WriteFilm(path, FilmKind::kMp4, 30, fps, nullptr).ok());
    segments.push_back({path, 30 * i, 30});
    Result<Timeline> read = FromJson(ToJson(Restrict(whole, Rational{i, 1}, Rational{i + 1, 1})));
    ASSERT_TRUE(read.ok()) << read.status().message();
    stored.push_back(*read);
  }
  Result<Timeline> merged = Merge(stored);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(*merged, whole);

  std::unique_ptr<Mixer> joined_sound = Mix(*merged, 90, fps);
  encode::JoinOptions join;
  join.kind = FilmKind::kMp4;
  join.fps = fps;
  join.sound = joined_sound.get();
  const std::string joined = (dir_ / "joined.mp4").string();
  Status status = encode::JoinSegments(segments, joined, join);
  ASSERT_TRUE(status.ok()) << status.message();

  // The same film written in one piece: the sound decodes to the same samples.
  std::unique_ptr<Mixer> one_sound = Mix(whole, 90, fps);
  const std::string one_piece = (dir_ / "one.mp4").string();
  ASSERT_TRUE(WriteFilm(one_piece, FilmKind::kMp4, 90, fps, one_sound.get()).ok());

  Result<::pagereel::testing::DecodedAudio> a = ::pagereel::testing::DecodeAudio(joined);
  Result<::pagereel::testing::DecodedAudio> b = ::pagereel::testing::DecodeAudio(one_piece);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->stated_samples, 144000);
  EXPECT_TRUE(a->samples == b->samples) << "the joined film's sound differs from the one-piece film's";
  ExpectClicksAt(*a, {24000, 48000, 120000});
  Result<::pagereel::testing::DecodedVideo> video = ::pagereel::testing::DecodeVideo(joined, false);
  ASSERT_TRUE(video.ok());
  EXPECT_EQ(video->pts_seconds.size(), 90u);
}

}  // namespace
}  // namespace pagereel::audio
