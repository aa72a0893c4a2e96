// Show files: what a good one gives the engine, and how a bad one is refused (file, line, key).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "app/live_app.h"
#include "testing/scratch_dir.h"

namespace pagereel::app {
namespace {

namespace fs = std::filesystem;

class ShowFileTest : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir() / "bug.html") << "<p>bug</p>"; }
  const fs::path& dir() const { return scratch_.path(); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir() / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // The message a bad show gets, or "" when it loads.
  std::string Refusal(const std::string& text, const std::string& name = "show.toml") {
    Result<live::ShowSpec> show = LoadShowFile(Write(name, text));
    if (show.ok()) return "";
    EXPECT_EQ(show.status().code(), StatusCode::kInvalidArgument);
    return std::string(show.status().message());
  }
  testing::ScratchDir scratch_{"show-file"};
};

constexpr char kGood[] = R"([format]
size = "1920x1080"
fps = "30000/1001"
background = "#102030"

[[sources]]
id = "bug"
url = "bug.html"
x = 100
y = 50
width = 640
height = 360
opacity = 0.5
worker = 0

[[sources]]
id = "under"
url = "bug.html"
layer = -1
transparent = false

[[outputs]]
to = "program.mkv"
codec = "ffv1"

[[outputs]]
id = "feed"
to = "udp://127.0.0.1:5000"
bitrate_kbps = 4000

[clock]
late_threshold_us = 250
stagger = false

[control]
listen = "127.0.0.1:8091"
token = "secret"
)";

TEST_F(ShowFileTest, AGoodShowFileGivesTheShow) {
  Result<live::ShowSpec> show = LoadShowFile(Write("show.toml", kGood));
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_EQ(show->width, 1920);
  EXPECT_EQ(show->fps, Rational::Make(30000, 1001));
  EXPECT_EQ(show->background.g, 0x20);
  ASSERT_EQ(show->sources.size(), 2u);
  EXPECT_EQ(show->sources[0].id, "under");  // layer -1 goes below.
  EXPECT_EQ(show->sources[1].id, "bug");
  EXPECT_EQ(show->sources[1].x, 100);
  EXPECT_EQ(show->sources[1].opacity, 0.5);
  EXPECT_TRUE(show->sources[1].transparent);  // Layers after the first, unless told.
  EXPECT_NE(show->sources[1].url.find("file://"), std::string::npos);
  ASSERT_EQ(show->outputs.size(), 2u);
  EXPECT_EQ(show->outputs[0].stream.codec, encode::Codec::kFfv1);
  EXPECT_EQ(show->outputs[0].stream.sink.target, (dir() / "program.mkv").string());
  EXPECT_EQ(show->outputs[1].id, "feed");
  EXPECT_EQ(show->outputs[1].stream.container, encode::Container::kMpegTs);
  EXPECT_EQ(show->outputs[1].stream.bitrate_kbps, 4000);
  EXPECT_EQ(show->clock.late_threshold, std::chrono::microseconds(250));
  EXPECT_FALSE(show->clock.stagger);
  EXPECT_EQ(show->control.token, "secret");
}

TEST_F(ShowFileTest, JsonIsReadLikeToml) {
  Result<live::ShowSpec> show = LoadShowFile(Write(
      "show.json",
      R"({"format": {"size": "640x360", "fps": 50},
          "sources": [{"id": "bug", "url": "bug.html"}],
          "outputs": [{"to": "out.ts"}]})"));
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_EQ(show->fps, Rational::Make(50, 1));
  EXPECT_EQ(show->outputs[0].stream.container, encode::Container::kMpegTs);
  EXPECT_NE(Refusal(R"({"sources": [{"id": "bug", "url": "bug.html", "colour": 1}]})", "bad.json")
                .find("sources[0].colour: unknown key"),
            std::string::npos);
}

TEST_F(ShowFileTest, BadShowFilesAreRefusedNamingTheLine) {
  const std::string base = "[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\n\n[[outputs]]\nto = \"x.mp4\"\n";
  EXPECT_NE(Refusal("[format]\nsize = \"640x360\"\nfsp = 25\n" + base).find("show.toml:3: format.fsp: unknown key"),
            std::string::npos)
      << Refusal("[format]\nsize = \"640x360\"\nfsp = 25\n" + base);
  EXPECT_NE(Refusal("[format]\nfps = \"0\"\n" + base).find("show.toml:2: format.fps"), std::string::npos);
  EXPECT_NE(Refusal("[format]\nfps = \"fast\"\n" + base).find("show.toml:2: format.fps"), std::string::npos);
  EXPECT_NE(Refusal(base + "[[sources]]\nid = \"two\"\nurl = \"missing.html\"\n").find("show.toml:9: sources[1].url"),
            std::string::npos)
      << Refusal(base + "[[sources]]\nid = \"two\"\nurl = \"missing.html\"\n");
  EXPECT_NE(Refusal(base + "[[outputs]]\nto = \"udp://127.0.0.1:5000\"\n[[outputs]]\nto = \"srt://127.0.0.1:5000\"\n")
                .find("show.toml:10: outputs[2].to: port 127.0.0.1:5000 is already used by outputs[1]"),
            std::string::npos)
      << Refusal(base + "[[outputs]]\nto = \"udp://127.0.0.1:5000\"\n[[outputs]]\nto = \"srt://127.0.0.1:5000\"\n");
  EXPECT_NE(Refusal(base + "[[outputs]]\nto = \"udp://127.0.0.1:8090\"\n[control]\nlisten = \"127.0.0.1:8090\"\n")
                .find("control.listen: port 127.0.0.1:8090 is already used"),
            std::string::npos);
  EXPECT_NE(Refusal(base + "[clock]\nfifo = 120\n").find("clock.fifo: 120 is outside 1 to 99"), std::string::npos);
  EXPECT_NE(Refusal("[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\nopacity = \"half\"\n[[outputs]]\nto = \"x.mp4\"\n")
                .find("show.toml:4: sources[0].opacity: must be a number"),
            std::string::npos);
  EXPECT_NE(Refusal(base + "[[outputs]]\nto = \"x.avi\"\n").find("outputs[1].to"), std::string::npos);
  EXPECT_NE(Refusal("[[outputs]]\nto = \"x.mp4\"\n").find("no [[sources]]"), std::string::npos);
  EXPECT_NE(Refusal("this is = = not toml").find("show.toml:1"), std::string::npos);
  EXPECT_NE(Refusal(base + "[[outputs]]\nto = \"y.mp4\"\npreset = \"quick\"\n").find("not an x264 preset"),
            std::string::npos);
}

TEST(OutputForDestinationTest, StreamUrlsWithABadOrMissingPortAreRefused) {
  for (const char* bad : {"srt://127.0.0.1:99999", "srt://127.0.0.1", "udp://127.0.0.1",
                          "udp://239.0.0.1:", "udp://:5000", "rtmp://127.0.0.1:0/live/key",
                          "srt://127.0.0.1:port"}) {
    Result<live::OutputSpec> out = OutputForDestination(bad);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(out.status().message()).find(bad), std::string::npos) << out.status().message();
    EXPECT_NE(std::string(out.status().message()).find("write "), std::string::npos) << out.status().message();
  }
  for (const char* good : {"srt://127.0.0.1:9000", "srt://:9000?mode=listener", "udp://239.0.0.1:5000",
                           "rtmp://127.0.0.1/live/key", "rtmp://[::1]:1935/live/key"}) {
    EXPECT_TRUE(OutputForDestination(good).ok()) << good;
  }
}

TEST_F(ShowFileTest, OutputAlphaIsReadAndCheckedAgainstTheCodecAndContainer) {
  const std::string head = "[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\n[[outputs]]\n";
  Result<live::ShowSpec> show = LoadShowFile(Write("a.toml", head + "to = \"srt://127.0.0.1:9000\"\nalpha = \"key+fill\"\n"));
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_EQ(show->outputs[0].alpha, live::OutputAlpha::kKeyAndFill);
  show = LoadShowFile(Write("b.toml", head + "to = \"x.mov\"\ncodec = \"prores\"\nalpha = true\n"));
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_EQ(show->outputs[0].alpha, live::OutputAlpha::kChannel);
  EXPECT_NE(Refusal(head + "to = \"x.mp4\"\nalpha = true\n").find("H.264 has no alpha channel"), std::string::npos);
  EXPECT_NE(Refusal(head + "to = \"x.m3u8\"\nalpha = \"key+fill\"\n").find("two video streams"), std::string::npos);
  EXPECT_NE(Refusal(head + "to = \"x.ts\"\nalpha = \"luma\"\n").find("outputs[0].alpha"), std::string::npos);
}

}  // namespace
}  // namespace pagereel::app
