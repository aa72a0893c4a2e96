// Runs the real chrome-headless-shell: one-shot captures, their waits and their errors.
#include "capture/snapshot.h"

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "capture/image.h"
#include "testing/http_server.h"

namespace pagereel::capture {
namespace {

using std::chrono::milliseconds;

class SnapshotTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    browser::LaunchOptions options;
    options.frame_control = browser::FrameControl::kPerTarget;
    Result<std::unique_ptr<browser::Browser>> b = browser::Browser::Launch(options);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    browser_ = std::move(b).value().release();
  }
  static void TearDownTestSuite() { delete browser_; }

  static SnapshotOptions Html(std::string html) {
    SnapshotOptions options;
    options.html = std::move(html);
    options.width = 320;
    options.height = 200;
    options.timeout = milliseconds(20'000);
    return options;
  }

  static browser::Browser* browser_;
};
browser::Browser* SnapshotTest::browser_ = nullptr;

TEST_F(SnapshotTest, PngShowsThePageAtItsScale) {
  SnapshotOptions options = Html(
      "<body style='margin:0;background:#00f'><div id=box "
      "style='margin:10px;width:100px;height:50px;background:#f00'></div>");
  options.scale = 2;
  auto snapshot = Snapshot::Open(*browser_, options);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  Result<std::string> png = (*snapshot)->Screenshot({});
  ASSERT_TRUE(png.ok()) << png.status().ToString();
  Result<encode::Image> image = encode::DecodePng(reinterpret_cast<const uint8_t*>(png->data()), png->size());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 640);
  EXPECT_EQ(image->height, 400);
  EXPECT_GT(image->pixel(30, 30)[0], 240);   // Inside the red box (scaled 2x).
  EXPECT_GT(image->pixel(600, 300)[2], 240);  // Blue background.

  ScreenshotOptions clip;
  clip.selector = "#box";
  Result<std::string> boxed = (*snapshot)->Screenshot(clip);
  ASSERT_TRUE(boxed.ok()) << boxed.status().ToString();
  image = encode::DecodePng(reinterpret_cast<const uint8_t*>(boxed->data()), boxed->size());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 200);
  EXPECT_EQ(image->height, 100);

  clip.selector = "#nothing";
  EXPECT_EQ((*snapshot)->Screenshot(clip).status().code(), StatusCode::kNotFound);
  clip.selector = "##";
  EXPECT_EQ((*snapshot)->Screenshot(clip).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SnapshotTest, JpegWebpAndPdfAreWhatTheySayTheyAre) {
  auto snapshot = Snapshot::Open(
      *browser_, Html("<style>@media print { section { break-after: page; } }</style>"
                      "<section>one</section><section>two</section><section>three</section>"));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  Result<std::string> jpeg = (*snapshot)->Screenshot({.type = ImageType::kJpeg, .quality = 70,
                                                      .full_page = false, .selector = ""});
  ASSERT_TRUE(jpeg.ok());
  EXPECT_EQ(jpeg->substr(0, 3), "\xFF\xD8\xFF");
  Result<std::string> webp = (*snapshot)->Screenshot({.type = ImageType::kWebp, .quality = 70,
                                                      .full_page = false, .selector = ""});
  ASSERT_TRUE(webp.ok());
  EXPECT_EQ(webp->substr(0, 4), "RIFF");
  EXPECT_EQ(webp->substr(8, 4), "WEBP");
  Result<std::string> pdf = (*snapshot)->Pdf({});
  ASSERT_TRUE(pdf.ok()) << pdf.status().ToString();
  EXPECT_EQ(pdf->substr(0, 5), "%PDF-");
  size_t pages = 0;
  for (size_t at = pdf->find("/Type /Page"); at != std::string::npos; at = pdf->find("/Type /Page", at + 1)) {
    if (pdf->compare(at, 12, "/Type /Pages") != 0) ++pages;
  }
  EXPECT_EQ(pages, 3u);
  PdfOptions bad;
  bad.page_ranges = "7-9";
  EXPECT_EQ((*snapshot)->Pdf(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SnapshotTest, HttpErrorsAndUnreachablePagesAreNamed) {
  testing::HttpServer server;
  SnapshotOptions options = Html("");
  options.url = server.Url("/missing");
  auto missing = Snapshot::Open(*browser_, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("HTTP 404"), std::string_view::npos);

  uint16_t closed_port = 0;
  {
    testing::HttpServer gone;
    closed_port = gone.port();
  }
  options.url = "http://127.0.0.1:" + std::to_string(closed_port) + "/";
  auto refused = Snapshot::Open(*browser_, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("ERR_CONNECTION_REFUSED"), std::string_view::npos)
      << refused.status().message();
}

TEST_F(SnapshotTest, PagesThatSignalAreCapturedWhenTheySaySo) {
  // A page that never stops drawing, but calls triggerCapture() after 300 ms.
  auto triggered = Snapshot::Open(*browser_, Html(
      "<canvas></canvas><script>(function f() { requestAnimationFrame(f); })();"
      "setTimeout(() => { document.body.dataset.done = 1; triggerCapture(); }, 300);</script>"));
  ASSERT_TRUE(triggered.ok()) << triggered.status().ToString();
  EXPECT_EQ((*triggered)->wait_report().ended_by, "trigger");

  auto ready = Snapshot::Open(*browser_, Html(
      "<script>window.pagereel = { ready: new Promise((r) => setTimeout(r, 200)) };</script>"));
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  EXPECT_EQ((*ready)->wait_report().ended_by, "ready");

  auto rejected = Snapshot::Open(*browser_, Html(
      "<script>window.pagereel = { ready: Promise.reject(new Error('no data')) };</script>"));
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("no data"), std::string_view::npos);
}

TEST_F(SnapshotTest, SilentPagesAreCapturedWhenQuietOrAtTheCap) {
  // Content that arrives 400 ms after load, then nothing: captured once it is there.
  auto late = Snapshot::Open(*browser_, Html(
      "<p id=p>waiting</p><script>setTimeout(() => { p.textContent = 'done'; }, 400);</script>"));
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ((*late)->wait_report().ended_by, "quiet");
  // The network idle wait (500 ms) already covers the 400 ms here; a finite CSS animation
  // of 1.5 s must also be waited for.
  auto animated = Snapshot::Open(*browser_, Html(
      "<style>@keyframes in { from { opacity: 0 } to { opacity: 1 } }"
      "div { animation: in 1500ms linear; }</style><div>hi</div>"));
  ASSERT_TRUE(animated.ok());
  EXPECT_EQ((*animated)->wait_report().ended_by, "quiet");
  EXPECT_GE((*animated)->wait_report().wait.count(), 1000);

  // A page that draws for ever is captured at the cap.
  auto endless = Snapshot::Open(*browser_, Html(
      "<canvas></canvas><script>(function f() { requestAnimationFrame(f); })();</script>"));
  ASSERT_TRUE(endless.ok());
  EXPECT_EQ((*endless)->wait_report().ended_by, "cap");
}

TEST_F(SnapshotTest, StoppingCancelsAndTimeoutsSayWhy) {
  std::atomic<bool> stop{false};
  SnapshotOptions options = Html("<script>(function f() { requestAnimationFrame(f); })();</script>");
  options.wait = WaitMode::kQuiet;
  options.should_stop = [&] { return stop.load(); };
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));
    stop = true;
  });
  auto stopped = Snapshot::Open(*browser_, options);
  stopper.join();
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled);

  options.should_stop = nullptr;
  options.timeout = milliseconds(1'500);
  auto late = Snapshot::Open(*browser_, options);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded);
  // The browser is still fine for the next capture.
  EXPECT_TRUE(Snapshot::Open(*browser_, Html("ok")).ok());
}

}  // namespace
}  // namespace pagereel::capture
