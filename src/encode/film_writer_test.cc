// Writes synthetic frames and screenshots with the real libav* encoders and decodes what was
// written.
#include "encode/film_writer.h"

extern "C" {
#include <libavutil/base64.h>
}
#include <turbojpeg.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::encode {
namespace {

namespace fs = std::filesystem;

class FilmWriterTest : public ::testing::Test {
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

  static FilmWriterOptions Options(const std::string& path, bool alpha = false, int w = 64,
                                   int h = 48) {
    FilmWriterOptions options;
    options.film.kind = FilmKindForPath(path, alpha).value();
    options.film.width = w;
    options.film.height = h;
    options.film.fps = Rational{30, 1};
    options.film.alpha = alpha;
    options.path = path;
    return options;
  }

  // Writes `frames` frames and finishes; `owner`, when given, keeps the finished writer.
  static Status WriteFrames(const FilmWriterOptions& options, int frames,
                            std::unique_ptr<FilmWriter>* owner = nullptr) {
    PR_ASSIGN_OR_RETURN(auto writer, FilmWriter::Open(options));
    const int w = options.film.width;
    const int h = options.film.height;
    for (int i = 0; i < frames; ++i) {
      std::vector<uint8_t> rgba = MakeFrame(w, h, i);
      PR_RETURN_IF_ERROR(writer->Write(RgbaView{rgba.data(), w, h, w * 4}));
    }
    PR_RETURN_IF_ERROR(writer->Finish());
    if (owner != nullptr) *owner = std::move(writer);
    return Status::Ok();
  }

  static Status WriteFilm(const std::string& path, int frames, bool alpha = false, int w = 64,
                          int h = 48) {
    return WriteFrames(Options(path, alpha, w, h), frames);
  }

  static std::string Bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // `bytes` as the browser sends a screenshot: base64 text, NUL-terminated.
  static std::string Base64(const std::string& bytes) {
    std::string text(AV_BASE64_SIZE(bytes.size()), '\0');
    av_base64_encode(text.data(), static_cast<int>(text.size()),
                     reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
    text.resize(std::strlen(text.c_str()));
    return text;
  }

  // Frame `i` as a JPEG (quality 90, 4:2:0), as the browser's screenshots come.
  static std::string Jpeg(int w, int h, int i) {
    std::vector<uint8_t> rgba = MakeFrame(w, h, i);
    tjhandle tj = tjInitCompress();
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    tjCompress2(tj, rgba.data(), w, w * 4, h, TJPF_RGBA, &jpeg, &size, TJSAMP_420, 90, 0);
    std::string out(reinterpret_cast<char*>(jpeg), size);
    tjFree(jpeg);
    tjDestroy(tj);
    return out;
  }

};

TEST_F(FilmWriterTest, Mp4IsH264Bt709WithExactTimestamps) {
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

TEST_F(FilmWriterTest, MovWithAlphaIsProRes4444) {
  std::string path = (dir_ / "out.mov").string();
  ASSERT_TRUE(WriteFilm(path, 3, /*alpha=*/true).ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path, false);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  EXPECT_EQ(video->codec, "prores");
  EXPECT_EQ(video->pixel_format.rfind("yuva444p", 0), 0u) << video->pixel_format;
  EXPECT_TRUE(video->has_alpha);
  EXPECT_EQ(video->pts_seconds.size(), 3u);
}

TEST_F(FilmWriterTest, WebmWithAlphaIsVp9) {
  std::string path = (dir_ / "out.webm").string();
  ASSERT_TRUE(WriteFilm(path, 3, /*alpha=*/true).ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path, false);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  EXPECT_EQ(video->codec, "vp9");
  EXPECT_TRUE(video->has_alpha);
  EXPECT_EQ(video->pts_seconds.size(), 3u);
}

TEST_F(FilmWriterTest, GifUsesAPaletteFromTheFilm) {
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

TEST_F(FilmWriterTest, PngSequenceNumbersFramesFromZero) {
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

TEST_F(FilmWriterTest, ASequenceReplacesAnOlderOneWholeOrNotAtAll) {
  std::string pattern = (dir_ / "f%03d.png").string();
  ASSERT_TRUE(WriteFilm(pattern, 5).ok());
  ASSERT_EQ(ExistingSequenceFiles(pattern).size(), 5u);
  const auto old_size = fs::file_size(dir_ / "f000.png");

  // Abandoned part way: the older sequence is untouched and no partial file is left.
  {
    auto writer = FilmWriter::Open(Options(pattern));
    ASSERT_TRUE(writer.ok());
    std::vector<uint8_t> rgba = MakeFrame(64, 48, 7);
    ASSERT_TRUE((*writer)->Write(RgbaView{rgba.data(), 64, 48, 64 * 4}).ok());
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

TEST_F(FilmWriterTest, PartialFilesOfRendersThatDiedAreRemoved) {
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

TEST_F(FilmWriterTest, AbandonedOutputLeavesNothing) {
  {
    auto writer = FilmWriter::Open(Options((dir_ / "out.mp4").string()));
    ASSERT_TRUE(writer.ok());
    std::vector<uint8_t> rgba = MakeFrame(64, 48, 0);
    ASSERT_TRUE((*writer)->Write(RgbaView{rgba.data(), 64, 48, 64 * 4}).ok());
  }  // Destroyed without Finish(): as on Ctrl-C or an error.
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(FilmWriterTest, BadOutputsAreRejectedByName) {
  auto expect_error = [](const std::string& path, bool alpha, const std::string& words) {
    Result<FilmKind> spec = FilmKindForPath(path, alpha);
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
  EXPECT_EQ(FilmKindForPath((dir_ / "x.MOV").string(), true).value(), FilmKind::kMov);
}

// Only the lossy video codecs below the top quality take JPEG screenshots; everything
// that promises the page's pixels (or builds a palette, or is a mastering codec) gets PNG.
TEST(ScreenshotFormatTest, ExactUnlessTheCodecLosesMoreAnyway) {
  auto format = [](FilmKind kind, int quality, bool alpha) {
    FilmSpec film;
    film.kind = kind;
    film.quality = quality;
    film.alpha = alpha;
    return ScreenshotFormatFor(film);
  };
  EXPECT_EQ(format(FilmKind::kMp4, 90, false), ImageFormat::kJpeg);
  EXPECT_EQ(format(FilmKind::kWebm, 99, false), ImageFormat::kJpeg);
  EXPECT_EQ(format(FilmKind::kMp4, 100, false), ImageFormat::kPng);
  EXPECT_EQ(format(FilmKind::kWebm, 50, true), ImageFormat::kPng);
  for (FilmKind kind : {FilmKind::kMkv, FilmKind::kMov, FilmKind::kGif, FilmKind::kPngSequence,
                        FilmKind::kJpegSequence}) {
    EXPECT_EQ(format(kind, 50, false), ImageFormat::kPng) << FilmKindName(kind);
  }
}

TEST_F(FilmWriterTest, OddSizeForH264IsAClearError) {
  Status s = WriteFilm((dir_ / "odd.mp4").string(), 1, false, 63, 48);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("even width and height"), std::string_view::npos) << s.ToString();
  EXPECT_TRUE(fs::is_empty(dir_));
}

// A clip is written in memory; its bytes are those of the same film written to a file (the
// muxers see a seekable output, so MP4 keeps its faststart index and WebM its cues). Matroska
// and WebM files carry a random segment UID, so those are compared by size and frames.
TEST_F(FilmWriterTest, AFilmInMemoryIsTheSameFilmAsInAFile) {
  for (const char* name : {"same.mp4", "same.mov", "same.gif", "same.webm", "same.mkv"}) {
    const std::string path = (dir_ / name).string();
    ASSERT_TRUE(WriteFilm(path, 8).ok()) << name;
    FilmWriterOptions options = Options(path);
    options.to = WriteTo::kMemory;
    options.path.clear();
    options.scratch_dir = dir_.string();
    std::unique_ptr<FilmWriter> writer;
    ASSERT_TRUE(WriteFrames(options, 8, &writer).ok()) << name;
    const std::string bytes = writer->TakeBytes();
    ASSERT_EQ(bytes.size(), fs::file_size(path)) << name;
    const FilmKind kind = options.film.kind;
    if (kind != FilmKind::kWebm && kind != FilmKind::kMkv) {
      EXPECT_TRUE(bytes == Bytes(path)) << name;
      continue;
    }
    const fs::path copy = dir_ / (std::string("memory-") + name);
    std::ofstream(copy, std::ios::binary) << bytes;
    Result<testing::DecodedVideo> from_file = testing::DecodeVideo(path);
    Result<testing::DecodedVideo> from_memory = testing::DecodeVideo(copy.string());
    ASSERT_TRUE(from_file.ok() && from_memory.ok()) << name;
    ASSERT_EQ(from_memory->rgb.size(), 8u) << name;
    EXPECT_TRUE(from_memory->rgb == from_file->rgb) << name;
    EXPECT_TRUE(from_memory->pts_seconds == from_file->pts_seconds) << name;
    fs::remove(copy);
  }
  // Nothing was left in the scratch folder by the GIF's frames.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 5);
}

TEST_F(FilmWriterTest, ASequenceCannotBeWrittenToMemory) {
  FilmWriterOptions options = Options((dir_ / "f%03d.png").string());
  options.to = WriteTo::kMemory;
  Result<std::unique_ptr<FilmWriter>> writer = FilmWriter::Open(options);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), StatusCode::kInvalidArgument);
}

// JPEG screenshots of an H.264 film become frames from their own YCbCr planes; the film
// shows what the JPEG shows, within a level or two of x264's rounding at this quality.
TEST_F(FilmWriterTest, JpegScreenshotsBecomeTheFilmsFrames) {
  const std::string path = (dir_ / "shots.mp4").string();
  FilmWriterOptions options = Options(path);
  options.film.quality = 100;
  auto writer = FilmWriter::Open(options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (int i = 0; i < 4; ++i) {
    const std::string text = Base64(Jpeg(64, 48, i));
    ASSERT_TRUE((*writer)->Write(Screenshot{ImageFormat::kJpeg, text.c_str(), text.size()}).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_EQ((*writer)->frames(), 4);
  EXPECT_GT((*writer)->decode_time().count(), 0);
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->rgb.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(video->rgb[i][(8 * 64 + 8) * 3], 20 * i + 20, 4) << "frame " << i;
    EXPECT_NEAR(video->rgb[i][(8 * 64 + 56) * 3], 255, 6) << "frame " << i;
  }
}

// A PNG screenshot into a lossless film keeps every pixel.
TEST_F(FilmWriterTest, PngScreenshotsIntoFfv1KeepEveryPixel) {
  const std::string pattern = (dir_ / "png%d.png").string();
  ASSERT_TRUE(WriteFilm(pattern, 1, /*alpha=*/true).ok());
  const std::string text = Base64(Bytes(dir_ / "png0.png"));
  const std::string path = (dir_ / "shots.mkv").string();
  auto writer = FilmWriter::Open(Options(path));
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Write(Screenshot{ImageFormat::kPng, text.c_str(), text.size()}).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  Result<testing::DecodedVideo> video = testing::DecodeVideo(path);
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->rgb.size(), 1u);
  const std::vector<uint8_t> rgba = MakeFrame(64, 48, 0);
  for (int p = 0; p < 64 * 48; ++p) {
    ASSERT_EQ(video->rgb[0][p * 3], rgba[p * 4]) << "pixel " << p;
    ASSERT_EQ(video->rgb[0][p * 3 + 1], rgba[p * 4 + 1]) << "pixel " << p;
    ASSERT_EQ(video->rgb[0][p * 3 + 2], rgba[p * 4 + 2]) << "pixel " << p;
  }
}

TEST_F(FilmWriterTest, AScreenshotOfAnotherSizeOrCorruptIsRefused) {
  auto writer = FilmWriter::Open(Options((dir_ / "sized.mp4").string()));
  ASSERT_TRUE(writer.ok());
  const std::string small = Base64(Jpeg(32, 48, 0));
  Status wrong = (*writer)->Write(Screenshot{ImageFormat::kJpeg, small.c_str(), small.size()});
  EXPECT_FALSE(wrong.ok());
  const std::string garbage = Base64("not an image at all");
  Status corrupt = (*writer)->Write(Screenshot{ImageFormat::kPng, garbage.c_str(), garbage.size()});
  EXPECT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.message().find("PNG"), std::string_view::npos) << corrupt.ToString();
  EXPECT_EQ((*writer)->frames(), 0);
}

}  // namespace
}  // namespace pagereel::encode
