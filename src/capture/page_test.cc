// Drives the real chrome-headless-shell through capture::Page and reads each frame's clocks
// back from its pixels.
#include "capture/page.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "testing/http_server.h"

#include "testing/timecode.h"

namespace pagereel::capture {
namespace {

using testing::ReadTimecodeRow;
using testing::TestPageUrl;

class PageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<browser::Browser>> b = browser::Browser::Launch({});
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    browser_ = std::move(b).value();
  }

  PageOptions Options(const std::string& page) {
    PageOptions o;
    o.url = TestPageUrl(page);
    o.width = 640;
    o.height = 360;
    o.fps = Rational{30, 1};
    return o;
  }

  encode::Image Decode(EncodedFrame frame) {
    Result<encode::Image> image = encode::DecodeScreenshot(frame.screenshot());
    EXPECT_TRUE(image.ok()) << image.status().ToString();
    return image.ok() ? std::move(image).value() : encode::Image{};
  }

  std::unique_ptr<browser::Browser> browser_;
};

int Row(const encode::Image& image, int row) {
  return ReadTimecodeRow(image.rgba.data(), image.width * 4, 4, row);
}

TEST_F(PageTest, EveryClockReadsFrameTime) {
  PageOptions options = Options("timecode.html");
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  // Frames 0-4 one by one, then a jump to 40 (frames 5-39 run without screenshots).
  for (int64_t n : {0, 1, 2, 3, 4, 40}) {
    Result<EncodedFrame> frame = (*page)->Capture(n);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    encode::Image image = Decode(std::move(frame).value());
    ASSERT_EQ(image.width, 640);
    ASSERT_EQ(image.height, 360);
    const int t = static_cast<int>(FrameTimeMillis(n, options.fps));
    SCOPED_TRACE("frame " + std::to_string(n));
    EXPECT_EQ(Row(image, testing::kRafTimestamp), t);
    EXPECT_EQ(Row(image, testing::kPerformanceNow), t);
    EXPECT_EQ(Row(image, testing::kDateNow), t);
    EXPECT_EQ(Row(image, testing::kCssAnimation), t);
    EXPECT_EQ(Row(image, testing::kWebAnimation), t);
    EXPECT_EQ(Row(image, testing::kSvgTime), t);
    EXPECT_EQ(Row(image, testing::kRafCount), n + 1);  // Exactly one rAF turn per frame.
    const int intervals = Row(image, testing::kIntervalCount);
    EXPECT_GE(intervals, t / 50);
    EXPECT_LE(intervals, t / 50 + 1);
  }
}

TEST_F(PageTest, PageThatStartsMidFilmHoldsTheSameState) {
  // The first frame this page shows is 45: frames 0-44 run without screenshots.
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("timecode.html"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Result<EncodedFrame> frame = (*page)->Capture(45);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  encode::Image image = Decode(std::move(frame).value());
  const int t = static_cast<int>(FrameTimeMillis(45, Rational{30, 1}));
  EXPECT_EQ(Row(image, testing::kRafTimestamp), t);
  EXPECT_EQ(Row(image, testing::kCssAnimation), t);
  EXPECT_EQ(Row(image, testing::kSvgTime), t);
  EXPECT_EQ(Row(image, testing::kRafCount), 46);
  EXPECT_EQ(Row(image, testing::kIntervalCount), 30);
}

TEST_F(PageTest, WhatThePageLearnsOfTheHostIsFixed) {
  // The browser runs under another time zone and locale; the page must not see them.
  setenv("TZ", "America/New_York", 1);
  setenv("LANG", "fr_FR.UTF-8", 1);
  Result<std::unique_ptr<browser::Browser>> browser = browser::Browser::Launch({});
  unsetenv("TZ");
  unsetenv("LANG");
  ASSERT_TRUE(browser.ok()) << browser.status().ToString();
  for (bool berlin : {false, true}) {
    PageOptions options = Options("environment.html");
    if (berlin) {
      options.timezone = "Europe/Berlin";
      options.locale = "de-DE";
    }
    Result<std::unique_ptr<Page>> page = Page::Open(**browser, options);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    Result<EncodedFrame> frame = (*page)->Capture(40);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    encode::Image image = Decode(std::move(frame).value());
    SCOPED_TRACE(berlin ? "Europe/Berlin, de-DE" : "defaults");
    EXPECT_EQ(Row(image, 0), berlin ? 940 : 1000);  // UTC offset in minutes, + 1000.
    EXPECT_EQ(Row(image, 1), 4);                    // navigator.hardwareConcurrency
    EXPECT_EQ(Row(image, 2), 8);                    // navigator.deviceMemory
    EXPECT_EQ(Row(image, 3), berlin ? 2 : 1);       // Intl, toLocaleString, navigator.language
    // Animation times are whole milliseconds in every frame, pre-rolled ones included
    // (they carried run-to-run floating-point noise).
    EXPECT_EQ(Row(image, 4), 0);
    EXPECT_EQ(Row(image, 5), FrameTimeMillis(40, Rational{30, 1}));
  }
}

TEST_F(PageTest, ReadyPromiseHoldsFrameZeroAndClocksStillStartAtZero) {
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("ready-late.html"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_TRUE((*page)->declared_duration().has_value());
  EXPECT_DOUBLE_EQ(*(*page)->declared_duration(), 0.5);
  for (int64_t n : {0, 3}) {
    Result<EncodedFrame> frame = (*page)->Capture(n);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    EXPECT_EQ(Row(Decode(std::move(frame).value()), 0), FrameTimeMillis(n, Rational{30, 1}));
  }
}

TEST_F(PageTest, RejectedReadyNamesTheReason) {
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("ready-rejects.html"));
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("data feed unavailable"), std::string_view::npos)
      << page.status().ToString();
  EXPECT_NE(page.status().message().find("ready-rejects.html"), std::string_view::npos);
}

TEST_F(PageTest, ReadyThatNeverResolvesTimesOut) {
  PageOptions options = Options("ready-never.html");
  options.timeout = std::chrono::milliseconds(1500);
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(page.status().message().find("window.pagereel.ready"), std::string_view::npos)
      << page.status().ToString();
}

// A fetch() at load to a server that takes the connection and never answers (a listening
// socket nobody accepts on) holds frame 0 until --timeout, then fails naming the file, never
// passing on to frame 0 without it (as pages with a worker did: conformance/workers).
TEST_F(PageTest, AFileThatNeverArrivesBeforeFrameZeroFailsNamingIt) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_GE(listener.get(), 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener.get(), 16), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/never.json";

  testing::HttpServer server;
  server.Serve("/page.html", "<!doctype html><script>fetch('" + url +
                                 "').catch(() => {});</script>");
  PageOptions options = Options("timecode.html");
  options.url = server.Url("/page.html");
  options.timeout = std::chrono::milliseconds(1500);
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(page.status().message().find("still waiting for a file to arrive (" + url + ")"),
            std::string_view::npos)
      << page.status().ToString();
}

// Two pages in one browser, each with a shared worker of the same script (a worker per
// browser context): each page brings its own onto film time and leaves the other's alone.
// The worker's setTimeout(..., 500) runs at film time 500 ms, before the frame at 501 ms
// (the browser's own timers ran it at 501 or 502 ms, at random); page B's has not run at
// frame 3, although page A's time has passed 500 ms meanwhile.
TEST_F(PageTest, EachPageRunsItsOwnSharedWorkerOnItsOwnFilmTime) {
  testing::HttpServer server;
  server.Serve("/page.html", R"(<!doctype html>
<style>html, body { margin: 0; background: #000; overflow: hidden; }</style>
<canvas id="c" width="640" height="40"></canvas>
<script>
  const ctx = document.getElementById('c').getContext('2d');
  let value = 0;
  const worker = new SharedWorker('/shared.js');
  worker.port.onmessage = (e) => { value = e.data; };
  requestAnimationFrame(function frame() {
    for (let b = 0; b < 20; b++) {
      ctx.fillStyle = (value >> (19 - b)) & 1 ? '#fff' : '#000';
      ctx.fillRect(b * 32, 0, 32, 40);
    }
    requestAnimationFrame(frame);
  });
</script>)");
  testing::HttpServer::Response script;
  script.content_type = "text/javascript";
  script.body = R"(const ports = [];
onconnect = (e) => { ports.push(e.ports[0]); };
setTimeout(() => { for (const port of ports) port.postMessage(performance.now()); }, 500);)";
  server.Serve("/shared.js", script);

  PageOptions options = Options("timecode.html");
  options.url = server.Url("/page.html");
  options.shared_workers = PageOptions::SharedWorkers::kAttach;
  Result<std::unique_ptr<Page>> a = Page::Open(*browser_, options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<std::unique_ptr<Page>> b = Page::Open(*browser_, options);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto read = [&](Page& page, int64_t n) {
    Result<EncodedFrame> frame = page.Capture(n);
    EXPECT_TRUE(frame.ok()) << frame.status().ToString();
    return frame.ok() ? Row(Decode(std::move(frame).value()), 0) : -1;
  };
  EXPECT_EQ(read(**a, 14), 0);  // 467 ms.
  EXPECT_EQ(read(**a, 20), 500);
  EXPECT_EQ(read(**b, 3), 0);
  EXPECT_EQ(read(**b, 15), 500);  // 501 ms.
}

// A shared worker whose script is missing: the page gets its error event and frame 0 comes
// (the code before waited for the script until the timeout and failed the page: the
// request of a shared worker that never started was never seen to end).
TEST_F(PageTest, ASharedWorkerWhoseScriptIsMissingDoesNotHoldThePage) {
  testing::HttpServer server;
  server.Serve("/page.html", "<!doctype html><script>new SharedWorker('/missing.js');</script>");
  PageOptions options = Options("timecode.html");
  options.url = server.Url("/page.html");
  options.timeout = std::chrono::milliseconds(5000);
  options.shared_workers = PageOptions::SharedWorkers::kAttach;
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Result<EncodedFrame> frame = (*page)->Capture(0);
  EXPECT_TRUE(frame.ok()) << frame.status().ToString();
}

TEST_F(PageTest, MissingFileIsReported) {
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("no-such-page.html"));
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("no-such-page.html"), std::string_view::npos)
      << page.status().ToString();
}

TEST_F(PageTest, NavigatingAwayStopsTheFilm) {
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("navigates-away.html"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Status status;
  for (int64_t n = 0; n < 30 && status.ok(); ++n) status = (*page)->Capture(n).status();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("navigated away"), std::string_view::npos) << status.ToString();
  // Its timer fires at 100 ms, which falls in frame 3 (101 ms): the frame, not only the
  // segment, is named.
  EXPECT_NE(status.message().find("at frame 3;"), std::string_view::npos) << status.ToString();
}

TEST_F(PageTest, ClosingItselfStopsTheFilm) {
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("closes-itself.html"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Status status;
  for (int64_t n = 0; n < 30 && status.ok(); ++n) status = (*page)->Capture(n).status();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("window.close()"), std::string_view::npos) << status.ToString();
}

TEST_F(PageTest, DialogsAreDismissedAtOnceAndReportedWithTheirFrame) {
  PageOptions options = Options("dialogs.html");
  // Short, so a dialog left open fails the test at its frame instead of slowing it.
  options.timeout = std::chrono::milliseconds(5000);
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::vector<PageMessage> dialogs;
  for (int64_t n = 0; n <= 46; ++n) {
    Result<EncodedFrame> frame = (*page)->Capture(n);
    ASSERT_TRUE(frame.ok()) << "frame " << n << ": " << frame.status().ToString();
    for (PageMessage& m : (*page)->TakeMessages()) {
      if (m.kind == PageMessage::Kind::kDialog) dialogs.push_back(std::move(m));
    }
    if (n == 40) {
      // The page paints green when confirm() answered false and prompt() null.
      encode::Image image = Decode(std::move(frame).value());
      const uint8_t* p = image.pixel(320, 180);
      EXPECT_LT(p[0], 40);
      EXPECT_GT(p[1], 215);
      EXPECT_LT(p[2], 40);
    }
  }
  ASSERT_EQ(dialogs.size(), 4u);
  EXPECT_EQ(dialogs[0].frame, 29);
  EXPECT_EQ(dialogs[0].text, "alert(\"Hello from frame 29\"), dismissed");
  EXPECT_EQ(dialogs[1].frame, 31);
  EXPECT_EQ(dialogs[1].text, "confirm(\"Go on?\"), dismissed (it returned false)");
  EXPECT_EQ(dialogs[2].frame, 33);
  EXPECT_EQ(dialogs[2].text, "prompt(\"Your name?\"), dismissed (it returned null)");
  EXPECT_EQ(dialogs[3].frame, 45);  // setTimeout(..., 1500): 1500 ms falls in frame 45.
  EXPECT_EQ(dialogs[3].text, "alert(\"A timer's alert\"), dismissed");
}

TEST_F(PageTest, ProblemsAreReportedAtTheFrameTheyHappenIn) {
  PageOptions options = Options("rejects.html");
  options.timeout = std::chrono::milliseconds(5000);
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::vector<PageMessage> messages;
  for (int64_t n = 0; n <= 36; ++n) {
    ASSERT_TRUE((*page)->Capture(n).ok()) << "frame " << n;
    for (PageMessage& m : (*page)->TakeMessages()) messages.push_back(std::move(m));
  }
  ASSERT_EQ(messages.size(), 4u);
  // Chromium reports an unhandled rejection of an animation frame with the next frame's
  // time; it was listed at 26.
  EXPECT_EQ(messages[0].kind, PageMessage::Kind::kException);
  EXPECT_NE(messages[0].text.find("rejected at frame 25"), std::string::npos) << messages[0].text;
  EXPECT_EQ(messages[0].frame, 25);
  EXPECT_EQ(messages[1].kind, PageMessage::Kind::kException);
  EXPECT_NE(messages[1].text.find("thrown at frame 27"), std::string::npos) << messages[1].text;
  EXPECT_EQ(messages[1].frame, 27);
  EXPECT_EQ(messages[2].kind, PageMessage::Kind::kConsoleError);
  EXPECT_EQ(messages[2].text, "console error at frame 29");
  EXPECT_EQ(messages[2].frame, 29);
  EXPECT_EQ(messages[3].kind, PageMessage::Kind::kException);
  EXPECT_NE(messages[3].text.find("rejected by a timer"), std::string::npos) << messages[3].text;
  EXPECT_EQ(messages[3].frame, 33);
}

TEST_F(PageTest, TheScreenIsAsLargeAsThePage) {
  // Not the browser's default 800x600: the page's CSS size, whatever it is.
  PageOptions options = Options("screen.html");
  options.width = 1000;
  options.height = 500;
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Result<EncodedFrame> frame = (*page)->Capture(0);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  encode::Image image = Decode(std::move(frame).value());
  EXPECT_EQ(Row(image, 0), 1000);  // screen.width
  EXPECT_EQ(Row(image, 1), 500);   // screen.height
  EXPECT_EQ(Row(image, 2), 1000);  // screen.availWidth
  EXPECT_EQ(Row(image, 3), 500);   // screen.availHeight
  EXPECT_EQ(Row(image, 4), 1000);  // innerWidth
  EXPECT_EQ(Row(image, 5), 500);   // innerHeight
}

// Summed absolute difference of two 160x160 cells of a frame, per channel and pixel.
double CellDifference(const encode::Image& image, int a, int b) {
  int64_t sum = 0;
  for (int y = 0; y < 160; ++y) {
    for (int x = 0; x < 160; ++x) {
      const uint8_t* p = image.pixel(a * 160 + x, y);
      const uint8_t* q = image.pixel(b * 160 + x, y);
      for (int c = 0; c < 3; ++c) sum += std::abs(p[c] - q[c]);
    }
  }
  return static_cast<double>(sum) / (160.0 * 160.0 * 3.0);
}

TEST_F(PageTest, CjkTextAndColourEmojiDrawWithTheSystemFonts) {
  // scripts/install-deps.sh installs Noto CJK and Noto Color Emoji: CJK text must not come
  // out as missing-glyph boxes ("tofu"), nor an emoji as nothing.
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, Options("cjk-emoji.html"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Result<EncodedFrame> frame = (*page)->Capture(0);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  encode::Image image = Decode(std::move(frame).value());
  // Cells: 0 and 1 two CJK characters, 2 the missing-glyph box, 3 an emoji. Two missing
  // glyphs draw the same box, so two characters that differ were really drawn.
  EXPECT_GT(CellDifference(image, 0, 1), 4.0) << "CJK characters drew alike: tofu";
  EXPECT_GT(CellDifference(image, 0, 2), 4.0) << "a CJK character drew as the missing-glyph box";
  // The emoji's cell holds colour (a pixel far from grey), not a box or nothing.
  int coloured = 0;
  for (int y = 0; y < 160; ++y) {
    for (int x = 480; x < 640; ++x) {
      const uint8_t* p = image.pixel(x, y);
      const int spread = std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]});
      if (spread > 100) ++coloured;
    }
  }
  EXPECT_GT(coloured, 1000) << "the emoji has no colour";
}

TEST_F(PageTest, AlphaFramesAreTransparentPng) {
  // A page with no background of its own: the transparent default shows through.
  PageOptions options = Options("unused");
  options.url = "data:text/html,<body style='margin:0'><div style='width:10px;height:10px;background:rgba(0,0,255,.5)'>";
  options.alpha = true;
  Result<std::unique_ptr<Page>> page = Page::Open(*browser_, options);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  Result<EncodedFrame> frame = (*page)->Capture(0);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->format, encode::ImageFormat::kPng);
  encode::Image image = Decode(std::move(frame).value());
  const uint8_t* inside = image.pixel(5, 5);
  EXPECT_EQ(inside[2], 255);
  EXPECT_NEAR(inside[3], 128, 1);
  EXPECT_EQ(image.pixel(100, 100)[3], 0);
}

}  // namespace
}  // namespace pagereel::capture
