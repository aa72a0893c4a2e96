// VideoStream with the real libav* encoders and muxers: caller timestamps, every sink kind,
// a growing file that survives its writer's kill -9. What was written is decoded and checked.
#include "encode/stream.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::encode {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 64;
constexpr int kHeight = 48;

// Frame i: a flat grey level that encodes i.
std::vector<uint8_t> Grey(int i) {
  std::vector<uint8_t> rgba(static_cast<size_t>(kWidth) * kHeight * 4, 255);
  for (size_t p = 0; p < rgba.size(); p += 4) rgba[p] = rgba[p + 1] = rgba[p + 2] = static_cast<uint8_t>(10 * i + 20);
  return rgba;
}

StreamSpec Spec(Container container, Sink sink) {
  StreamSpec spec;
  spec.container = container;
  spec.sink = std::move(sink);
  spec.width = kWidth;
  spec.height = kHeight;
  spec.fps = Rational{25, 1};
  spec.latency = Latency::kLive;
  return spec;
}

Status WriteFrames(VideoStream& stream, const std::vector<int64_t>& pts) {
  auto converter = stream.NewConverter();
  for (size_t i = 0; i < pts.size(); ++i) {
    std::vector<uint8_t> rgba = Grey(static_cast<int>(i));
    PR_ASSIGN_OR_RETURN(auto frame, converter->Convert(RgbaView{rgba.data(), kWidth, kHeight, kWidth * 4}));
    PR_RETURN_IF_ERROR(stream.Write(std::move(frame), pts[i]));
  }
  return Status::Ok();
}

class StreamTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"stream"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(StreamTest, MemorySinkGetsMpegTsWithTheCallersTimestamps) {
  std::string bytes;
  Sink sink{Sink::Kind::kMemory, "memory", [&](std::span<const uint8_t> data) {
              bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
              return Status::Ok();
            }};
  auto stream = VideoStream::Open(Spec(Container::kMpegTs, sink));
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  // Frames 3 and 4 were dropped: the gap must stay a gap.
  ASSERT_TRUE(WriteFrames(**stream, {0, 1, 2, 5, 6, 7}).ok());
  ASSERT_TRUE((*stream)->Finish().ok());
  EXPECT_EQ((*stream)->bytes_written(), static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(bytes.size() % 188, 0u);  // Whole transport packets.

  const fs::path file = dir_ / "memory.ts";
  std::ofstream(file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  auto video = testing::DecodeVideo(file.string());
  ASSERT_TRUE(video.ok()) << video.status().message();
  ASSERT_EQ(video->pts_seconds.size(), 6u);
  const std::vector<int64_t> expected = {0, 1, 2, 5, 6, 7};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(video->pts_seconds[i] - video->pts_seconds[0], expected[i] * 0.04, 1e-4) << i;
  }
}

TEST_F(StreamTest, AFailingMemoryWriterStopsTheStreamWithItsError) {
  Sink sink{Sink::Kind::kMemory, "memory",
            [](std::span<const uint8_t>) { return UnavailableError("the peer left"); }};
  auto stream = VideoStream::Open(Spec(Container::kMpegTs, sink));
  Status status = stream.ok() ? WriteFrames(**stream, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) : stream.status();
  if (status.ok()) status = (*stream)->Finish();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("the peer left"), std::string::npos) << status.message();
}

TEST_F(StreamTest, AGrowingFragmentedMp4IsPlayableAfterItsWriterIsKilled) {
  const fs::path file = dir_ / "live.mp4";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StreamSpec spec = Spec(Container::kFragmentedMp4, Sink{Sink::Kind::kGrowingFile, file.string(), nullptr});
    spec.gop_frames = 10;
    auto stream = VideoStream::Open(spec);
    if (!stream.ok()) ::_exit(3);
    std::vector<int64_t> pts;
    for (int i = 0; i < 35; ++i) pts.push_back(i);
    if (!WriteFrames(**stream, pts).ok()) ::_exit(4);
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  auto video = testing::DecodeVideo(file.string());
  ASSERT_TRUE(video.ok()) << video.status().message();
  // Fragments close at keyframes (every 10 frames): at least the first three are whole.
  ASSERT_GE(video->pts_seconds.size(), 30u);
  for (size_t i = 0; i < video->pts_seconds.size(); ++i) {
    EXPECT_NEAR(video->pts_seconds[i], static_cast<double>(i) * 0.04, 1e-4) << i;
  }
}

TEST_F(StreamTest, Ffv1InMatroskaKeepsEveryPixel) {
  const fs::path file = dir_ / "lossless.mkv";
  StreamSpec spec = Spec(Container::kMatroska, Sink{Sink::Kind::kGrowingFile, file.string(), nullptr});
  spec.codec = Codec::kFfv1;
  auto stream = VideoStream::Open(spec);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_TRUE(WriteFrames(**stream, {0, 1, 2}).ok());
  ASSERT_TRUE((*stream)->Finish().ok());
  auto video = testing::DecodeVideo(file.string());
  ASSERT_TRUE(video.ok()) << video.status().message();
  EXPECT_EQ(video->codec, "ffv1");
  ASSERT_EQ(video->rgb.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const uint8_t level = static_cast<uint8_t>(10 * i + 20);
    for (uint8_t v : video->rgb[static_cast<size_t>(i)]) ASSERT_EQ(v, level) << "frame " << i;
  }
}

TEST_F(StreamTest, HlsWritesAPlaylistAndSegments) {
  const fs::path playlist = dir_ / "show.m3u8";
  StreamSpec spec = Spec(Container::kHls, Sink{Sink::Kind::kGrowingFile, playlist.string(), nullptr});
  spec.gop_frames = 25;
  auto stream = VideoStream::Open(spec);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  std::vector<int64_t> pts;
  for (int i = 0; i < 125; ++i) pts.push_back(i);
  ASSERT_TRUE(WriteFrames(**stream, pts).ok());
  ASSERT_TRUE((*stream)->Finish().ok());
  std::ifstream in(playlist);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#EXTM3U"), std::string::npos);
  EXPECT_NE(text.find(".ts"), std::string::npos);
  auto video = testing::DecodeVideo(playlist.string(), /*keep_pixels=*/false);
  ASSERT_TRUE(video.ok()) << video.status().message();
  EXPECT_EQ(video->pts_seconds.size(), 125u);
}

TEST_F(StreamTest, BadCombinationsAreRefusedByName) {
  StreamSpec plain = Spec(Container::kMp4, Sink{Sink::Kind::kUrl, "udp://127.0.0.1:9", nullptr});
  auto a = VideoStream::Open(plain);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("fragmented MP4"), std::string::npos) << a.status().message();

  StreamSpec prores_ts = Spec(Container::kMpegTs, Sink{Sink::Kind::kGrowingFile, (dir_ / "x.ts").string(), nullptr});
  prores_ts.codec = Codec::kProRes;
  auto b = VideoStream::Open(prores_ts);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("MPEG-TS cannot hold ProRes"), std::string::npos) << b.status().message();

  StreamSpec alpha = Spec(Container::kMpegTs, Sink{Sink::Kind::kGrowingFile, (dir_ / "y.ts").string(), nullptr});
  alpha.alpha = true;
  auto c = VideoStream::Open(alpha);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("alpha"), std::string::npos) << c.status().message();
}

TEST_F(StreamTest, TimestampsThatDoNotIncreaseAreRefused) {
  auto stream = VideoStream::Open(
      Spec(Container::kMpegTs, Sink{Sink::Kind::kGrowingFile, (dir_ / "z.ts").string(), nullptr}));
  ASSERT_TRUE(stream.ok());
  EXPECT_FALSE(WriteFrames(**stream, {0, 1, 1}).ok());
}

TEST_F(StreamTest, AConnectionThatIsStoppedGivesUp) {
  // SRT caller towards a port where nobody listens; should_stop ends the wait.
  StreamSpec spec = Spec(Container::kMpegTs, Sink{Sink::Kind::kUrl, "srt://127.0.0.1:9?mode=caller", nullptr});
  spec.should_stop = [] { return true; };
  auto stream = VideoStream::Open(spec);
  EXPECT_FALSE(stream.ok());
}

}  // namespace
}  // namespace pagereel::encode
