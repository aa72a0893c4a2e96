#include "serve/request.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace pagereel::serve {
namespace {

Result<CaptureRequest> Get(Route route, const std::string& query) {
  return ParseCaptureRequest(route, "/v1/x?" + query, "", "", Limits{});
}

TEST(CaptureRequestTest, ScreenshotDefaultsAndValues) {
  // The URL is a query value: its own reserved characters come percent-encoded.
  Result<CaptureRequest> r = Get(Route::kScreenshot, "url=https%3A%2F%2Fexample.com%2Fa%2520b%3Fx%3D1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->page.url, "https://example.com/a%20b?x=1");
  EXPECT_EQ(r->page.width, 1280);
  EXPECT_EQ(r->page.height, 720);
  EXPECT_EQ(r->content_type, "image/png");
  EXPECT_EQ(r->page.wait, capture::WaitMode::kAuto);

  r = Get(Route::kScreenshot,
          "url=http://x.test/&type=webp&quality=55&width=800&height=600&scale=2&fullPage=true"
          "&transparent=1&wait=1500&timeout=9000");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content_type, "image/webp");
  EXPECT_EQ(r->screenshot.quality, 55);
  EXPECT_EQ(r->page.scale, 2);
  EXPECT_TRUE(r->screenshot.full_page);
  EXPECT_TRUE(r->page.transparent);
  EXPECT_EQ(r->page.wait, capture::WaitMode::kFixed);
  EXPECT_EQ(r->page.fixed_wait.count(), 1500);
  EXPECT_EQ(r->page.timeout.count(), 9000);
}

TEST(CaptureRequestTest, GifAndClipDefaultsAndValues) {
  Result<CaptureRequest> r = Get(Route::kGif, "url=https://example.com");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content_type, "image/gif");
  EXPECT_EQ(r->clip.format, ClipFormat::kGif);
  EXPECT_EQ(r->clip.fps, (Rational{10, 1}));
  EXPECT_FALSE(r->clip.frames);  // The page's declared duration, else 2 s.

  r = Get(Route::kGif, "url=https://example.com&fps=12.5&duration=2&width=320&height=200");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->clip.fps, (Rational{25, 2}));
  EXPECT_EQ(r->clip.frames, 25);
  EXPECT_EQ(r->page.width, 320);

  r = Get(Route::kClip, "url=https://example.com&fps=29.97&duration=1&quality=70");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content_type, "video/mp4");
  EXPECT_EQ(r->clip.fps, (Rational{30000, 1001}));
  EXPECT_EQ(r->clip.frames, 30);
  EXPECT_EQ(r->clip.quality, 70);

  r = Get(Route::kClip, "url=https://example.com&format=webm&transparent=true&frames=7");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->content_type, "video/webm");
  EXPECT_TRUE(r->clip.transparent);
  EXPECT_EQ(r->clip.frames, 7);
  // The page's sound, listing what is left out, fetching at most the service's cap.
  EXPECT_EQ(r->clip.sound, ClipOptions::Sound::kIfAny);
  EXPECT_EQ(r->clip.left_out, ClipOptions::LeftOut::kList);
  EXPECT_EQ(r->clip.max_media_bytes, Limits{}.max_clip_media_bytes);

  r = Get(Route::kClip, "url=https://example.com&audio=false");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->clip.sound, ClipOptions::Sound::kNone);
  r = Get(Route::kClip, "url=https://example.com&strict=true");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->clip.left_out, ClipOptions::LeftOut::kFail);
  r = Get(Route::kClip, "url=https://example.com&strict=true&audio=false");
  EXPECT_EQ(r.status().message(), "strict: needs the sound: audio=false leaves it all out");
  r = Get(Route::kGif, "url=https://example.com&strict=false");
  EXPECT_EQ(r.status().message(),
            "strict: does not apply to a GIF, which has no sound (see /v1/clip)");
}

TEST(CaptureRequestTest, BodiesJsonFormAndHtml) {
  Result<CaptureRequest> r = ParseCaptureRequest(
      Route::kScreenshot, "/v1/screenshot?type=jpeg", "application/json",
      R"({"url": "https://example.com", "width": 640, "fullPage": false, "quality": 90})", Limits{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->page.width, 640);
  EXPECT_EQ(r->content_type, "image/jpeg");
  r = ParseCaptureRequest(Route::kPdf, "/v1/pdf", "application/x-www-form-urlencoded",
                          "url=https%3A%2F%2Fexample.com&format=Letter&landscape=true", Limits{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->pdf.paper_width_in, 8.5);
  EXPECT_TRUE(r->pdf.landscape);
  r = ParseCaptureRequest(Route::kPdf, "/v1/pdf?width=210mm&height=297mm&margin=1cm",
                          "text/html; charset=utf-8", "<h1>Invoice</h1>", Limits{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->page.html, "<h1>Invoice</h1>");
  EXPECT_NEAR(r->pdf.paper_width_in, 8.268, 0.001);
  EXPECT_NEAR(r->pdf.margin_left_in, 0.3937, 0.001);
  EXPECT_EQ(r->content_type, "application/pdf");
}

struct BadCase {
  Route route;
  std::string query;
  std::string names;  // The message must start with this (the parameter's name).
};

// Each query is refused as kInvalidArgument with a message that starts as its case says.
void ExpectEachRefused(const std::vector<BadCase>& cases) {
  for (const BadCase& c : cases) {
    Result<CaptureRequest> r = Get(c.route, c.query);
    ASSERT_FALSE(r.ok()) << c.query;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.query;
    EXPECT_EQ(r.status().message().substr(0, c.names.size()), c.names)
        << c.query << " -> " << r.status().message();
  }
}

TEST(CaptureRequestTest, EveryBadValueNamesItsParameter) {
  const std::string u = "url=https://example.com&";
  const std::vector<BadCase> cases = {
      {Route::kScreenshot, "", "url: missing"},
      {Route::kScreenshot, "url=", "url: missing"},
      {Route::kScreenshot, "url=file:///etc/passwd", "url: must be an http"},
      {Route::kScreenshot, "url=javascript:alert(1)", "url: must be an http"},
      {Route::kScreenshot, "url=ftp://example.com/", "url: must be an http"},
      {Route::kScreenshot, "url=example.com", "url: is not an absolute URL"},
      {Route::kScreenshot, "url=http://", "url: "},
      {Route::kScreenshot, "url=http://a.test/%0d%0aX:1", "url: must not hold"},
      {Route::kScreenshot, "url=http://a.test/%20b", "url: must not hold"},
      {Route::kScreenshot, "url=http://a.test/&html=%3Cp%3E", "url: give either"},
      {Route::kScreenshot, "url=http://a.test/+b", "url: must not hold"},
      {Route::kScreenshot, "url=https://a.test/?a=1&b=2", "unknown parameter 'b'"},
      {Route::kScreenshot, u + "width=abc", "width: must be a whole number"},
      {Route::kScreenshot, u + "width=-5", "width: must be a whole number"},
      {Route::kScreenshot, u + "width=0", "width: must be a whole number"},
      {Route::kScreenshot, u + "width=99999999999999999999", "width: must be a whole number"},
      {Route::kScreenshot, u + "width=12.5", "width: must be a whole number"},
      {Route::kScreenshot, u + "width=", "width: must be a whole number"},
      {Route::kScreenshot, u + "height=1e9", "height: must be a whole number"},
      {Route::kScreenshot, u + "scale=0", "scale: must be a number"},
      {Route::kScreenshot, u + "scale=nan", "scale: must be a number"},
      {Route::kScreenshot, u + "scale=inf", "scale: must be a number"},
      {Route::kScreenshot, u + "scale=-1", "scale: must be a number"},
      {Route::kScreenshot, u + "width=3840&height=3840&scale=4", "scale: width"},
      {Route::kScreenshot, u + "type=gif", "type: must be png, jpeg or webp"},
      {Route::kScreenshot, u + "type=PNG%00", "type: must be png"},
      {Route::kScreenshot, u + "type=jpeg&quality=0", "quality: must be a whole number"},
      {Route::kScreenshot, u + "type=jpeg&quality=101", "quality: must be a whole number"},
      {Route::kScreenshot, u + "quality=50", "quality: applies to jpeg and webp"},
      {Route::kScreenshot, u + "fullPage=maybe", "fullPage: must be true or false"},
      {Route::kScreenshot, u + "transparent=1&type=jpeg", "transparent: needs type=png"},
      {Route::kScreenshot, u + "selector=%0a", "selector: must not hold control"},
      {Route::kScreenshot, u + "selector=a&fullPage=1", "selector: cannot be combined"},
      {Route::kScreenshot, u + "selector=" + std::string(2000, 'a'), "selector: is longer"},
      {Route::kScreenshot, u + "wait=soon", "wait: must be auto"},
      {Route::kScreenshot, u + "wait=-1", "wait: must be auto"},
      {Route::kScreenshot, u + "wait=40000", "wait: must be auto"},
      {Route::kScreenshot, u + "timeout=0", "timeout: must be a whole number"},
      {Route::kScreenshot, u + "timeout=999999999", "timeout: must be a whole number"},
      {Route::kScreenshot, u + "Width=5", "unknown parameter 'Width'"},
      {Route::kScreenshot, u + "format=A4", "unknown parameter 'format'"},
      {Route::kPdf, u + "format=A9", "format: must be one of"},
      {Route::kPdf, u + "format=A4&width=10in", "format: give either"},
      {Route::kPdf, u + "width=10furlongs", "width: must be a length"},
      {Route::kPdf, u + "width=-3in", "width: must be a length"},
      {Route::kPdf, u + "width=1e300in", "width: must be a length"},
      {Route::kPdf, u + "width=0.1in", "width: the paper"},
      {Route::kPdf, u + "margin=6in", "margin: the margins leave no room"},
      {Route::kPdf, u + "landscape=2", "landscape: must be true or false"},
      {Route::kPdf, u + "pageRanges=1-;DROP", "pageRanges: must look like"},
      {Route::kPdf, u + "pageRanges=abc", "pageRanges: must look like"},
      {Route::kPdf, u + "type=png", "unknown parameter 'type'"},
      {Route::kPdf, u + "headerTemplate=%01", "headerTemplate: must not hold"},
      {Route::kGif, "", "url: missing"},
      {Route::kGif, u + "fps=0", "fps: must be a frame rate"},
      {Route::kGif, u + "fps=-10", "fps: must be a frame rate"},
      {Route::kGif, u + "fps=120", "fps: must be a frame rate"},
      {Route::kGif, u + "fps=ten", "fps: must be a frame rate"},
      {Route::kGif, u + "fps=1/0", "fps: must be a frame rate"},
      {Route::kGif, u + "frames=0", "frames: must be a whole number"},
      {Route::kGif, u + "frames=301", "frames: must be a whole number"},
      {Route::kGif, u + "frames=2.5", "frames: must be a whole number"},
      {Route::kGif, u + "frames=10&duration=1", "frames: give either"},
      {Route::kGif, u + "duration=0", "duration: must be a number"},
      {Route::kGif, u + "duration=nan", "duration: must be a number"},
      {Route::kGif, u + "duration=61", "duration: must be a number"},
      {Route::kGif, u + "duration=40", "duration: 40 s at 10 fps is 400 frames"},
      {Route::kGif, u + "width=1920&height=1080&frames=300", "frames: 300 frames of 1920x1080"},
      {Route::kGif, u + "width=1920&height=1080&fps=30&duration=8", "duration: 240 frames"},
      {Route::kGif, u + "quality=50", "quality: does not apply to a GIF"},
      {Route::kGif, u + "format=mp4", "format: does not apply to a GIF"},
      {Route::kGif, u + "transparent=1", "transparent: does not apply to a GIF"},
      {Route::kGif, u + "scale=2", "scale: applies to screenshots only"},
      {Route::kGif, u + "wait=load", "wait: applies to screenshot and pdf"},
      {Route::kGif, u + "type=png", "unknown parameter 'type'"},
      {Route::kClip, u + "format=mov", "format: must be mp4"},
      {Route::kClip, u + "format=gif", "format: must be mp4"},
      {Route::kClip, u + "transparent=1", "transparent: needs format=webm"},
      {Route::kClip, u + "quality=0", "quality: must be a whole number"},
      {Route::kClip, u + "width=641", "width: must be even"},
      {Route::kClip, u + "height=361&format=webm", "height: must be even"},
      {Route::kClip, u + "width=5000", "width: must be a whole number"},
  };
  ExpectEachRefused(cases);
}

TEST(CaptureRequestTest, BadBodies) {
  Limits limits;
  limits.max_body_bytes = 100;
  EXPECT_EQ(ParseCaptureRequest(Route::kScreenshot, "/v1/screenshot", "text/html",
                                std::string(101, 'a'), limits)
                .status()
                .code(),
            StatusCode::kResourceExhausted);
  for (const char* body : {"[1,2]", "{", "{\"url\": {\"a\": 1}}", "\"x\"", "{\"width\": [1]}"}) {
    Result<CaptureRequest> r =
        ParseCaptureRequest(Route::kScreenshot, "/v1/screenshot", "application/json", body, Limits{});
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << body;
  }
  Result<CaptureRequest> r = ParseCaptureRequest(Route::kScreenshot, "/v1/screenshot",
                                                 "application/json", R"({"width": "wide", "url": "https://a.test"})", Limits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 6), "width:");
  r = ParseCaptureRequest(Route::kScreenshot, "/v1/screenshot", "image/png", "\x89PNG", Limits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 13), "Content-Type:");
  r = ParseCaptureRequest(Route::kScreenshot, "/v1/screenshot?%zz=1", "", "", Limits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 6), "query:");
  r = ParseCaptureRequest(Route::kScreenshot, "/v1/screenshot?url=https%3A%2F%2Fa.test%2", "", "", Limits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 6), "query:");
}

TEST(CaptureRequestTest, UrlsNeedTheSyntaxOfAnAbsoluteUriAndAHostTheEgressParserReads) {
  for (const char* good :
       {"url=http://x.test", "url=HTTPS://X.test:8443/a?b=c", "url=http://u:p@x.test/",
        "url=https://[2001:db8::1]/", "url=http://x.test/a%2520b", "url=http://x.test/?q=%7E"}) {
    Result<CaptureRequest> r = Get(Route::kScreenshot, good);
    EXPECT_TRUE(r.ok()) << good << " -> " << r.status().ToString();
  }
  const std::vector<BadCase> cases = {
      // Not absolute URIs (RFC 3986): a fragment, characters to percent-encode, a bad escape.
      {Route::kScreenshot, "url=http://x.test/%23top", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=http://x.test/a%7Cb", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=http://x.test/%7B%7D", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=http://x.test/%25zz", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=http://x.test/%5B1%5D", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=http://x.test/\xc3\xa4", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=127.0.0.1:80", "url: is not an absolute URL: "},
      {Route::kScreenshot, "url=localhost:80",
       "url: must be an http:// or https:// URL, not 'localhost'"},
      {Route::kScreenshot, "url=HTTP:x.test", "url: has no host: 'HTTP:x.test'"},
      {Route::kScreenshot, "url=https://u@:80/", "url: has no host: "},
      // Hosts and ports the egress policy could not judge are refused at once, naming why.
      {Route::kScreenshot, "url=http://x.test:0/", "url: 'http://x.test:0/' is refused: its port"},
      {Route::kScreenshot, "url=http://a!b.test/", "url: 'http://a!b.test/' is refused: the host"},
      {Route::kScreenshot, "url=http://a%2541.test/",
       "url: 'http://a%41.test/' is refused: the host"},
      {Route::kScreenshot, "url=http://[::1/", "url: 'http://[::1/' is refused: its IPv6 host"},
  };
  ExpectEachRefused(cases);
}

TEST(CaptureRequestTest, JsonFieldsReadAsTheQueryWouldWithTheLastOfARepeatedName) {
  auto post = [](Route route, const std::string& body) {
    return ParseCaptureRequest(route, "/v1/x", "application/json", body, Limits{});
  };
  // A number is read as it was written: 12.5 frames a second, as fps=12.5 would be.
  Result<CaptureRequest> r =
      post(Route::kGif, R"({"url": "https://a.test", "fps": 12.5, "duration": 2.0, "width": 320})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->clip.fps, (Rational{25, 2}));
  EXPECT_EQ(r->clip.frames, 25);
  EXPECT_EQ(r->page.width, 320);
  r = post(Route::kScreenshot, R"({"url": "https://a.test", "width": [1], "width": 300})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->page.width, 300);
  // A whole number written with a fraction of zero, as JSON writers do (issue 20), is whole.
  r = post(Route::kScreenshot, R"({"url": "https://a.test", "width": 640.0, "height": 3.6e2})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->page.width, 640);
  EXPECT_EQ(r->page.height, 360);
  r = post(Route::kScreenshot, R"({"url": "https://a.test", "width": 640.5})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "width: must be a whole number from 1 to 3840, not '640.5'");
  r = post(Route::kScreenshot, R"({"url": "https://a.test", "b": null, "a": {}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "b: must be a string, a number or a boolean");
  // Nested 32 deep is a field of the wrong kind; 33 deep, or a byte-order mark, is not JSON
  // this service reads.
  const std::string deep = R"({"url": "https://a.test", "x": )";
  r = post(Route::kScreenshot, deep + std::string(31, '[') + std::string(31, ']') + "}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "x: must be a string, a number or a boolean");
  const std::string not_json =
      "body: is not a JSON object (send JSON with Content-Type application/json)";
  r = post(Route::kScreenshot, deep + std::string(32, '[') + std::string(32, ']') + "}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), not_json);
  r = post(Route::kScreenshot, "\xEF\xBB\xBF{\"url\": \"https://a.test\"}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), not_json);
  for (const char* body :
       {"{\"url\": \"\xff\"}", "{\"a\": 1,}", "{\"a\": 1} x", "[]", "{\"a\": 01}"}) {
    r = post(Route::kScreenshot, body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().message(), not_json) << body;
  }
}

TEST(CaptureRequestTest, AQuotedValueIsCutBetweenCharacters) {
  // "x" and 40 é: byte 60 falls inside the 30th é, which is left out whole.
  std::string query = "url=http://a/&type=x";
  for (int i = 0; i < 40; ++i) query += "%C3%A9";
  Result<CaptureRequest> r = Get(Route::kScreenshot, query);
  ASSERT_FALSE(r.ok());
  std::string shown = "x";
  for (int i = 0; i < 29; ++i) shown += "\xC3\xA9";
  EXPECT_EQ(r.status().message(), "type: must be png, jpeg or webp, not '" + shown + "...'");
}

TEST(CaptureRequestTest, TextForTheBrowserMustBeUtf8) {
  for (const auto& [route, query] : std::vector<std::pair<Route, std::string>>{
           {Route::kScreenshot, "url=http://a/&selector=%FF"},
           {Route::kPdf, "url=http://a/&headerTemplate=%C3"},
           {Route::kPdf, "url=http://a/&footerTemplate=%ED%A0%80"},  // A surrogate.
           {Route::kScreenshot, "url=http://a/%C0%AF"},              // An overlong '/'.
           {Route::kScreenshot, "html=%FF"}}) {
    Result<CaptureRequest> r = Get(route, query);
    ASSERT_FALSE(r.ok()) << query;
    EXPECT_NE(r.status().message().find(": must be UTF-8 text"), std::string::npos)
        << r.status().message();
  }
  Result<CaptureRequest> r = Get(Route::kScreenshot, "url=http://a/&selector=%23caf%C3%A9");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->screenshot.selector, "#caf\xC3\xA9");
}

}  // namespace
}  // namespace pagereel::serve
