#include "audio/timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "encode/sound.h"

namespace pagereel::audio {
namespace {

using ::testing::HasSubstr;

const std::string kMedia(64, 'a');

Rational T(int64_t num, int64_t den = 1) { return Rational::Make(num, den); }

Span Playing(Rational start, std::optional<Rational> end = std::nullopt, SpanEnd why = SpanEnd::kPaused) {
  Span s;
  s.start = start;
  s.end = end;
  s.ended_by = end ? why : SpanEnd::kOpen;
  return s;
}

// A film's whole timeline: a click at 0.5 s, music from 1 s that is paused at 2 s and
// played again at 5 s (open), a voice from 2.5 s to 4 s at half volume, looping.
Timeline Film() {
  Timeline t;
  t.from = T(0);
  t.until = T(6);
  Span again = Playing(T(5));
  again.offset = T(1);
  Span voice = Playing(T(5, 2), T(4), SpanEnd::kRemoved);
  voice.volume = 0.5;
  voice.loop = true;
  voice.rate = 1.25;
  voice.preserves_pitch = false;
  t.sounds = {Sound{"media-1", "<audio src=click.wav>", kMedia, {Playing(T(1, 2), T(3, 5), SpanEnd::kMediaEnd)}},
              Sound{"media-2", "<audio src=music.mp3>", std::string(64, 'b'), {Playing(T(1), T(2)), again}},
              Sound{"media-3", "new Audio(voice.ogg)", std::string(64, 'c'), {voice}}};
  t.left_out = {LeftOut{"<video srcObject=MediaStream>", T(3), "a MediaStream's sound is not recorded"}};
  return t;
}

TEST(SampleTest, FilmTimesRoundToTheNearestSampleAndFilmsRoundDown) {
  EXPECT_EQ(SampleAt(T(0)), 0);
  EXPECT_EQ(SampleAt(T(1, 30)), 1600);
  EXPECT_EQ(SampleAt(T(1001, 30000)), 1602);  // 1601.6
  EXPECT_EQ(SampleAt(T(1, 96000)), 1);        // Half a sample rounds up.
  EXPECT_EQ(SampleAt(T(7200 * 1001, 30000)), 11531520);
  // A film's samples: each frame's share rounded down from frame 0, as live counts ticks.
  const Rational ntsc{30000, 1001};
  EXPECT_EQ(encode::SoundSamples(1, ntsc), 1601);
  EXPECT_EQ(encode::SoundSamples(2, ntsc) - encode::SoundSamples(1, ntsc), 1602);
  EXPECT_EQ(encode::SoundSamples(5, ntsc), 8008);
  EXPECT_EQ(encode::SoundSamples(3, Rational{60000, 1001}), 2402);
  EXPECT_EQ(encode::SoundSamples(216000, ntsc), 345945600);  // Two hours.
}

TEST(TimelineTest, JsonKeepsEveryField) {
  const Timeline film = Film();
  Result<Timeline> read = FromJson(ToJson(film));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, film);
  EXPECT_THAT(ToJson(film), HasSubstr("\"start\": \"1/2\""));
}

TEST(TimelineTest, BadTimelinesAreRefusedNamingTheSoundAndSpan) {
  auto refused = [](const std::string& json) {
    Result<Timeline> t = FromJson(json);
    EXPECT_FALSE(t.ok()) << json;
    return t.ok() ? std::string() : std::string(t.status().message());
  };
  const std::string head = R"({"format": "pagereel-sound/1", "from": "0", "until": "10", "sounds": [)";
  const std::string media = R"("media": ")" + kMedia + R"(")";
  auto sound = [&](const std::string& spans) {
    return head + R"({"id": "media-1", "source": "<audio>", )" + media + R"(, "spans": [)" + spans + "]}]}";
  };
  EXPECT_THAT(refused("[]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(refused(R"({"format": "pagereel-sound/0"})"), HasSubstr("another version"));
  EXPECT_THAT(refused(sound(R"({"start": "-1", "offset": "0"})")), HasSubstr("not negative"));
  EXPECT_THAT(refused(sound(R"({"start": "1/0", "offset": "0"})")), HasSubstr("denominator"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "offset": "0", "rate": 0})")),
              HasSubstr("sound 'media-1' (<audio>) span 1: rate 0"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "offset": "0", "rate": 17})")), HasSubstr("at most 16"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "offset": "0", "volume": -1})")), HasSubstr("volume"));
  EXPECT_THAT(refused(sound(R"({"start": "2", "end": "1", "ended_by": "paused", "offset": "0"})")),
              HasSubstr("not after its start"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "end": "2", "offset": "0"})")), HasSubstr("marked open"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "offset": "0"}, {"start": "2", "offset": "0"})")),
              HasSubstr("span 2 starts at 2, before the span before it ended"));
  EXPECT_THAT(refused(sound(R"({"start": "11", "offset": "0"})")), HasSubstr("does not play in the timeline's window"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "end": "10", "ended_by": "paused", "offset": "0"})")),
              HasSubstr("leave the span open"));
  EXPECT_THAT(refused(head + R"({"id": "x", "media": "abc", "spans": []}]})"), HasSubstr("SHA-256"));
  EXPECT_THAT(refused(sound(R"({"start": "1", "offset": "0", "ended_by": "stopped"})")),
              HasSubstr("'stopped'"));
}

TEST(TimelineTest, RestrictKeepsWhatPlaysInTheWindowAndForgetsLaterEnds) {
  const Timeline part = Restrict(Film(), T(2), T(7, 2));
  EXPECT_EQ(part.from, T(2));
  EXPECT_EQ(part.until, T(7, 2));
  // The music paused at exactly 2 s is seen (a window starting there sees the pause); the
  // voice is open (its removal at 4 s is not known yet); the click is long over.
  ASSERT_EQ(part.sounds.size(), 2u);
  EXPECT_EQ(part.sounds[0].id, "media-2");
  ASSERT_EQ(part.sounds[0].spans.size(), 1u);
  EXPECT_EQ(part.sounds[0].spans[0].end, T(2));
  EXPECT_EQ(part.sounds[1].id, "media-3");
  EXPECT_EQ(part.sounds[1].spans[0].ended_by, SpanEnd::kOpen);
  EXPECT_FALSE(part.sounds[1].spans[0].end.has_value());
  EXPECT_EQ(part.left_out.size(), 1u);
  EXPECT_TRUE(FromJson(ToJson(part)).ok());
}

TEST(TimelineTest, SegmentsMergeIntoTheFilmsTimelineInAnyOrderAndCut) {
  const Timeline film = Film();
  for (const std::vector<Rational>& cuts :
       {std::vector<Rational>{T(0), T(6)}, {T(0), T(2), T(6)}, {T(0), T(1), T(5, 2), T(4), T(6)},
        {T(0), T(1, 3), T(2, 3), T(1), T(5), T(6)}}) {
    std::vector<Timeline> parts;
    for (size_t i = cuts.size() - 1; i > 0; --i) parts.push_back(Restrict(film, cuts[i - 1], cuts[i]));
    Result<Timeline> merged = Merge(parts);
    ASSERT_TRUE(merged.ok()) << merged.status().message();
    EXPECT_EQ(*merged, film) << ToJson(*merged);
  }
  // Overlapping windows (a retried segment, a shard run twice) merge alike.
  Result<Timeline> overlapping = Merge({Restrict(film, T(0), T(3)), Restrict(film, T(2), T(6)),
                                        Restrict(film, T(1), T(4))});
  ASSERT_TRUE(overlapping.ok()) << overlapping.status().message();
  EXPECT_EQ(*overlapping, film);
}

TEST(TimelineTest, AJumpedLaneThatHeardOtherwiseIsCaught) {
  const Timeline film = Film();
  // The lane that drew from 3 s on got there by a jump, in which the voice started at
  // 2.4 s, not 2.5 s. A lane's timeline covers all its page ran: here from 0.
  Timeline jumped = film;
  jumped.sounds[2].spans[0].start = T(12, 5);
  Result<Timeline> merged = Merge({Restrict(film, T(0), T(3)), jumped});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(merged.status().message(), HasSubstr("sound 'media-3' (new Audio(voice.ogg)) played from 2.500 s"));
  EXPECT_THAT(merged.status().message(), HasSubstr("in one lane and from 2.400 s"));

  // A lane that missed the music still playing at its start.
  Timeline missing = Restrict(film, T(3, 2), T(6));
  missing.sounds.erase(missing.sounds.begin());
  merged = Merge({Restrict(film, T(0), T(3, 2)), missing});
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(), HasSubstr("sound 'media-2' (<audio src=music.mp3>) played from 1.000 s"));
  EXPECT_THAT(merged.status().message(), HasSubstr("in one lane and not in the other"));

  // Another volume for the same span.
  Timeline louder = Restrict(film, T(3), T(6));
  louder.sounds[1].spans[0].volume = 1;
  EXPECT_FALSE(Merge({Restrict(film, T(0), T(3)), louder}).ok());
}

TEST(TimelineTest, MadeMediaStillPlayingAtAWindowsEndGrowsInTheNext) {
  // Web Audio, cut into pieces of film time: a segment ending at 1.5 s holds what its page
  // made of the piece [1, 2) so far; the next window holds all of it, from other bytes.
  Timeline early;
  early.until = T(3, 2);
  early.sounds = {Sound{"audio-context-1.0", "Web Audio", kMedia, {Playing(T(0), T(1), SpanEnd::kMediaEnd)}, true},
                  Sound{"audio-context-1.1", "Web Audio", std::string(64, 'b'), {Playing(T(1))}, true}};
  Timeline later = early;
  later.until = T(5, 2);
  later.sounds[1].media = std::string(64, 'c');
  later.sounds[1].spans[0] = Playing(T(1), T(2), SpanEnd::kMediaEnd);
  Result<Timeline> merged = Merge({early, later});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(*merged, later) << ToJson(*merged);
  Result<Timeline> read = FromJson(ToJson(later));
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->sounds[1].made);

  // A piece both windows saw whole must be the same bytes; and media that is not made
  // must match even while it plays on.
  Timeline other = later;
  other.sounds[0].media = std::string(64, 'd');
  EXPECT_FALSE(Merge({early, other}).ok());
  Timeline fetched = early;
  fetched.sounds[1].made = false;
  Timeline fetched_later = later;
  fetched_later.sounds[1].made = false;
  EXPECT_FALSE(Merge({fetched, fetched_later}).ok());
}

TEST(TimelineTest, AGapBetweenWindowsIsNamed) {
  const Timeline film = Film();
  Result<Timeline> merged = Merge({Restrict(film, T(0), T(2)), Restrict(film, T(3), T(6))});
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(), HasSubstr("no sound timeline covers film time 2.000 s to 3.000 s"));
}

}  // namespace
}  // namespace pagereel::audio
