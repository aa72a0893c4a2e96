// A show's program received by real receivers on 127.0.0.1, each started by the test and
// stopped after: ffmpeg as a UDP receiver, an SRT listener, an SRT caller (pagereel
// listening), an RTMP server, and an HLS reader of pagereel's playlist.
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "live/engine.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

extern char** environ;

namespace pagereel::live {
namespace {

namespace fs = std::filesystem;

const char kPage[] =
    "data:text/html,<body style='margin:0;background:rgb(0,0,200)'><div id=b style='position:"
    "absolute;left:0;top:0;width:40px;height:40px;background:rgb(0,200,0)'></div><script>"
    "let n=0;requestAnimationFrame(function f(){n=n>6?0:n+1;b.style.left=n*40+'px';"
    "requestAnimationFrame(f)})</script></body>";

// A port nobody uses now on 127.0.0.1 (the kernel's pick, released again).
int FreePort(int type) {
  int fd = ::socket(AF_INET, type, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// An ffmpeg process, interrupted (as Ctrl-C would) and reaped by the destructor.
class Receiver {
 public:
  explicit Receiver(std::vector<std::string> args) {
    // A short probe: ffmpeg otherwise buffers 5 s of a live input before writing anything.
    args.insert(args.begin(), {"ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-probesize",
                               "65536", "-analyzeduration", "500000"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawnp(&pid_, "ffmpeg", nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~Receiver() { Stop(); }
  bool running() const { return pid_ > 0; }
  // Lets ffmpeg finish the file it writes; killed if it does not within 10 s.
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGINT);
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

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
  receiver.Stop();
  ExpectReceived(got, 90);
}

TEST_F(OutputsTest, AnSrtListenerServesAnFfmpegCaller) {
  const int port = FreePort(SOCK_DGRAM);
  const fs::path got = scratch_.path() / "srt-caller.ts";
  std::jthread caller([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Receiver receiver({"-i", "srt://127.0.0.1:" + std::to_string(port) + "?mode=caller", "-t", "2", "-c", "copy", got.string()});
    std::this_thread::sleep_for(std::chrono::seconds(4));
  });
  ShowStatus status = Run(Show("srt://127.0.0.1:" + std::to_string(port) + "?mode=listener", encode::Container::kMpegTs), 150);
  caller.join();
  EXPECT_GT(status.outputs[0].frames, 0);
  ExpectReceived(got, 40);
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
}

TEST_F(OutputsTest, HlsPlaylistIsReadable) {
  const fs::path playlist = scratch_.path() / "show.m3u8";
  ShowStatus status = Run(Show(playlist.string(), encode::Container::kHls), 150);
  EXPECT_EQ(status.outputs[0].frames, 150);
  ExpectReceived(playlist, 140);
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
  ShowStatus status = Run(show, 100);
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

}  // namespace
}  // namespace pagereel::live
