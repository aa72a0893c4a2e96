// /v1/gif and /v1/clip on the real service, the real chrome-headless-shell and the real
// encoders; every answer is decoded with libavformat/libavcodec and its pixels checked.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "serve/clip_test_service.h"
#include "testing/http_client.h"
#include "testing/http_server.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::serve {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;

using Reply = testing::HttpReply;
using testing::Encode;
using testing::Fetch;
using testing::Get;

// A box that turns from red to blue over one second of page time, started by a timer
// half a second after the page loads (as pages written for browsers do).
constexpr const char* kLateAnimation = R"html(<!doctype html>
<style>
  html, body { margin: 0; }
  #box { position: fixed; inset: 0; background: rgb(255, 0, 0); }
  @keyframes to-blue { from { background: rgb(255, 0, 0); } to { background: rgb(0, 0, 255); } }
  #box.go { animation: to-blue 1s linear forwards; }
</style>
<div id="box"></div>
<script>setTimeout(() => document.getElementById('box').classList.add('go'), 500);</script>)html";

constexpr const char* kStill = R"html(<!doctype html>
<body style="margin:0;background:rgb(0,160,0)"></body>)html";

class ServeClipTest : public ClipServiceTest {
 protected:
  ServeClipTest() : ClipServiceTest("serve-clip") {}

  void SetUp() override {
    pages_.Serve("/late", kLateAnimation);
    pages_.Serve("/still", kStill);
    StartService();
  }

  // Writes an answer's body to a file and decodes it.
  testing::DecodedVideo Decode(const Reply& reply, const std::string& name) {
    std::filesystem::path path = scratch_.path() / name;
    std::ofstream(path, std::ios::binary) << reply.body;
    Result<testing::DecodedVideo> video = testing::DecodeVideo(path.string());
    EXPECT_TRUE(video.ok()) << video.status().ToString();
    return video.ok() ? *video : testing::DecodedVideo{};
  }
};

// Red, green and blue of pixel (x, y) of a decoded frame.
std::array<int, 3> Rgb(const testing::DecodedVideo& video, size_t frame, int x, int y) {
  const uint8_t* p = &video.rgb[frame][(static_cast<size_t>(y) * video.width + x) * 3];
  return {p[0], p[1], p[2]};
}

TEST_F(ServeClipTest, GifFollowsPageTimeAndIsTheSameEveryTime) {
  std::string target = "/v1/gif?width=160&height=90&fps=10&duration=2&url=" +
                       Encode(pages_.Url("/late"));
  // Two at once on one browser: page time, not the machine's load, decides every frame.
  auto first = std::async(std::launch::async, [&] { return Get(port_, target); });
  Reply second = Get(port_, target);
  Reply one = first.get();
  ASSERT_EQ(one.status, 200) << one.body << one.error;
  EXPECT_EQ(one.content_type, "image/gif");
  EXPECT_EQ(one.body.substr(0, 6), "GIF89a");
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(one.body, second.body) << "two captures of the same page made different GIFs";

  testing::DecodedVideo gif = Decode(one, "late.gif");
  EXPECT_EQ(gif.codec, "gif");
  EXPECT_EQ(gif.width, 160);
  EXPECT_EQ(gif.height, 90);
  ASSERT_EQ(gif.rgb.size(), 20u);
  // Red until the timer fires at 0.5 s, half way at 1.0 s, blue from 1.5 s.
  for (size_t f : {0, 4}) {
    auto [r, g, b] = Rgb(gif, f, 80, 45);
    EXPECT_GT(r, 230) << "frame " << f;
    EXPECT_LT(b, 25) << "frame " << f;
  }
  {
    auto [r, g, b] = Rgb(gif, 10, 80, 45);
    EXPECT_NEAR(r, 128, 30);
    EXPECT_NEAR(b, 128, 30);
  }
  for (size_t f : {15, 19}) {
    auto [r, g, b] = Rgb(gif, f, 80, 45);
    EXPECT_LT(r, 25) << "frame " << f;
    EXPECT_GT(b, 230) << "frame " << f;
  }
  json log = Logs().back();
  EXPECT_EQ(log.value("route", ""), "gif");
  EXPECT_EQ(log.value("frames", 0), 20);
  EXPECT_TRUE(std::filesystem::is_empty(scratch_.path() / "work")) << "a clip's file was left";
}

TEST_F(ServeClipTest, APageWithoutAnimationGivesAValidGifAndClips) {
  std::string url = Encode(pages_.Url("/still"));
  Reply gif = Get(port_, "/v1/gif?width=64&height=48&frames=5&url=" + url);
  ASSERT_EQ(gif.status, 200) << gif.body << gif.error;
  EXPECT_EQ(gif.content_type, "image/gif");
  testing::DecodedVideo g = Decode(gif, "still.gif");
  ASSERT_GE(g.rgb.size(), 1u);
  auto [r, gr, b] = Rgb(g, 0, 32, 24);
  EXPECT_LT(r, 20);
  EXPECT_NEAR(gr, 160, 10);

  Reply mp4 = Get(port_, "/v1/clip?width=64&height=48&fps=25&frames=6&url=" + url);
  ASSERT_EQ(mp4.status, 200) << mp4.body;
  EXPECT_EQ(mp4.content_type, "video/mp4");
  EXPECT_EQ(mp4.body.substr(4, 4), "ftyp");
  testing::DecodedVideo m = Decode(mp4, "still.mp4");
  EXPECT_EQ(m.codec, "h264");
  EXPECT_EQ(m.rate_num, 25);
  EXPECT_EQ(m.rgb.size(), 6u);
  EXPECT_NEAR(Rgb(m, 5, 32, 24)[1], 160, 12);

  // A posted document, as WebM with its transparency kept.
  Reply webm = Fetch(port_, http::verb::post, "/v1/clip?format=webm&transparent=true&width=64&height=48&frames=3",
                     "<body style='margin:0'><div style='width:32px;height:48px;background:#fff'></div>",
                     "text/html");
  ASSERT_EQ(webm.status, 200) << webm.body;
  EXPECT_EQ(webm.content_type, "video/webm");
  EXPECT_EQ(webm.body.substr(0, 4), "\x1A\x45\xDF\xA3");
  testing::DecodedVideo w = Decode(webm, "still.webm");
  EXPECT_EQ(w.codec, "vp9");
  EXPECT_TRUE(w.has_alpha);
  EXPECT_EQ(w.rgb.size(), 3u);
}

TEST_F(ServeClipTest, BadPagesAndBadRequestsAreAnsweredClearly) {
  Reply missing = Get(port_, "/v1/gif?frames=2&url=" + Encode(pages_.Url("/missing")));
  EXPECT_EQ(missing.status, 422) << missing.body;
  EXPECT_NE(missing.body.find("HTTP 404"), std::string::npos) << missing.body;

  Reply odd = Get(port_, "/v1/clip?width=101&url=" + Encode(pages_.Url("/still")));
  EXPECT_EQ(odd.status, 400);
  EXPECT_NE(odd.body.find("width: must be even"), std::string::npos) << odd.body;

  Reply wait = Get(port_, "/v1/gif?wait=500&url=" + Encode(pages_.Url("/still")));
  EXPECT_EQ(wait.status, 400);
  EXPECT_NE(wait.body.find("wait: applies to screenshot and pdf"), std::string::npos);

  // A page that never lets page time pass fails in time, naming the posted HTML.
  Reply stuck = Fetch(port_, http::verb::post, "/v1/gif?frames=3&timeout=2000",
                      "<script>while (true) {}</script>", "text/html");
  EXPECT_EQ(stuck.status, 504) << stuck.body;
  EXPECT_EQ(stuck.body.find("data:"), std::string::npos) << stuck.body;
  EXPECT_NE(stuck.body.find("(the posted HTML)"), std::string::npos) << stuck.body;

  // The service goes on.
  EXPECT_EQ(Get(port_, "/v1/gif?frames=1&width=32&height=32&url=" + Encode(pages_.Url("/still"))).status, 200);
}

}  // namespace
}  // namespace pagereel::serve
