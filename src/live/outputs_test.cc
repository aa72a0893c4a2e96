// A show's program received by real receivers on 127.0.0.1, each started by the test and
// stopped after: ffmpeg as a UDP receiver, an SRT listener, an SRT caller (pagereel
// listening), an RTMP server, and an HLS reader of pagereel's playlist.
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "encode/srt_sender.h"
#include "live/engine.h"
#include "live/receiver_testing.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::live {
namespace {

namespace fs = std::filesystem;

const char kPage[] =
    "data:text/html,<body style='margin:0;background:rgb(0,0,200)'><div id=b style='position:"
    "absolute;left:0;top:0;width:40px;height:40px;background:rgb(0,200,0)'></div><script>"
    "let n=0;requestAnimationFrame(function f(){n=n>6?0:n+1;b.style.left=n*40+'px';"
    "requestAnimationFrame(f)})</script></body>";

// A page on a transparent background: an opaque red band (x 0-99), a half-transparent
// blue band (x 160-259), nothing elsewhere.
const char kAlphaPage[] =
    "data:text/html,<body style='margin:0;background:transparent'><div style='position:"
    "absolute;left:0;top:0;width:100px;height:180px;background:rgb(255,0,0)'></div><div "
    "style='position:absolute;left:160px;top:0;width:100px;height:180px;background:"
    "rgba(0,0,255,0.5)'></div></body>";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class OutputsTest : public ::testing::Test {
 protected:
  ShowSpec Show(const std::string& destination, encode::Container container) {
    ShowSpec show;
    show.width = 320;
    show.height = 180;
    show.fps = Rational{25, 1};
    show.sources.push_back(SourceSpec{.id = "page", .url = kPage});
    OutputSpec out;
    out.id = "out";
    out.stream.container = container;
    const bool url = destination.find("://") != std::string::npos;
    out.stream.sink = {url ? encode::Sink::Kind::kUrl : encode::Sink::Kind::kGrowingFile, destination, nullptr};
    out.stream.gop_frames = 25;
    show.outputs.push_back(out);
    return show;
  }

  static OutputSpec Out(const std::string& id, const std::string& destination, encode::Container container) {
    OutputSpec out;
    out.id = id;
    out.stream.container = container;
    const bool url = destination.find("://") != std::string::npos;
    out.stream.sink = {url ? encode::Sink::Kind::kUrl : encode::Sink::Kind::kGrowingFile, destination, nullptr};
    out.stream.gop_frames = 25;
    return out;
  }

  // The transparent page alone on a transparent program.
  ShowSpec AlphaShow() {
    ShowSpec show;
    show.width = 320;
    show.height = 180;
    show.fps = Rational{25, 1};
    show.background = Rgba{0, 0, 0, 0};
    show.sources.push_back(SourceSpec{.id = "page", .url = kAlphaPage, .transparent = true});
    return show;
  }

  // Runs `show` for `ticks` ticks; the status at the end.
  ShowStatus Run(const ShowSpec& show, int64_t ticks) {
    auto engine = Engine::Start(show);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (!engine.ok()) return {};
    Status ran = (*engine)->Run(ticks, nullptr);
    EXPECT_TRUE(ran.ok()) << ran.ToString();
    return (*engine)->CurrentStatus();
  }

  // What the receiver wrote: frames at 40 ms steps, blue with the green block.
  void ExpectReceived(const fs::path& file, size_t at_least) {
    auto video = testing::DecodeVideo(file.string());
    ASSERT_TRUE(video.ok()) << file << ": " << video.status().ToString();
    EXPECT_GE(video->pts_seconds.size(), at_least) << file;
    for (size_t i = 1; i < video->pts_seconds.size(); ++i) {
      EXPECT_NEAR(video->pts_seconds[i] - video->pts_seconds[i - 1], 0.04, 1e-3) << file << " frame " << i;
    }
    ASSERT_FALSE(video->rgb.empty());
    const auto& last = video->rgb.back();
    const uint8_t* p = &last[(static_cast<size_t>(150) * video->width + 300) * 3];
    EXPECT_GT(p[2], 160) << "blue background in " << file;
  }

  // The program's sound reached the receiver too: AAC at 48 kHz, as long as the `frames`
  // pictures it got (25 fps) within a frame, plus the 1,024 samples of priming and the
  // padded last packet that AAC in MPEG-TS carries (no container field hides them).
  void ExpectSoundAsLongAsPictures(const fs::path& file, int64_t frames) {
    auto audio = testing::DecodeAudio(file.string());
    ASSERT_TRUE(audio.ok()) << file << ": " << audio.status().ToString();
    EXPECT_EQ(audio->codec, "aac") << file;
    EXPECT_EQ(audio->sample_rate, 48000) << file;
    EXPECT_NEAR(static_cast<double>(audio->length()), static_cast<double>(frames * 1920),
                static_cast<double>(1920 + 2048))
        << file;
  }

  testing::ScratchDir scratch_{"live-outputs"};
};

TEST_F(OutputsTest, MpegTsOverUdpReachesAReceiver) {
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "udp.ts";
  // It stops by itself after 3 s of the program.
  Receiver receiver({"-i", "udp://127.0.0.1:" + std::to_string(port), "-t", "3", "-c", "copy", got.string()});
  ASSERT_TRUE(receiver.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // Listening before we send.
  ShowStatus status = Run(Show("udp://127.0.0.1:" + std::to_string(port) + "?pkt_size=1316", encode::Container::kMpegTs), 100);
  EXPECT_EQ(status.outputs[0].frames, 100);
  receiver.Stop();
  ExpectReceived(got, 70);
}

TEST_F(OutputsTest, SrtCallerReachesAnFfmpegListener) {
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "srt.ts";
  Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-c", "copy", got.string()});
  ASSERT_TRUE(receiver.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ShowStatus status = Run(Show("srt://127.0.0.1:" + std::to_string(port) + "?mode=caller", encode::Container::kMpegTs), 100);
  EXPECT_GE(status.outputs[0].frames, 95);
  EXPECT_TRUE(status.outputs[0].connected);
  receiver.Stop(/*wait_for_end=*/true);
  ExpectReceived(got, 90);
  // What the output counted is what the receiver got: the frames still in flight when the
  // show ended are delivered before the socket closes (SRT's linger; without it the last
  // 3-6 were lost), all but the one the receiver's demuxer holds until the stream's end.
  auto received = testing::DecodeVideo(got.string(), false);
  ASSERT_TRUE(received.ok());
  EXPECT_GE(static_cast<int64_t>(received->pts_seconds.size()) + 1, status.outputs[0].frames);
  ExpectSoundAsLongAsPictures(got, static_cast<int64_t>(received->pts_seconds.size()));
}

TEST_F(OutputsTest, AnSrtListenerServesAnFfmpegCaller) {
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "srt-caller.ts";
  std::jthread caller([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=caller", "-t", "2", "-c", "copy", got.string()});
    std::this_thread::sleep_for(std::chrono::seconds(4));
  });
  ShowSpec show = Show("srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", encode::Container::kMpegTs);
  show.as_run_log = (scratch_.path() / "asrun.log").string();
  ShowStatus status = Run(show, 150);
  caller.join();
  EXPECT_GT(status.outputs[0].frames, 0);
  ExpectReceived(got, 40);
  // The connection is logged with the tick it happened at (the one its wall time falls
  // in), not the tick the output began waiting at (0: it waits from the start).
  const std::string log = ReadAll(show.as_run_log);
  const size_t at = log.find(" output out connected");
  ASSERT_NE(at, std::string::npos) << log;
  const size_t tick = log.rfind("tick=", at);
  ASSERT_NE(tick, std::string::npos);
  const size_t line = log.rfind('\n', tick) == std::string::npos ? 0 : log.rfind('\n', tick) + 1;
  std::tm tm{};
  int ms = 0;
  ASSERT_EQ(std::sscanf(log.c_str() + line, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms),
            7)
      << log;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const double line_ms = static_cast<double>(::timegm(&tm)) * 1000 + ms;
  const size_t zero = log.find("tick 0 at ");
  ASSERT_NE(zero, std::string::npos) << log;
  const double tick0_ms = std::stod(log.substr(zero + 10));
  const int logged = std::stoi(log.substr(tick + 5));
  EXPECT_NEAR(logged, (line_ms - tick0_ms) / 40, 3) << log;
}

TEST_F(OutputsTest, RtmpPublishesToAnFfmpegServer) {
  const int port = FreePort(SOCK_STREAM);
  const fs::path got = scratch_.path() / "rtmp.flv";
  Receiver receiver({"-listen", "1", "-i", "rtmp://127.0.0.1:" + std::to_string(port) + "/live/show", "-c", "copy", got.string()});
  ASSERT_TRUE(receiver.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ShowStatus status = Run(Show("rtmp://127.0.0.1:" + std::to_string(port) + "/live/show", encode::Container::kFlv), 100);
  EXPECT_GE(status.outputs[0].frames, 95);
  receiver.Stop();
  ExpectReceived(got, 90);
  auto received = testing::DecodeVideo(got.string(), false);
  ASSERT_TRUE(received.ok());
  EXPECT_NEAR(static_cast<double>(received->pts_seconds.size()), static_cast<double>(status.outputs[0].frames), 2);
}

TEST_F(OutputsTest, HlsPlaylistIsReadable) {
  const fs::path playlist = scratch_.path() / "show.m3u8";
  ShowStatus status = Run(Show(playlist.string(), encode::Container::kHls), 150);
  EXPECT_EQ(status.outputs[0].frames, 150);
  ExpectReceived(playlist, 140);
  // Its bytes are its segments' (6 s of program: 3 segments, none deleted yet).
  int64_t segments = 0;
  for (const auto& entry : fs::directory_iterator(scratch_.path())) {
    if (entry.path().extension() == ".ts") segments += static_cast<int64_t>(entry.file_size());
  }
  EXPECT_GT(segments, 0);
  EXPECT_EQ(status.outputs[0].bytes, segments);
}

TEST_F(OutputsTest, AnOutputWhosePeerIsMissingIsRetriedWithoutStoppingTheShow) {
  const int port = FreePort(SOCK_STREAM);  // Nobody listens: RTMP connect is refused.
  const fs::path recording = scratch_.path() / "kept.mkv";
  ShowSpec show = Show("rtmp://127.0.0.1:" + std::to_string(port) + "/live/show", encode::Container::kFlv);
  OutputSpec file;
  file.id = "file";
  file.stream.container = encode::Container::kMatroska;
  file.stream.sink = {encode::Sink::Kind::kGrowingFile, recording.string(), nullptr};
  show.outputs.push_back(file);
  show.as_run_log = (scratch_.path() / "asrun.log").string();
  ::testing::internal::CaptureStderr();
  ShowStatus status = Run(show, 100);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  // libav's own lines go to the as-run log and the output's error, not to the terminal.
  EXPECT_EQ(stderr_text.find("Connection refused"), std::string::npos) << stderr_text;
  EXPECT_NE(ReadAll(show.as_run_log).find("libav: "), std::string::npos);
  EXPECT_NE(status.outputs[0].last_error.find("libav: "), std::string::npos) << status.outputs[0].last_error;
  EXPECT_EQ(status.clock.ticks, 100);
  EXPECT_EQ(status.outputs[0].frames, 0);
  EXPECT_EQ(status.outputs[0].dropped, 100);
  EXPECT_FALSE(status.outputs[0].last_error.empty());
  EXPECT_EQ(status.outputs[1].frames, 100);  // The other output is untouched.
  EXPECT_EQ(status.outputs[1].dropped, 0);
  auto video = testing::DecodeVideo(recording.string(), false);
  ASSERT_TRUE(video.ok());
  EXPECT_EQ(video->pts_seconds.size(), 100u);
}


// The alpha of a transparent program reaches files that can carry it, with straight colour:
// the half-transparent blue band reads alpha 128 and full blue, not premultiplied 128 blue.
TEST_F(OutputsTest, ProResAndFfv1FilesCarryTheProgramsAlphaStraight) {
  ShowSpec show = AlphaShow();
  OutputSpec prores = Out("prores", (scratch_.path() / "alpha.mov").string(), encode::Container::kMov);
  prores.stream.codec = encode::Codec::kProRes;
  OutputSpec ffv1 = Out("ffv1", (scratch_.path() / "alpha.mkv").string(), encode::Container::kMatroska);
  ffv1.stream.codec = encode::Codec::kFfv1;
  show.outputs = {prores, ffv1};
  Run(show, 30);
  struct Case {
    const char* file;
    const char* pixel_format;
    int tolerance;
  };
  for (const Case& c : {Case{"alpha.mov", "yuva444p", 4}, Case{"alpha.mkv", "bgra", 1}}) {
    auto video = testing::DecodeVideo((scratch_.path() / c.file).string(), true, -1, true);
    ASSERT_TRUE(video.ok()) << c.file << ": " << video.status().ToString();
    // ProRes 4444 decodes as yuva444p12le (written yuva444p10le).
    EXPECT_EQ(video->pixel_format.rfind(c.pixel_format, 0), 0u) << c.file << ": " << video->pixel_format;
    ASSERT_FALSE(video->alpha.empty()) << c.file;
    const auto& rgb = video->rgb.back();
    const auto& alpha = video->alpha.back();
    auto at = [&](int x) { return static_cast<size_t>(90) * 320 + static_cast<size_t>(x); };
    EXPECT_NEAR(alpha[at(50)], 255, c.tolerance) << c.file << " opaque red";
    EXPECT_NEAR(rgb[at(50) * 3], 255, c.tolerance) << c.file;
    EXPECT_NEAR(alpha[at(210)], 128, c.tolerance) << c.file << " half-transparent blue";
    EXPECT_NEAR(rgb[at(210) * 3 + 2], 255, c.tolerance) << c.file << " blue is straight, not premultiplied";
    EXPECT_NEAR(rgb[at(210) * 3], 0, c.tolerance) << c.file;
    EXPECT_NEAR(alpha[at(300)], 0, c.tolerance) << c.file << " transparent";
  }
}

// Key and fill over SRT to a real receiver: one MPEG-TS with two video streams, the fill
// (straight colour, black where transparent) and the key (the alpha as grey).
TEST_F(OutputsTest, KeyAndFillReachAnSrtReceiverAsTwoStreams) {
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "keyfill.ts";
  Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-map", "0", "-c", "copy", got.string()});
  ASSERT_TRUE(receiver.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ShowSpec show = AlphaShow();
  OutputSpec out = Out("keyfill", "srt://127.0.0.1:" + std::to_string(port) + "?mode=caller", encode::Container::kMpegTs);
  out.alpha = OutputAlpha::kKeyAndFill;
  show.outputs = {out};
  ShowStatus status = Run(show, 75);
  EXPECT_GT(status.outputs[0].frames, 0);
  receiver.Stop();
  auto fill = testing::DecodeVideo(got.string(), true, 0);
  auto key = testing::DecodeVideo(got.string(), true, 1);
  ASSERT_TRUE(fill.ok()) << fill.status().ToString();
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  ASSERT_FALSE(fill->rgb.empty());
  ASSERT_FALSE(key->rgb.empty());
  EXPECT_EQ(fill->codec, "h264");
  EXPECT_EQ(key->codec, "h264");
  // The receiver may stop between the two streams' last packets.
  EXPECT_NEAR(static_cast<double>(fill->pts_seconds.size()), static_cast<double>(key->pts_seconds.size()), 1);
  auto px = [](const testing::DecodedVideo& v, int x, int c) {
    return v.rgb.back()[(static_cast<size_t>(90) * 320 + static_cast<size_t>(x)) * 3 + static_cast<size_t>(c)];
  };
  EXPECT_NEAR(px(*fill, 50, 0), 255, 8) << "fill: red";
  EXPECT_NEAR(px(*fill, 210, 2), 255, 10) << "fill: the half-transparent blue, straight";
  EXPECT_NEAR(px(*fill, 300, 2), 0, 8) << "fill: black where transparent";
  EXPECT_NEAR(px(*key, 50, 0), 255, 6) << "key: opaque";
  EXPECT_NEAR(px(*key, 210, 0), 128, 6) << "key: half";
  EXPECT_NEAR(px(*key, 300, 0), 0, 6) << "key: transparent";
  EXPECT_NEAR(px(*key, 210, 0), px(*key, 210, 2), 3) << "key is grey";
}

// Outputs with the same encoder settings share one encoder: the same pictures reach both,
// and an output with another bitrate gets an encoder of its own.
TEST_F(OutputsTest, OutputsWithTheSameSettingsShareOneEncoder) {
  ShowSpec show = Show((scratch_.path() / "a.mkv").string(), encode::Container::kMatroska);
  show.outputs.push_back(Out("b", (scratch_.path() / "b.ts").string(), encode::Container::kMpegTs));
  OutputSpec other = Out("c", (scratch_.path() / "c.ts").string(), encode::Container::kMpegTs);
  other.stream.bitrate_kbps = 300;
  show.outputs.push_back(other);
  ShowStatus status = Run(show, 60);
  ASSERT_EQ(status.outputs.size(), 3u);
  EXPECT_EQ(status.outputs[0].encoder, status.outputs[1].encoder);
  EXPECT_NE(status.outputs[0].encoder, status.outputs[2].encoder);
  auto a = testing::DecodeVideo((scratch_.path() / "a.mkv").string());
  auto b = testing::DecodeVideo((scratch_.path() / "b.ts").string());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->rgb.size(), 60u);
  ASSERT_EQ(b->rgb.size(), 60u);
  for (size_t i = 0; i < a->rgb.size(); ++i) EXPECT_EQ(a->rgb[i], b->rgb[i]) << "frame " << i;
}

// A receiver that dies costs its own output only: the file beside it, on the same encoder,
// gets every tick.
TEST_F(OutputsTest, ADeadSrtReceiverDoesNotStallAFileOnTheSameEncoder) {
  const int port = FreePort(SOCK_DGRAM);
  auto receiver = std::make_unique<Receiver>(std::vector<std::string>{
      "-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-c", "copy",
      (scratch_.path() / "dead.ts").string()});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ShowSpec show = Show("srt://127.0.0.1:" + std::to_string(port) + "?mode=caller", encode::Container::kMpegTs);
  show.outputs.push_back(Out("file", (scratch_.path() / "kept.ts").string(), encode::Container::kMpegTs));
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::jthread killer([&] {
    while ((*engine)->CurrentStatus().clock.ticks < 40) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    receiver->Kill();
  });
  ASSERT_TRUE((*engine)->Run(150, nullptr).ok());
  killer.join();
  const ShowStatus status = (*engine)->CurrentStatus();
  EXPECT_EQ(status.outputs[0].encoder, status.outputs[1].encoder);
  EXPECT_EQ(status.outputs[1].frames, 150);
  EXPECT_EQ(status.outputs[1].dropped, 0);
  auto video = testing::DecodeVideo((scratch_.path() / "kept.ts").string(), false);
  ASSERT_TRUE(video.ok());
  EXPECT_EQ(video->pts_seconds.size(), 150u);
}

// A receiver killed without a word (no shutdown sent) is noticed within the peer-idle time,
// 1.5 s by default: the output reads disconnected, says why, and the frames sent after the
// receiver's last acknowledgement count as dropped, not sent. Through libavformat's SRT it read connected, and counted frames, for SRT's default
// 5 s (125 ticks at 25 fps).
TEST_F(OutputsTest, AKilledSrtReceiverIsNoticedWithinThePeerIdleTime) {
  if (!encode::SrtSender::Available()) GTEST_SKIP() << "built without libsrt: srt:// goes through libavformat";
  const int port = FreePort(SOCK_DGRAM);
  auto receiver = std::make_unique<Receiver>(std::vector<std::string>{
      "-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-c", "copy",
      (scratch_.path() / "killed.ts").string()});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ShowSpec show = Show("srt://127.0.0.1:" + std::to_string(port), encode::Container::kMpegTs);
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ShowStatus at_kill;
  ShowStatus later;
  ShowStatus again;
  std::atomic<bool> done{false};
  std::jthread killer([&] {
    while ((*engine)->CurrentStatus().outputs[0].frames < 25) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    at_kill = (*engine)->CurrentStatus();
    receiver->Kill();
    // 3.5 s of ticks after the kill: past the 1.5 s peer-idle time with room for a loaded
    // machine, well short of SRT's own 5 s.
    while ((*engine)->CurrentStatus().clock.ticks < at_kill.clock.ticks + 88) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    later = (*engine)->CurrentStatus();
    // A new receiver on the same port: the output calls again and goes on.
    receiver = std::make_unique<Receiver>(std::vector<std::string>{
        "-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-c", "copy",
        (scratch_.path() / "again.ts").string()});
    auto on_again = [&] {
      const OutputStatus o = (*engine)->CurrentStatus().outputs[0];
      return o.frames >= later.outputs[0].frames + 25 && o.fps > 0;
    };
    while (!on_again() && (*engine)->CurrentStatus().clock.ticks < 450) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    again = (*engine)->CurrentStatus();
    done = true;
  });
  ASSERT_TRUE((*engine)->Run(500, &done).ok());
  killer.join();
  ASSERT_TRUE(at_kill.outputs[0].connected);
  EXPECT_FALSE(later.outputs[0].connected) << "still connected " << later.clock.ticks - at_kill.clock.ticks
                                           << " ticks after the receiver was killed";
  // What the receiver never acknowledged is not counted as sent: only frames that could
  // have left before the kill (a tick or two in flight), not the 37 ticks of the peer-idle
  // time (125 with SRT's default); they count as dropped.
  EXPECT_LE(later.outputs[0].frames - at_kill.outputs[0].frames, 3);
  EXPECT_GE(later.outputs[0].dropped, 30);
  EXPECT_NE(later.outputs[0].last_error.find("gone"), std::string::npos) << later.outputs[0].last_error;
  EXPECT_NE(later.outputs[0].last_error.find("since its last acknowledgement count as dropped"), std::string::npos)
      << later.outputs[0].last_error;
  // The rate starts afresh rather than going below 0 with the frames taken back.
  EXPECT_EQ(later.outputs[0].fps, 0);
  EXPECT_EQ(later.outputs[0].bitrate_kbps, 0);
  // Called again: bytes count every connection's (they went back to the new one's alone).
  EXPECT_TRUE(again.outputs[0].connected);
  EXPECT_EQ(again.outputs[0].reconnects, 1);
  EXPECT_GE(again.outputs[0].frames, later.outputs[0].frames + 25);
  EXPECT_GT(again.outputs[0].bytes, later.outputs[0].bytes);
  EXPECT_GT(again.outputs[0].fps, 0);
}

// SRT's own figures reach /status: on a clean loopback link nothing is given up and the
// round trip is measured (not SRT's 100 ms starting guess); a receiver that stalls for
// 1.5 s (with a peer-idle time longer than that, so it is not counted gone) costs packets
// the sender gave up on as too late to be played, which the frame count alone hides.
TEST_F(OutputsTest, SrtLinkFiguresShowWhatTheReceiverNeverGot) {
  if (!encode::SrtSender::Available()) GTEST_SKIP() << "built without libsrt: srt:// goes through libavformat";
  const int port = FreePort(SOCK_DGRAM);
  Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", "-c", "copy",
                     (scratch_.path() / "stalled.ts").string()});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto engine = Engine::Start(Show("srt://127.0.0.1:" + std::to_string(port) + "?peeridletimeo=5000",
                                   encode::Container::kMpegTs));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ShowStatus clean;
  ShowStatus stalled;
  std::atomic<bool> done{false};
  std::jthread staller([&] {
    auto wait_frames = [&](int64_t n) {
      while ((*engine)->CurrentStatus().outputs[0].frames < n && (*engine)->CurrentStatus().clock.ticks < 400) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    };
    wait_frames(50);
    clean = (*engine)->CurrentStatus();
    receiver.Pause();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    receiver.Resume();
    wait_frames(clean.outputs[0].frames + 60);
    stalled = (*engine)->CurrentStatus();
    done = true;
  });
  ASSERT_TRUE((*engine)->Run(500, &done).ok());
  staller.join();
  ASSERT_TRUE(clean.outputs[0].srt);
  EXPECT_EQ(clean.outputs[0].srt_dropped_packets, 0);
  EXPECT_GT(clean.outputs[0].srt_rtt_ms, 0);
  EXPECT_LT(clean.outputs[0].srt_rtt_ms, 50);
  EXPECT_TRUE(stalled.outputs[0].connected) << stalled.outputs[0].last_error;
  EXPECT_GT(stalled.outputs[0].srt_dropped_packets, 0);
}

// An encrypted SRT stream: an ffmpeg listener with the same passphrase and stream id gets
// the program; one with another passphrase refuses the connection, and the output says why.
TEST_F(OutputsTest, AnEncryptedSrtStreamReachesAListenerWithThePassphrase) {
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "secret.ts";
  const std::string options = "passphrase=correct-horse-battery&pbkeylen=32";
  Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=listener&" + options, "-c", "copy",
                     got.string()});
  ASSERT_TRUE(receiver.running());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ShowStatus status = Run(
      Show("srt://127.0.0.1:" + std::to_string(port) + "?" + options + "&streamid=%23!::r=show", encode::Container::kMpegTs),
      75);
  EXPECT_GE(status.outputs[0].frames, 70) << status.outputs[0].last_error;
  receiver.Stop(/*wait_for_end=*/true);
  ExpectReceived(got, 60);

  const int other = FreePort(SOCK_DGRAM);
  Receiver wrong({"-i", "srt://127.0.0.1:" + std::to_string(other) + "?mode=listener&passphrase=another-secret-1",
                  "-c", "copy", (scratch_.path() / "wrong.ts").string()});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  status = Run(Show("srt://127.0.0.1:" + std::to_string(other) + "?" + options, encode::Container::kMpegTs), 50);
  EXPECT_EQ(status.outputs[0].frames, 0);
  EXPECT_FALSE(status.outputs[0].connected);
  EXPECT_FALSE(status.outputs[0].last_error.empty());
  EXPECT_NE(status.outputs[0].last_error.find("srt://127.0.0.1:" + std::to_string(other)), std::string::npos)
      << status.outputs[0].last_error;
}

// An srt:// URL's options are checked before anything is sent: one pagereel does not know
// (a mistyped passphrase would send the show in the clear) is refused by name.
TEST_F(OutputsTest, AnUnknownSrtOptionIsRefusedByName) {
  ShowSpec show = Show("srt://127.0.0.1:9?pasphrase=0123456789abc", encode::Container::kMpegTs);
  show.as_run_log = (scratch_.path() / "asrun.log").string();
  ShowStatus status = Run(show, 10);
  EXPECT_EQ(status.outputs[0].frames, 0);
  EXPECT_NE(status.outputs[0].last_error.find("unknown SRT option 'pasphrase'"), std::string::npos)
      << status.outputs[0].last_error;
}

// fps and bitrate are now's, not the show's average: an output whose receiver went away
// reads 0 while the file beside it reads the program's rate.
TEST_F(OutputsTest, RatesAreCurrentAndAGoneReceiverReadsZero) {
  const int port = FreePort(SOCK_STREAM);
  auto receiver = std::make_unique<Receiver>(std::vector<std::string>{
      "-listen", "1", "-i", "rtmp://127.0.0.1:" + std::to_string(port) + "/live/show", "-c", "copy",
      (scratch_.path() / "gone.flv").string()});
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ShowSpec show = Show("rtmp://127.0.0.1:" + std::to_string(port) + "/live/show", encode::Container::kFlv);
  show.outputs.push_back(Out("file", (scratch_.path() / "rate.ts").string(), encode::Container::kMpegTs));
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ShowStatus snapshot;
  ShowStatus before_kill;
  std::jthread watcher([&] {
    while ((*engine)->CurrentStatus().clock.ticks < 75) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    before_kill = (*engine)->CurrentStatus();
    receiver->Kill();
    while ((*engine)->CurrentStatus().clock.ticks < 200) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = (*engine)->CurrentStatus();
  });
  ASSERT_TRUE((*engine)->Run(225, nullptr).ok());
  watcher.join();
  ASSERT_EQ(snapshot.outputs.size(), 2u);
  EXPECT_GT(before_kill.outputs[0].fps, 10);
  EXPECT_GT(before_kill.outputs[0].bitrate_kbps, 0);
  EXPECT_FALSE(snapshot.outputs[0].connected);
  EXPECT_EQ(snapshot.outputs[0].fps, 0);
  EXPECT_EQ(snapshot.outputs[0].bitrate_kbps, 0);
  EXPECT_GT(snapshot.outputs[1].fps, 15);
  EXPECT_LT(snapshot.outputs[1].fps, 35);
  EXPECT_GT(snapshot.outputs[1].bitrate_kbps, 0);
}

// Every UDP datagram is 7 transport packets (1316 bytes), as receivers expect, also at the
// end of each frame.
TEST_F(OutputsTest, UdpDatagramsAreAll1316Bytes) {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int rcvbuf = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  timeval timeout{0, 200'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::atomic<bool> stop{false};
  std::vector<ssize_t> sizes;
  std::jthread reader([&] {
    std::vector<char> buffer(65536);
    while (!stop) {
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
      if (n > 0) sizes.push_back(n);
    }
  });
  Run(Show("udp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "?pkt_size=1316", encode::Container::kMpegTs), 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;
  reader.join();
  ::close(fd);
  ASSERT_GT(sizes.size(), 10u);
  int short_ones = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) short_ones += sizes[i] != 1316;
  EXPECT_EQ(short_ones, 0) << "of " << sizes.size() << " datagrams";
  EXPECT_LE(sizes.back(), 1316);
}

}  // namespace
}  // namespace pagereel::live
