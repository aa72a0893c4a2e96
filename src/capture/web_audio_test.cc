#include "capture/web_audio.h"

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/scratch_dir.h"

namespace pagereel::capture {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kPiece = WebAudioTrack::kPieceSamples;

std::vector<float> Ramp(int64_t frames, float from) {
  std::vector<float> v;
  for (int64_t i = 0; i < frames; ++i) {
    v.push_back(from + static_cast<float>(i));
    v.push_back(-from - static_cast<float>(i));
  }
  return v;
}

TEST(WebAudioTrackTest, PiecesRenderedToTheirEndCloseAndKeepTheirBytes) {
  testing::ScratchDir dir("web-audio");
  const audio::MediaStore store(dir.path().string());
  WebAudioTrack track;
  // Rendered from 1 s (the context was made then) to 12.5 s, in two renders.
  track.Add("audio-context-1", 48000, Ramp(kPiece, 0));
  track.Add("audio-context-1", 48000 + kPiece, Ramp(600'000 - kPiece - 48000 + 0, 1));
  Result<std::vector<audio::Sound>> sounds = track.Sounds(store, Rational{13, 1});
  ASSERT_TRUE(sounds.ok()) << sounds.status().ToString();
  ASSERT_EQ(sounds->size(), 2u);
  const audio::Sound& first = (*sounds)[0];
  EXPECT_EQ(first.id, "audio-context-1.0");
  EXPECT_EQ(first.source, "Web Audio (AudioContext 1)");
  EXPECT_TRUE(first.made);
  ASSERT_EQ(first.spans.size(), 1u);
  EXPECT_EQ(first.spans[0].start, (Rational{0, 1}));
  EXPECT_EQ(first.spans[0].end, (Rational{10, 1}));
  EXPECT_EQ(first.spans[0].ended_by, audio::SpanEnd::kMediaEnd);
  // The whole piece: silence before the context began, then its samples.
  Result<std::shared_ptr<const std::string>> wav = store.Get(first.media);
  ASSERT_TRUE(wav.ok());
  ASSERT_EQ((*wav)->size(), 44 + kPiece * 8);
  EXPECT_EQ((*wav)->substr(0, 4), "RIFF");
  float sample[2];
  std::memcpy(sample, (*wav)->data() + 44 + 48000 * 8 + 5 * 8, sizeof sample);
  EXPECT_EQ(sample[0], 5.0f);
  EXPECT_EQ(sample[1], -5.0f);
  std::memcpy(sample, (*wav)->data() + 44, sizeof sample);
  EXPECT_EQ(sample[0], 0.0f);
  // The piece still being rendered: open, its media as far as it went (2.5 s).
  const audio::Sound& second = (*sounds)[1];
  EXPECT_EQ(second.id, "audio-context-1.1");
  EXPECT_EQ(second.spans[0].start, (Rational{10, 1}));
  EXPECT_FALSE(second.spans[0].end.has_value());
  wav = store.Get(second.media);
  ASSERT_TRUE(wav.ok());
  EXPECT_EQ((*wav)->size(), 44 + 120'000 * 8);

  // More rendered: the first piece is what it was; the second has grown.
  track.Add("audio-context-1", 600'000, Ramp(48000, 7));
  Result<std::vector<audio::Sound>> later = track.Sounds(store, Rational{14, 1});
  ASSERT_TRUE(later.ok());
  EXPECT_EQ((*later)[0], first);
  EXPECT_NE((*later)[1].media, second.media);
}

TEST(WebAudioTrackTest, TheScriptsBlocksAreReadAndDamageIsNamed) {
  testing::ScratchDir dir("web-audio-json");
  const audio::MediaStore store(dir.path().string());
  WebAudioTrack track;
  // Two stereo frames: (1, 2), (3, 4) as little-endian float32, base64.
  ASSERT_TRUE(track.Add(R"([{"id":"audio-context-2","at":96000,"pcm":"AACAPwAAAEAAAEBAAACAQA=="}])").ok());
  Result<std::vector<audio::Sound>> sounds = track.Sounds(store, Rational{3, 1});
  ASSERT_TRUE(sounds.ok());
  ASSERT_EQ(sounds->size(), 1u);
  EXPECT_EQ((*sounds)[0].source, "Web Audio (AudioContext 2)");
  EXPECT_EQ(store.Get((*sounds)[0].media).value()->size(), 44u + (96000 + 2) * 8);

  Status bad = track.Add(R"([{"id":"audio-context-2","at":-1,"pcm":""}])");
  EXPECT_EQ(bad.code(), StatusCode::kInternal);
  EXPECT_THAT(bad.message(), HasSubstr("fault in pagereel"));
  EXPECT_FALSE(track.Add(R"([{"id":"x","at":0,"pcm":"AAA"}])").ok());
  EXPECT_FALSE(track.Add("{}").ok());
}

}  // namespace
}  // namespace pagereel::capture
