// Encodes synthetic frames with the real libav* encoders and decodes what was written.
#include "encode/encoder.h"

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

class EncoderTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"encode"};
  const fs::path& dir_ = scratch_.path();

  // Frame i: left half a grey level that encodes i, right half pure red, half-transparent
  // bottom rows.
  static std::vector<uint8_t> MakeFrame(int w, int h, int i) {
    std::vector<uint8_t> rgba(static_cast<size_t>(w) * h * 4);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        uint8_t* p = &rgba[(static_cast<size_t>(y) * w + x) * 4];
        if (x < w / 2) {
          p[0] = p[1] = p[2] = static_cast<uint8_t>(20 * i + 20);
        } else {
          p[0] = 255;
          p[1] = 0;
          p[2] = 0;
        }
        p[3] = y < h / 2 ? 255 : 128;
      }
    }
    return rgba;
  }

  Status WriteFilm(const std::string& path, int frames, bool alpha = false, int w = 64, int h = 48) {
    EncoderOptions options;
    options.path = path;
    options.width = w;
    options.height = h;
    options.fps = Rational{30, 1};
    options.alpha = alpha;
    PR_ASSIGN_OR_RETURN(auto encoder, Encoder::Open(options));
    for (int i = 0; i < frames; ++i) {
      std::vector<uint8_t> rgba = MakeFrame(w, h, i);
      PR_RETURN_IF_ERROR(encoder->Write(RgbaView{rgba.data(), w, h, w * 4}));
    }
    return encoder->Finish();
  }

};

TEST_F(EncoderTest, Mp4IsH264Bt709WithExactTimestamps) {
  std::string path = (dir_ / "out.mp4").string();
  ASSERT_TRUE(WriteFilm(path, 10).ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  EXPECT_EQ(video->codec, "h264");
  EXPECT_EQ(video->pixel_format, "yuv420p");
  EXPECT_EQ(video->color_primaries, "bt709");
  EXPECT_EQ(video->color_space, "bt709");
  EXPECT_EQ(video->width, 64);
  ASSERT_EQ(video->pts_seconds.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(video->pts_seconds[i], i / 30.0, 1e-6);
  // Pixels survive: grey level of the left half, red on the right.
  for (int i = 0; i < 10; ++i) {
    const uint8_t* left = &video->rgb[i][(24 * 64 + 8) * 3];
    const uint8_t* right = &video->rgb[i][(24 * 64 + 56) * 3];
    EXPECT_NEAR(left[0], 20 * i + 20, 4) << "frame " << i;
    EXPECT_NEAR(right[0], 255, 6);
    EXPECT_NEAR(right[1], 0, 6);
  }
  // No temporary file is left beside the film.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(EncoderTest, MovWithAlphaIsProRes4444) {
  std::string path = (dir_ / "out.mov").string();
  ASSERT_TRUE(WriteFilm(path, 3, /*alpha=*/true).ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path, false);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  EXPECT_EQ(video->codec, "prores");
  EXPECT_EQ(video->pixel_format.rfind("yuva444p", 0), 0u) << video->pixel_format;
  EXPECT_TRUE(video->has_alpha);
  EXPECT_EQ(video->pts_seconds.size(), 3u);
}

TEST_F(EncoderTest, WebmWithAlphaIsVp9) {
  std::string path = (dir_ / "out.webm").string();
  ASSERT_TRUE(WriteFilm(path, 3, /*alpha=*/true).ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path, false);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  EXPECT_EQ(video->codec, "vp9");
  EXPECT_TRUE(video->has_alpha);
  EXPECT_EQ(video->pts_seconds.size(), 3u);
}

TEST_F(EncoderTest, GifUsesAPaletteFromTheFilm) {
  std::string path = (dir_ / "out.gif").string();
  ASSERT_TRUE(WriteFilm(path, 6).ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  EXPECT_EQ(video->codec, "gif");
  ASSERT_EQ(video->rgb.size(), 6u);
  // The film's own colours survive exactly enough: six greys and a pure red, all in the
  // palette (a fixed web palette would not hold grey 120).
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(video->rgb[i][(24 * 64 + 8) * 3], 20 * i + 20, 2) << "frame " << i;
    EXPECT_NEAR(video->rgb[i][(24 * 64 + 56) * 3], 255, 2);
  }
  // Only the GIF is left: no frames file, no partial file.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(EncoderTest, PngSequenceNumbersFramesFromZero) {
  std::string pattern = (dir_ / "f%03d.png").string();
  ASSERT_TRUE(WriteFilm(pattern, 3, /*alpha=*/true).ok());
  EXPECT_TRUE(fs::exists(dir_ / "f000.png"));
  EXPECT_TRUE(fs::exists(dir_ / "f002.png"));
  EXPECT_FALSE(fs::exists(dir_ / "f003.png"));
  Result<testing::DecodedVideo> image = testing::DecodeVideo((dir_ / "f002.png").string());
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->pixel_format, "rgba");
  EXPECT_EQ(image->rgb[0][(8 * 64 + 8) * 3], 60);  // Lossless: exactly 20 * 2 + 20.
}

TEST_F(EncoderTest, ASequenceReplacesAnOlderOneWholeOrNotAtAll) {
  std::string pattern = (dir_ / "f%03d.png").string();
  ASSERT_TRUE(WriteFilm(pattern, 5).ok());
  ASSERT_EQ(ExistingSequenceFiles(pattern).size(), 5u);
  const auto old_size = fs::file_size(dir_ / "f000.png");

  // Abandoned part way: the older sequence is untouched and no partial file is left.
  {
    EncoderOptions options;
    options.path = pattern;
    options.width = 64;
    options.height = 48;
    auto encoder = Encoder::Open(options);
    ASSERT_TRUE(encoder.ok());
    std::vector<uint8_t> rgba = MakeFrame(64, 48, 7);
    ASSERT_TRUE((*encoder)->Write(RgbaView{rgba.data(), 64, 48, 64 * 4}).ok());
  }
  EXPECT_EQ(ExistingSequenceFiles(pattern).size(), 5u);
  EXPECT_EQ(fs::file_size(dir_ / "f000.png"), old_size);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 5);

  // Finished with fewer frames: exactly the new sequence is left.
  ASSERT_TRUE(WriteFilm(pattern, 3, /*alpha=*/true).ok());
  std::vector<std::string> now = ExistingSequenceFiles(pattern);
  ASSERT_EQ(now.size(), 3u);
  EXPECT_EQ(fs::path(now.back()).filename(), "f002.png");
  Result<testing::DecodedVideo> image = testing::DecodeVideo((dir_ / "f000.png").string());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->pixel_format, "rgba");  // The new one, written with alpha.
}

TEST_F(EncoderTest, PartialFilesOfRendersThatDiedAreRemoved) {
  // A process that has exited: its partial files can only be leftovers.
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const std::string dead = std::to_string(child);
  for (const std::string& name : std::vector<std::string>{
           ".out.partial-" + dead + ".mp4", ".out.partial-" + dead + ".gif.frames",
           ".f001.partial-" + dead + ".png", ".other.partial-" + dead + ".mp4",
           ".out.partial-1.mp4"}) {
    std::ofstream(dir_ / name) << "x";
  }
  ASSERT_TRUE(WriteFilm((dir_ / "out.mp4").string(), 2).ok());
  EXPECT_FALSE(fs::exists(dir_ / (".out.partial-" + dead + ".mp4")));
  EXPECT_TRUE(fs::exists(dir_ / (".out.partial-" + dead + ".gif.frames")));  // out.gif's.
  EXPECT_TRUE(fs::exists(dir_ / (".f001.partial-" + dead + ".png")));   // Another output's.
  EXPECT_TRUE(fs::exists(dir_ / (".other.partial-" + dead + ".mp4")));  // Another output's.
  EXPECT_TRUE(fs::exists(dir_ / ".out.partial-1.mp4"));  // Process 1 is alive.
  ASSERT_TRUE(WriteFilm((dir_ / "f%03d.png").string(), 2).ok());
  EXPECT_FALSE(fs::exists(dir_ / (".f001.partial-" + dead + ".png")));
  ASSERT_TRUE(WriteFilm((dir_ / "out.gif").string(), 2).ok());
  EXPECT_FALSE(fs::exists(dir_ / (".out.partial-" + dead + ".gif.frames")));
}

TEST_F(EncoderTest, AbandonedOutputLeavesNothing) {
  {
    EncoderOptions options;
    options.path = (dir_ / "out.mp4").string();
    options.width = 64;
    options.height = 48;
    auto encoder = Encoder::Open(options);
    ASSERT_TRUE(encoder.ok());
    std::vector<uint8_t> rgba = MakeFrame(64, 48, 0);
    ASSERT_TRUE((*encoder)->Write(RgbaView{rgba.data(), 64, 48, 64 * 4}).ok());
  }  // Destroyed without Finish(): as on Ctrl-C or an error.
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(EncoderTest, BadOutputsAreRejectedByName) {
  auto expect_error = [](const std::string& path, bool alpha, const std::string& words) {
    Result<OutputSpec> spec = InspectOutputPath(path, alpha);
    ASSERT_FALSE(spec.ok()) << path;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << path;
    EXPECT_NE(spec.status().message().find(words), std::string_view::npos)
        << spec.status().message();
  };
  expect_error((dir_ / "out.avi").string(), false, ".mp4 (H.264)");
  expect_error((dir_ / "out.mp4").string(), true, "--alpha");
  expect_error((dir_ / "frames/%05d.jpg").string(), true, "--alpha");
  expect_error((dir_ / "missing/out.mp4").string(), false, "does not exist");
  expect_error((dir_ / "f%d%d.png").string(), false, "exactly one");
  EXPECT_TRUE(InspectOutputPath((dir_ / "x.MOV").string(), true).ok());
}

TEST_F(EncoderTest, OddSizeForH264IsAClearError) {
  Status s = WriteFilm((dir_ / "odd.mp4").string(), 1, false, 63, 48);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("even width and height"), std::string_view::npos) << s.ToString();
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace pagereel::encode
