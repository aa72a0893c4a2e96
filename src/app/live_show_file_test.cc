// Show files: what a good one gives the engine, and how a bad one is refused (file, line, key).
#include <filesystem>
#include <algorithm>
#include <cmath>
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

TEST_F(ShowFileTest, SoundSettingsAreReadAndBadOnesRefusedNamingTheLine) {
  const std::string out = "[[outputs]]\nto = \"x.ts\"\n";
  Result<live::ShowSpec> show = LoadShowFile(Write(
      "show.toml", "[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\nvolume = 0.25\n" + out +
                       "[[outputs]]\nto = \"y.mkv\"\nsound = false\n[sound]\nenabled = true\n"));
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_EQ(show->sources[0].volume, 0.25);
  EXPECT_TRUE(show->sound.enabled);
  EXPECT_EQ(show->outputs[0].sound, live::OutputSound::kAuto);
  EXPECT_EQ(show->outputs[1].sound, live::OutputSound::kNone);
  const std::string source = "[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\n";
  EXPECT_NE(Refusal(source + "volume = 9\n" + out).find("show.toml:4: sources[0].volume: 9 is outside 0 to 4"),
            std::string::npos)
      << Refusal(source + "volume = 9\n" + out);
  EXPECT_NE(Refusal(source + "volume = -1\n" + out).find("show.toml:4: sources[0].volume: -1 is outside 0 to 4"),
            std::string::npos);
  EXPECT_NE(Refusal(source + "volume = \"loud\"\n" + out).find("show.toml:4: sources[0].volume: must be a number"),
            std::string::npos);
  EXPECT_NE(Refusal(source + out + "sound = \"aac\"\n").find("show.toml:6: outputs[0].sound: must be true or false"),
            std::string::npos)
      << Refusal(source + out + "sound = \"aac\"\n");
  EXPECT_NE(Refusal(source + out + "[sound]\nenabled = 1\n").find("show.toml:7: sound.enabled: must be true or false"),
            std::string::npos);
  EXPECT_NE(Refusal(source + out + "[sound]\ncodec = \"aac\"\n").find("show.toml:7: sound.codec: unknown key"),
            std::string::npos);
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

// Issue 19: shapes that were taken silently, and a file's every error at once.
TEST_F(ShowFileTest, WrongShapesAreRefusedAndEveryErrorIsReported) {
  const std::string outputs = "[[outputs]]\nto = \"x.mp4\"\n";
  const std::string bug = "[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\n";
  EXPECT_NE(Refusal("format = 5\n" + bug + outputs).find("show.toml:1: format: must be a table"),
            std::string::npos)
      << Refusal("format = 5\n" + bug + outputs);
  EXPECT_NE(Refusal("sources = 5\n" + outputs).find("show.toml:1: sources: must be"), std::string::npos);
  EXPECT_NE(Refusal("clock = \"fast\"\n" + bug + outputs).find("show.toml:1: clock: must be a table"),
            std::string::npos);
  // The same layer twice.
  const std::string twice = bug + "layer = 2\n[[sources]]\nid = \"two\"\nurl = \"bug.html\"\nlayer = 2\n" + outputs;
  EXPECT_NE(Refusal(twice).find("show.toml:8: sources[1].layer: 2 is already the layer of sources[0]"),
            std::string::npos)
      << Refusal(twice);
  // A layer that is another source's place in the list.
  const std::string placed = bug + "[[sources]]\nid = \"two\"\nurl = \"bug.html\"\nlayer = 0\n" + outputs;
  EXPECT_NE(Refusal(placed).find("sources[0]: its place in the list makes it layer 0"), std::string::npos)
      << Refusal(placed);
  // Outside the program.
  const std::string far = "[format]\nsize = \"1920x1080\"\n" + bug + "x = 5000\n" + outputs;
  EXPECT_NE(Refusal(far).find("show.toml:6: sources[0]: at x=5000, y=0 its 1920x1080 picture lies wholly "
                              "outside the 1920x1080 program"),
            std::string::npos)
      << Refusal(far);
  EXPECT_EQ(Refusal("[format]\nsize = \"1920x1080\"\n" + bug + "x = 1900\nwidth = 640\n" + outputs), "");
  // Ids that cannot go into a URL or a metric label as they are.
  EXPECT_NE(Refusal("[[sources]]\nid = \"x y/z\"\nurl = \"bug.html\"\n" + outputs)
                .find("show.toml:2: sources[0].id: 'x y/z' is not an id"),
            std::string::npos);
  EXPECT_NE(Refusal(bug + outputs + "id = \"a b\"\n").find("outputs[0].id: 'a b' is not an id"),
            std::string::npos);
  EXPECT_NE(Refusal(bug + bug + outputs).find("sources[1].id: 'bug' is already the id of sources[0]"),
            std::string::npos);

  // Several errors: each, with its line.
  const std::string many =
      "format = 5\n"                                      // 1
      "[[sources]]\nid = \"x y/z\"\nurl = \"bug.html\"\n"  // 2-4
      "opacity = 7\n"                                     // 5
      "[[outputs]]\nto = \"x.mp4\"\nquality = 0\n"          // 6-8
      "[clock]\nlate = 1\n";                              // 9-10
  const std::string all = Refusal(many);
  EXPECT_NE(all.find("show.toml has 5 errors:"), std::string::npos) << all;
  for (const char* each : {"show.toml:1: format: must be a table", "show.toml:3: sources[0].id",
                           "show.toml:5: sources[0].opacity: 7 is outside 0 to 1",
                           "show.toml:8: outputs[0].quality: 0 is outside 1 to 100",
                           "show.toml:10: clock.late: unknown key"}) {
    EXPECT_NE(all.find(each), std::string::npos) << each << " in\n" << all;
  }
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 5) << all;
}

TEST_F(ShowFileTest, AmcpLayersAndTheAmcpTable) {
  fs::create_directories(dir() / "templates");
  Result<live::ShowSpec> show = LoadShowFile(Write("show.toml", R"([[sources]]
id = "bug"
url = "bug.html"
amcp_layer = 20

[[outputs]]
to = "x.mp4"

[control]
token = "t0k"

[amcp]
listen = "127.0.0.1:5250"
channel = 2
templates = "templates"
)"));
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_EQ(show->sources[0].amcp_layer, 20);
  EXPECT_EQ(show->amcp.listen, "127.0.0.1:5250");
  EXPECT_EQ(show->amcp.channel, 2);
  EXPECT_EQ(show->amcp.token, "t0k");  // The control token, unless amcp.token says otherwise.
  EXPECT_EQ(show->amcp.templates, (dir() / "templates").string());
  const std::string bug = "[[sources]]\nid = \"bug\"\nurl = \"bug.html\"\n";
  const std::string outputs = "[[outputs]]\nto = \"x.mp4\"\n";
  EXPECT_NE(Refusal(bug + outputs + "[amcp]\nlisten = \"127.0.0.1:5250\"\n").find("no source has an amcp_layer"),
            std::string::npos);
  const std::string b2 = "[[sources]]\nid = \"b2\"\nurl = \"bug.html\"\n";
  EXPECT_NE(Refusal(bug + "amcp_layer = 1\n" + b2 + "amcp_layer = 1\n" + outputs)
                .find("amcp_layer: 1 already names sources[0]"),
            std::string::npos)
      << Refusal(bug + "amcp_layer = 1\n" + b2 + "amcp_layer = 1\n" + outputs);
  EXPECT_NE(Refusal(bug + "amcp_layer = 1\n" + outputs + "[amcp]\nlisten = \"127.0.0.1:5250\"\ntemplates = \"nowhere\"\n")
                .find("amcp.templates: '"),
            std::string::npos);
  Result<live::ShowSpec> open = LoadShowFile(
      Write("open.toml", bug + "amcp_layer = 1\n" + outputs + "[control]\ntoken = \"t\"\n[amcp]\ntoken = \"\"\n"));
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(open->amcp.token, "");
}

TEST(LiveDurationTest, ShorterThanAFrameIsRefusedNotUnlimited) {
  EXPECT_EQ(*TicksForDuration(0, Rational{25, 1}), 0);  // No limit.
  EXPECT_EQ(*TicksForDuration(2, Rational{25, 1}), 50);
  EXPECT_EQ(*TicksForDuration(0.04, Rational{25, 1}), 1);
  EXPECT_EQ(*TicksForDuration(1, Rational{30000, 1001}), 29);
  for (double bad : {0.001, 0.039, -1.0, 1e300, std::nan("")}) {
    Result<int64_t> ticks = TicksForDuration(bad, Rational{25, 1});
    EXPECT_EQ(ticks.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(std::string(TicksForDuration(0.001, Rational{25, 1}).status().message())
                .find("--duration 0.001 is shorter than one frame at 25 fps; give at least 0.04 s"),
            std::string::npos)
      << TicksForDuration(0.001, Rational{25, 1}).status().message();
  // And the command refuses it before any browser starts.
  LiveRequest request;
  request.sources = {"data:text/html,x"};
  request.outputs = {(fs::temp_directory_path() / "pagereel-duration-test.mp4").string()};
  request.duration_seconds = 0.001;
  request.control = "none";
  EXPECT_EQ(RunLive(request), 2);
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

// An srt:// URL's options are read at start: a misspelt or out-of-range one is refused,
// named, before the show starts (through libavformat a misspelt passphrase was ignored and
// the show went out unencrypted).
TEST(OutputForDestinationTest, SrtOptionsAreCheckedAtStart) {
  const std::pair<const char*, const char*> bad[] = {
      {"srt://127.0.0.1:9000?pasphrase=0123456789ab", "unknown SRT option 'pasphrase'"},
      {"srt://127.0.0.1:9000?passphrase=short", "10 to 79 characters"},
      {"srt://127.0.0.1:9000?latency=abc", "latency=abc"},
      {"srt://127.0.0.1:9000?mode=server", "mode=server"},
      {"srt://127.0.0.1:9000?pbkeylen=20", "16, 24 or 32"},
      {"srt://127.0.0.1:9000?transtype=file", "live mode"},
      {"srt://127.0.0.1:9000?latency", "option latency=: give a whole number"},
      {"srt://127.0.0.1:9000?mode=rendezvous", "not supported"},
  };
  for (const auto& [url, says] : bad) {
    Result<live::OutputSpec> out = OutputForDestination(url);
    ASSERT_FALSE(out.ok()) << url;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << url;
    EXPECT_NE(std::string(out.status().message()).find(says), std::string::npos) << out.status().message();
  }
  for (const char* good : {"srt://127.0.0.1:9000?latency=200000&passphrase=0123456789ab&pbkeylen=32",
                           "srt://[::1]:9000?streamid=%23!::r=live&peeridletimeo=3000",
                           "srt://:9000?mode=listener&listen_timeout=5000000"}) {
    EXPECT_TRUE(OutputForDestination(good).ok()) << good << ": " << OutputForDestination(good).status().ToString();
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
