#include "capture/page_sound.h"

#include <gtest/gtest.h>

namespace pagereel::capture {
namespace {

TEST(FilmTimeOfMsTest, AFrameTimeIsTheFramesExactTime) {
  for (Rational fps : {Rational{30, 1}, Rational{30000, 1001}, Rational{25, 1}, Rational{60000, 1001}}) {
    for (int64_t n = 0; n < 2000; ++n) {
      ASSERT_EQ(FilmTimeOfMs(static_cast<double>(FrameTimeMillis(n, fps)), fps),
                Rational::Make(n * fps.den, fps.num))
          << "frame " << n << " at " << fps.ToString();
    }
  }
}

TEST(FilmTimeOfMsTest, OtherTimesAreThemselves) {
  // 33 ms is no frame's time at 29.97 (frame 1 is read as 34).
  EXPECT_EQ(FilmTimeOfMs(33, Rational{30000, 1001}), (Rational{33, 1000}));
  EXPECT_EQ(FilmTimeOfMs(12.5, Rational{30, 1}), (Rational{1, 80}));
  EXPECT_EQ(FilmTimeOfMs(-34, Rational{30, 1}), (Rational{0, 1}));
}

constexpr char kHash[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

MediaFetched Fetched() {
  MediaFetched media;
  media.sha256["http://h/a.wav"] = kHash;
  media.failed["http://h/gone.wav"] = "could not fetch http://h/gone.wav: HTTP status 404";
  return media;
}

std::string Start(const std::string& id, const std::string& url, double t, double offset = 0,
                  double volume = 1) {
  return R"({"id":")" + id + R"(","source":"<audio src=x>","url":")" + url +
         R"(","t":)" + std::to_string(t) + R"(,"offset":)" + std::to_string(offset) +
         R"(,"rate":1,"pitch":true,"volume":)" + std::to_string(volume) + R"(,"loop":false})";
}
std::string End(const std::string& id, double t, const std::string& why) {
  return R"({"id":")" + id + R"(","t":)" + std::to_string(t) + R"(,"end":")" + why + R"("})";
}

TEST(SoundTimelineTest, MessagesBecomeSpansOnFilmTime) {
  const Rational fps{30, 1};
  Result<audio::Timeline> t = SoundTimeline(
      {Start("media-1", "http://h/a.wav", 100), End("media-1", 100, "changed"),
       Start("media-1", "http://h/a.wav", 100, 0, 0.5), End("media-1", 500, "changed"),
       Start("media-1", "http://h/a.wav", 500, 0.4, 0.5), End("media-1", 1000, "paused"),
       Start("media-2", "http://h/a.wav", 1500)},
      fps, Rational{2, 1}, Fetched());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->sounds.size(), 2u);
  const audio::Sound& first = t->sounds[0];
  EXPECT_EQ(first.media, kHash);
  // The span changed in the moment it started played nothing and is gone.
  ASSERT_EQ(first.spans.size(), 2u);
  EXPECT_EQ(first.spans[0].start, FilmTimeOfMs(100, fps));
  EXPECT_EQ(first.spans[0].volume, 0.5);
  EXPECT_EQ(first.spans[0].ended_by, audio::SpanEnd::kChanged);
  EXPECT_EQ(first.spans[1].offset, (Rational{2, 5}));
  EXPECT_EQ(*first.spans[1].end, (Rational{1, 1}));
  EXPECT_EQ(first.spans[1].ended_by, audio::SpanEnd::kPaused);
  EXPECT_FALSE(t->sounds[1].spans[0].end.has_value());  // Still playing at the window's end.
  // What it makes is a timeline the mixer takes.
  EXPECT_TRUE(audio::FromJson(audio::ToJson(*t)).ok());
}

TEST(SoundTimelineTest, MediaThatFailedIsLeftOutWithItsReason) {
  Result<audio::Timeline> t =
      SoundTimeline({Start("media-1", "http://h/gone.wav", 200), End("media-1", 300, "paused")},
                    Rational{30, 1}, Rational{1, 1}, Fetched());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->sounds.empty());
  ASSERT_EQ(t->left_out.size(), 1u);
  EXPECT_NE(t->left_out[0].reason.find("404"), std::string::npos);
}

TEST(SoundTimelineTest, AMessageItCannotReadIsAnError) {
  EXPECT_FALSE(SoundTimeline({R"({"t":1})"}, Rational{30, 1}, Rational{1, 1}, Fetched()).ok());
  EXPECT_FALSE(SoundTimeline({End("media-1", 1, "exploded")}, Rational{30, 1}, Rational{1, 1},
                             Fetched()).ok());
}

}  // namespace
}  // namespace pagereel::capture
