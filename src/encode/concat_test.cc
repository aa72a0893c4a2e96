// JoinSegments with the real encoders, muxers and decoders: a film written as three segments
// of unequal length by fresh encoders and joined must hold every segment's frames exactly as
// the segment does alone, at the timestamps of a film written in one piece. Damaged or
// mismatched segments are refused by name and leave no output behind.
#include "encode/concat.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "encode/film_writer.h"
#include "encode/stream.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::encode {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 160;
constexpr int kHeight = 90;
constexpr int kFrames = 30;
constexpr Rational kFps{30, 1};

// Frame i: a gradient that moves with i, and i in binary as a row of black and white blocks.
std::vector<uint8_t> MakeFrame(int i, int width = kWidth, int height = kHeight) {
  std::vector<uint8_t> rgba(static_cast<size_t>(width) * height * 4);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = &rgba[(static_cast<size_t>(y) * width + x) * 4];
      p[0] = static_cast<uint8_t>(x * 255 / width + 8 * i);
      p[1] = static_cast<uint8_t>(y * 255 / height);
      p[2] = static_cast<uint8_t>(128 + 4 * i);
      p[3] = 255;
      const int bit = x / 16;
      if (y >= height - 16 && bit < 8) p[0] = p[1] = p[2] = (i >> bit) & 1 ? 255 : 0;
    }
  }
  return rgba;
}

// Film frames [first, first + count) through a fresh FilmWriter into `path`.
Status EncodeFrames(const fs::path& path, int first, int count, int width = kWidth,
                    int height = kHeight) {
  FilmWriterOptions options;
  PR_ASSIGN_OR_RETURN(options.film.kind, FilmKindForPath(path.string(), false));
  options.film.width = width;
  options.film.height = height;
  options.film.fps = kFps;
  options.path = path.string();
  PR_ASSIGN_OR_RETURN(auto writer, FilmWriter::Open(options));
  for (int i = first; i < first + count; ++i) {
    std::vector<uint8_t> rgba = MakeFrame(i, width, height);
    PR_RETURN_IF_ERROR(writer->Write(RgbaView{rgba.data(), width, height, width * 4}));
  }
  return writer->Finish();
}

// JoinSegments into `output`, a film of the kind its path names.
Status Join(const std::vector<SegmentFile>& segments, const std::string& output,
            const std::atomic<bool>* cancel = nullptr) {
  PR_ASSIGN_OR_RETURN(FilmKind kind, FilmKindForPath(output, false));
  return JoinSegments(segments, output, JoinOptions{kind, kFps, cancel});
}

// The top-level boxes of an MP4 or QuickTime file, in order.
std::vector<std::string> TopLevelBoxes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> boxes;
  uint8_t header[8];
  while (in.read(reinterpret_cast<char*>(header), 8)) {
    boxes.emplace_back(reinterpret_cast<char*>(header + 4), 4);
    uint64_t size = 0;
    for (int i = 0; i < 4; ++i) size = (size << 8) | header[i];
    uint64_t header_size = 8;
    if (size == 1) {  // A 64-bit size follows.
      uint8_t large[8];
      if (!in.read(reinterpret_cast<char*>(large), 8)) break;
      size = 0;
      for (uint8_t b : large) size = (size << 8) | b;
      header_size = 16;
    }
    if (size < header_size) break;  // 0: the box runs to the end of the file.
    in.seekg(static_cast<std::streamoff>(size - header_size), std::ios::cur);
  }
  return boxes;
}

std::string Bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class ConcatTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"concat"};
  const fs::path& dir_ = scratch_.path();

  // Three segments of unequal length, as a render cut into segments would give them.
  static constexpr int kStarts[] = {0, 7, 19};
  static constexpr int kCounts[] = {7, 12, 11};

  std::vector<SegmentFile> Segments(const std::string& ext) const {
    std::vector<SegmentFile> segments;
    for (int k = 0; k < 3; ++k) {
      segments.push_back(SegmentFile{(dir_ / ("seg-" + std::to_string(k) + ext)).string(),
                                     kStarts[k], kCounts[k]});
    }
    return segments;
  }

  std::vector<SegmentFile> WriteSegments(const std::string& ext) const {
    std::vector<SegmentFile> segments = Segments(ext);
    for (const SegmentFile& s : segments) {
      Status written =
          EncodeFrames(s.path, static_cast<int>(s.first_frame), static_cast<int>(s.frame_count));
      EXPECT_TRUE(written.ok()) << written.ToString();
    }
    return segments;
  }

  // The names in the scratch folder that start with a dot: partial files left behind.
  std::vector<std::string> HiddenFiles() const {
    std::vector<std::string> hidden;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      if (entry.path().filename().string().starts_with("."))
        hidden.push_back(entry.path().string());
    }
    return hidden;
  }

  // Joins three segments of `ext` films and checks the result against the segments and a
  // film written in one piece.
  void ExpectJoinedFilmIsItsSegments(const std::string& ext, const std::string& codec) {
    const fs::path whole = dir_ / ("whole" + ext);
    ASSERT_TRUE(EncodeFrames(whole, 0, kFrames).ok());
    std::vector<SegmentFile> segments = WriteSegments(ext);
    const fs::path joined = dir_ / ("film" + ext);
    Status status = Join(segments, joined.string());
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(HiddenFiles().empty());

    auto film = testing::DecodeVideo(joined.string());
    ASSERT_TRUE(film.ok()) << film.status().ToString();
    auto one_piece = testing::DecodeVideo(whole.string(), /*keep_pixels=*/false);
    ASSERT_TRUE(one_piece.ok()) << one_piece.status().ToString();
    EXPECT_EQ(film->codec, codec);
    EXPECT_EQ(film->width, kWidth);
    EXPECT_EQ(film->height, kHeight);
    EXPECT_EQ(film->rate_num * kFps.den, film->rate_den * kFps.num);
    ASSERT_EQ(film->pts_seconds.size(), static_cast<size_t>(kFrames));
    ASSERT_EQ(one_piece->pts_seconds.size(), static_cast<size_t>(kFrames));
    for (int n = 0; n < kFrames; ++n) {
      EXPECT_EQ(film->pts_seconds[n], one_piece->pts_seconds[n]) << "frame " << n;
      // Matroska and WebM count time in milliseconds.
      const bool matroska = ext == ".webm" || ext == ".mkv";
      EXPECT_NEAR(film->pts_seconds[n], n / 30.0, matroska ? 0.0005 : 1e-9) << "frame " << n;
    }
    for (const SegmentFile& s : segments) {
      auto alone = testing::DecodeVideo(s.path);
      ASSERT_TRUE(alone.ok()) << alone.status().ToString();
      ASSERT_EQ(alone->rgb.size(), static_cast<size_t>(s.frame_count));
      for (int64_t i = 0; i < s.frame_count; ++i) {
        ASSERT_TRUE(film->rgb[static_cast<size_t>(s.first_frame + i)] ==
                    alone->rgb[static_cast<size_t>(i)])
            << "film frame " << s.first_frame + i << " differs from frame " << i << " of "
            << s.path;
      }
    }
  }

  // Joining `segments` into film.mp4 fails with a message that contains each of `words`, and
  // leaves neither the film nor a partial file.
  void ExpectRefused(const std::vector<SegmentFile>& segments, StatusCode code,
                     const std::vector<std::string>& words) {
    const fs::path joined = dir_ / "film.mp4";
    Status status = Join(segments, joined.string());
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code) << status.ToString();
    for (const std::string& word : words) {
      EXPECT_NE(status.message().find(word), std::string::npos) << status.message();
    }
    EXPECT_FALSE(fs::exists(joined));
    EXPECT_TRUE(HiddenFiles().empty());
  }
};

TEST_F(ConcatTest, Mp4IsItsSegmentsFrameForFrameWithTheIndexInFront) {
  ExpectJoinedFilmIsItsSegments(".mp4", "h264");
  const std::vector<std::string> boxes = TopLevelBoxes(dir_ / "film.mp4");
  auto moov = std::find(boxes.begin(), boxes.end(), "moov");
  auto mdat = std::find(boxes.begin(), boxes.end(), "mdat");
  ASSERT_NE(moov, boxes.end());
  ASSERT_NE(mdat, boxes.end());
  EXPECT_LT(moov, mdat);
}

TEST_F(ConcatTest, MovProResIsItsSegmentsFrameForFrame) {
  ExpectJoinedFilmIsItsSegments(".mov", "prores");
  const std::vector<std::string> boxes = TopLevelBoxes(dir_ / "film.mov");
  EXPECT_LT(std::find(boxes.begin(), boxes.end(), "moov"),
            std::find(boxes.begin(), boxes.end(), "mdat"));
}

TEST_F(ConcatTest, WebmVp9IsItsSegmentsFrameForFrame) {
  ExpectJoinedFilmIsItsSegments(".webm", "vp9");
}

TEST_F(ConcatTest, MkvFfv1IsItsSegmentsFrameForFrame) {
  ExpectJoinedFilmIsItsSegments(".mkv", "ffv1");
}

TEST_F(ConcatTest, GifFromLosslessSegmentsEqualsAGifWrittenInOnePiece) {
  const fs::path whole = dir_ / "whole.gif";
  ASSERT_TRUE(EncodeFrames(whole, 0, kFrames).ok());
  // Lossless segments: FFV1 in Matroska.
  std::vector<SegmentFile> segments = WriteSegments(".mkv");
  const fs::path joined = dir_ / "film.gif";
  Status status = Join(segments, joined.string());
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(HiddenFiles().empty());

  auto film = testing::DecodeVideo(joined.string());
  auto one_piece = testing::DecodeVideo(whole.string());
  ASSERT_TRUE(film.ok()) << film.status().ToString();
  ASSERT_TRUE(one_piece.ok()) << one_piece.status().ToString();
  ASSERT_EQ(film->rgb.size(), static_cast<size_t>(kFrames));
  ASSERT_EQ(one_piece->rgb.size(), static_cast<size_t>(kFrames));
  for (int n = 0; n < kFrames; ++n) {
    EXPECT_EQ(film->pts_seconds[n], one_piece->pts_seconds[n]) << "frame " << n;
    EXPECT_TRUE(film->rgb[n] == one_piece->rgb[n]) << "frame " << n;
  }
  // The same frames through the same GIF writer: the same file.
  EXPECT_TRUE(Bytes(joined) == Bytes(whole));
}

TEST_F(ConcatTest, PngSequenceTakesTheFilmsNumbersAndReplacesAnOlderOne) {
  std::vector<SegmentFile> segments;
  for (int k = 0; k < 3; ++k) {
    const fs::path folder = dir_ / ("seg-" + std::to_string(k));
    fs::create_directories(folder);
    segments.push_back(SegmentFile{(folder / "%04d.png").string(), kStarts[k], kCounts[k]});
    ASSERT_TRUE(EncodeFrames(segments.back().path, kStarts[k], kCounts[k]).ok());
  }
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  // An older, longer sequence of the same pattern, and a file that is not one of its frames.
  std::ofstream(out / "00040.png") << "old";
  std::ofstream(out / "00003.png") << "old";
  std::ofstream(out / "notes.txt") << "keep";
  const std::string pattern = (out / "%05d.png").string();

  // A segment missing a file is refused before the output is touched.
  fs::rename(dir_ / "seg-1" / "0003.png", dir_ / "aside.png");
  Status refused = Join(segments, pattern);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("seg-1"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("0003.png"), std::string::npos) << refused.message();
  EXPECT_EQ(ExistingSequenceFiles(pattern).size(), 2u);
  EXPECT_TRUE(HiddenFiles().empty());
  fs::rename(dir_ / "aside.png", dir_ / "seg-1" / "0003.png");

  Status status = Join(segments, pattern);
  ASSERT_TRUE(status.ok()) << status.ToString();
  const std::vector<std::string> files = ExistingSequenceFiles(pattern);
  ASSERT_EQ(files.size(), static_cast<size_t>(kFrames));
  EXPECT_EQ(fs::path(files.front()).filename(), "00000.png");
  EXPECT_EQ(fs::path(files.back()).filename(), "00029.png");
  EXPECT_TRUE(fs::exists(out / "notes.txt"));
  EXPECT_TRUE(HiddenFiles().empty());
  for (const SegmentFile& s : segments) {
    for (int64_t i = 0; i < s.frame_count; ++i) {
      char own[16];
      char film[16];
      std::snprintf(own, sizeof own, "%04d.png", static_cast<int>(i));
      std::snprintf(film, sizeof film, "%05d.png", static_cast<int>(s.first_frame + i));
      EXPECT_TRUE(Bytes(fs::path(s.path).parent_path() / own) == Bytes(out / film)) << film;
    }
  }
  auto image = testing::DecodeVideo((out / "00013.png").string());
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->width, kWidth);
}

TEST_F(ConcatTest, ASegmentWithOtherFramesThanItsRecordOrCutShortIsRefused) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  const std::string film = (dir_ / "film.mp4").string();
  std::vector<SegmentFile> longer = segments;
  longer[1].frame_count = 13;
  longer[2].first_frame = 20;
  longer[2].frame_count = 10;
  Status wrong_count = Join(longer, film);
  EXPECT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.message().find("holds 12 frames"), std::string::npos)
      << wrong_count.message();

  fs::resize_file(segments[2].path, fs::file_size(segments[2].path) - 100);
  Status cut = Join(segments, film);
  EXPECT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find("seg-2.mp4"), std::string::npos) << cut.message();
  EXPECT_FALSE(fs::exists(film));
  EXPECT_TRUE(HiddenFiles().empty());
}

TEST_F(ConcatTest, AMissingSegmentIsRefusedByName) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  fs::remove(segments[1].path);
  ExpectRefused(segments, StatusCode::kNotFound, {"seg-1.mp4", "missing"});
}

TEST_F(ConcatTest, ASegmentCutInHalfIsRefusedByName) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  fs::resize_file(segments[2].path, fs::file_size(segments[2].path) / 2);
  ExpectRefused(segments, StatusCode::kInvalidArgument, {"seg-2.mp4", "cut short"});

  // WebM keeps its index at the end, but states its duration in front.
  std::vector<SegmentFile> webm = WriteSegments(".webm");
  fs::resize_file(webm[2].path, fs::file_size(webm[2].path) / 2);
  Status status = Join(webm, (dir_ / "film.webm").string());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("seg-2.webm' is cut short"), std::string::npos)
      << status.message();
  EXPECT_FALSE(fs::exists(dir_ / "film.webm"));
  EXPECT_TRUE(HiddenFiles().empty());
}

TEST_F(ConcatTest, ASegmentOfAnotherSizeIsRefusedByName) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  ASSERT_TRUE(EncodeFrames(segments[1].path, 7, 12, 96, 54).ok());
  ExpectRefused(segments, StatusCode::kInvalidArgument, {"seg-1.mp4", "96x54", "160x90"});
}

TEST_F(ConcatTest, ASegmentEncodedWithOtherSettingsIsRefusedByName) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  StreamSpec spec;
  spec.sink = Sink{Sink::Kind::kFile, segments[2].path, nullptr};
  spec.width = kWidth;
  spec.height = kHeight;
  spec.fps = kFps;
  spec.preset = "ultrafast";  // No CABAC, no B-frames: other stream headers.
  auto stream = VideoStream::Open(spec);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  auto converter = (*stream)->NewConverter();
  for (int i = 0; i < 11; ++i) {
    std::vector<uint8_t> rgba = MakeFrame(19 + i);
    auto frame = converter->Convert(RgbaView{rgba.data(), kWidth, kHeight, kWidth * 4});
    ASSERT_TRUE(frame.ok());
    ASSERT_TRUE((*stream)->Write(std::move(*frame), i).ok());
  }
  ASSERT_TRUE((*stream)->Finish().ok());
  ExpectRefused(segments, StatusCode::kInvalidArgument, {"seg-2.mp4", "other settings"});
}

TEST_F(ConcatTest, GapsOverlapsAndWrongCountsAreRefusedByName) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  std::vector<SegmentFile> gap = segments;
  gap[1].first_frame = 8;
  gap[1].frame_count = 11;
  ExpectRefused(gap, StatusCode::kInvalidArgument, {"seg-1.mp4", "film frame 7 is in no segment"});

  std::vector<SegmentFile> overlap = segments;
  overlap[2].first_frame = 18;
  overlap[2].frame_count = 12;
  ExpectRefused(overlap, StatusCode::kInvalidArgument,
                {"seg-2.mp4", "inside the segment before it"});

  std::vector<SegmentFile> miscounted = segments;
  miscounted[1].frame_count = 13;
  miscounted[2].first_frame = 20;
  miscounted[2].frame_count = 10;
  ExpectRefused(miscounted, StatusCode::kInvalidArgument, {"seg-1.mp4", "holds 12 frames"});

  // WebM states no frame count: the wrong count shows when the packets are read.
  std::vector<SegmentFile> webm = WriteSegments(".webm");
  webm[2].frame_count = 12;
  Status status = Join(webm, (dir_ / "film.webm").string());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("seg-2.webm' holds 11 frames"), std::string::npos)
      << status.message();
  EXPECT_FALSE(fs::exists(dir_ / "film.webm"));
  EXPECT_TRUE(HiddenFiles().empty());
}

TEST_F(ConcatTest, ACancelledJoinLeavesNothing) {
  std::vector<SegmentFile> segments = WriteSegments(".mp4");
  std::atomic<bool> cancel{true};
  Status status = Join(segments, (dir_ / "film.mp4").string(), &cancel);
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_FALSE(fs::exists(dir_ / "film.mp4"));
  EXPECT_TRUE(HiddenFiles().empty());
}

}  // namespace
}  // namespace pagereel::encode
