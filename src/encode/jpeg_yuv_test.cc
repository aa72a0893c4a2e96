// JpegToYuv420 against the exact path it stands in for: the JPEG decoded to RGBA as capture
// decodes screenshots, then converted as the film converter converts RGBA. Real JPEGs from
// libjpeg-turbo, in Chromium's 4:2:0 and the other subsamplings; corrupt ones refused.
#include "encode/jpeg_yuv.h"

#include <turbojpeg.h>

extern "C" {
#include <libswscale/swscale.h>
}

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "encode/stream.h"
#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::encode {
namespace {

// A page as a screenshot shows it, RGBA: a banner of saturated colours sweeping through the
// hues, swatches of pure primaries, "text" (one- and two-pixel strokes) in black on white,
// white on saturated blue and red on white, a soft gradient, a photo-like noisy patch.
std::vector<uint8_t> PageLike(int width, int height) {
  std::vector<uint8_t> rgba(static_cast<size_t>(width) * height * 4);
  uint32_t noise = 12345;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      int r = 0;
      int g = 0;
      int b = 0;
      const int band = y * 8 / height;
      if (band == 0) {
        // Hue sweep at full saturation, as a CSS linear-gradient(90deg, red, lime, blue ...).
        const int h6 = x * 6 * 256 / width;
        const int f = h6 & 255;
        const int up = f;
        const int down = 255 - f;
        static constexpr int kSector[6][3] = {{0, 1, 2}, {3, 0, 2}, {2, 0, 1},
                                              {2, 3, 0}, {1, 2, 0}, {0, 2, 3}};
        const int* s = kSector[(h6 >> 8) % 6];
        auto level = [&](int code) {
          return code == 0 ? 255 : code == 1 ? up : code == 2 ? 0 : down;
        };
        r = level(s[0]);
        g = level(s[1]);
        b = level(s[2]);
      } else if (band == 1) {
        static constexpr int kSwatch[8][3] = {{255, 0, 0},     {0, 255, 0},   {0, 0, 255},
                                              {255, 255, 0},   {255, 0, 255}, {0, 255, 255},
                                              {255, 255, 255}, {0, 0, 0}};
        const int* c = kSwatch[(x * 8 / width) % 8];
        r = c[0];
        g = c[1];
        b = c[2];
      } else if (band <= 4) {
        // Glyph-like strokes: stems, bars and diagonals in 7x11 cells.
        const int cx = x % 7;
        const int cy = y % 11;
        const int glyph = (x / 7 * 31 + y / 11 * 17) % 5;
        const bool ink =
            cy < 9 && ((glyph == 0 && cx == 1) || (glyph == 1 && (cy == 0 || cy == 8) && cx < 5) ||
                       (glyph == 2 && cx == cy / 2) || (glyph == 3 && (cx == 0 || cx == 4)) ||
                       (glyph == 4 && (cx == 2 || cx == 3)));
        const int column = x * 3 / width;
        if (band == 2 || column == 0) {
          r = g = b = ink ? 0 : 255;
        } else if (band == 3 || column == 1) {
          r = ink ? 255 : 18;
          g = ink ? 255 : 52;
          b = ink ? 255 : 214;
        } else {
          r = ink ? 220 : 255;
          g = ink ? 20 : 255;
          b = ink ? 30 : 255;
        }
      } else if (band <= 6) {
        r = 40 + x * 180 / width;
        g = 200 - y * 120 / height;
        b = 90 + (x + y) * 100 / (width + height);
      } else {
        noise = noise * 1664525 + 1013904223;
        r = 120 + x * 60 / width + static_cast<int>(noise >> 27);
        g = 90 + static_cast<int>((noise >> 19) & 31);
        b = 60 + y % 40;
      }
      uint8_t* p = &rgba[(static_cast<size_t>(y) * width + x) * 4];
      p[0] = static_cast<uint8_t>(r);
      p[1] = static_cast<uint8_t>(g);
      p[2] = static_cast<uint8_t>(b);
      p[3] = 255;
    }
  }
  return rgba;
}

std::vector<uint8_t> EncodeJpeg(const std::vector<uint8_t>& rgba, int width, int height,
                                int quality, int subsamp) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj.get(), rgba.data(), width, width * 4, height, TJPF_RGBA, &jpeg, &size,
                        subsamp, quality, 0),
            0)
      << tjGetErrorStr2(tj.get());
  std::vector<uint8_t> out(jpeg, jpeg + size);
  tjFree(jpeg);
  return out;
}

struct Frame {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> planes[3];

  explicit Frame(int w, int h) : width(w), height(h) {
    planes[0].resize(static_cast<size_t>(w) * h);
    planes[1].resize(static_cast<size_t>(w / 2) * (h / 2));
    planes[2].resize(static_cast<size_t>(w / 2) * (h / 2));
  }
  Yuv420Planes view() {
    Yuv420Planes v;
    for (int i = 0; i < 3; ++i) {
      v.data[i] = planes[i].data();
      v.stride[i] = i == 0 ? width : width / 2;
    }
    return v;
  }
};

// The exact path. The decode is encode::DecodeJpeg's (fast DCT, fast upsampling); the
// conversion is the film converter's in stream.cc (SWS_BILINEAR | SWS_ACCURATE_RND, BT.709,
// full-range RGB to limited-range YUV).
Frame ExactPath(const std::vector<uint8_t>& jpeg, int width, int height) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  std::vector<uint8_t> rgba(static_cast<size_t>(width) * height * 4);
  EXPECT_EQ(tjDecompress2(tj.get(), jpeg.data(), jpeg.size(), rgba.data(), width, width * 4, height,
                          TJPF_RGBA, TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE),
            0);
  std::unique_ptr<SwsContext, void (*)(SwsContext*)> sws(
      sws_getContext(width, height, AV_PIX_FMT_RGBA, width, height, AV_PIX_FMT_YUV420P,
                     SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr),
      sws_freeContext);
  sws_setColorspaceDetails(sws.get(), sws_getCoefficients(SWS_CS_ITU709), 1,
                           sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16, 1 << 16);
  Frame out(width, height);
  Yuv420Planes v = out.view();
  const uint8_t* src[1] = {rgba.data()};
  int src_stride[1] = {width * 4};
  sws_scale(sws.get(), src, src_stride, 0, height, v.data, v.stride);
  return out;
}

double Psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double squares = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    squares += d * d;
  }
  if (squares == 0) return 99;
  return 10 * std::log10(255.0 * 255.0 * static_cast<double>(a.size()) / squares);
}

const char* SubsampName(int subsamp) {
  switch (subsamp) {
    case TJSAMP_444:
      return "4:4:4";
    case TJSAMP_422:
      return "4:2:2";
    case TJSAMP_420:
      return "4:2:0";
    case TJSAMP_GRAY:
      return "grey";
    case TJSAMP_440:
      return "4:4:0";
    case TJSAMP_411:
      return "4:1:1";
  }
  return "?";
}

// Converts through JpegToYuv420 and checks each plane against the exact path.
void ExpectMatchesExactPath(int width, int height, int quality, int subsamp) {
  SCOPED_TRACE(std::to_string(width) + "x" + std::to_string(height) + " quality " +
               std::to_string(quality) + " " + SubsampName(subsamp));
  const std::vector<uint8_t> jpeg =
      EncodeJpeg(PageLike(width, height), width, height, quality, subsamp);
  const Frame exact = ExactPath(jpeg, width, height);
  Frame ours(width, height);
  JpegToYuv420 converter;
  ASSERT_TRUE(converter.Convert(jpeg, width, height, ours.view()).ok());
  const char* kNames[3] = {"Y", "U", "V"};
  std::string line;
  for (int i = 0; i < 3; ++i) {
    const double psnr = Psnr(exact.planes[i], ours.planes[i]);
    int worst = 0;
    for (size_t k = 0; k < ours.planes[i].size(); ++k) {
      worst = std::max(worst, std::abs(exact.planes[i][k] - ours.planes[i][k]));
    }
    EXPECT_GE(psnr, 50.0) << kNames[i];
    EXPECT_LE(worst, 2) << kNames[i];
    char text[64];
    std::snprintf(text, sizeof text, " %s %.1f dB (max %d)", kNames[i], psnr, worst);
    line += text;
  }
  ::testing::Test::RecordProperty(std::string("psnr_") + SubsampName(subsamp) + "_q" +
                                      std::to_string(quality) + "_" + std::to_string(width),
                                  line);
  std::printf("%dx%d %s quality %d:%s\n", width, height, SubsampName(subsamp), quality,
              line.c_str());
}

TEST(JpegYuvTest, ChromiumJpegsMatchTheExactPath) {
  // Chromium's screenshots are 4:2:0 at every quality (checked on chromium-headless-shell's
  // Page.captureScreenshot and HeadlessExperimental.beginFrame, quality 30 to 100).
  for (int quality : {90, 60}) {
    ExpectMatchesExactPath(1280, 720, quality, TJSAMP_420);
    ExpectMatchesExactPath(1920, 1080, quality, TJSAMP_420);  // Not a whole number of MCU rows.
  }
  ExpectMatchesExactPath(2, 2, 90, TJSAMP_420);
  ExpectMatchesExactPath(98, 38, 75, TJSAMP_420);
}

TEST(JpegYuvTest, OtherSubsamplingsMatchTheExactPath) {
  for (int subsamp : {TJSAMP_444, TJSAMP_422, TJSAMP_440, TJSAMP_411, TJSAMP_GRAY}) {
    ExpectMatchesExactPath(640, 360, 90, subsamp);
    ExpectMatchesExactPath(646, 362, 60, subsamp);  // Partial MCUs on the right and bottom.
  }
}

TEST(JpegYuvTest, WritesOnlyTheFrameWithinPaddedRows) {
  constexpr int kW = 64;
  constexpr int kH = 32;
  const std::vector<uint8_t> jpeg = EncodeJpeg(PageLike(kW, kH), kW, kH, 90, TJSAMP_420);
  const Frame exact = ExactPath(jpeg, kW, kH);
  constexpr int kPad = 40;
  std::vector<uint8_t> buffers[3];
  Yuv420Planes planes;
  for (int i = 0; i < 3; ++i) {
    const int w = i == 0 ? kW : kW / 2;
    const int h = i == 0 ? kH : kH / 2;
    buffers[i].assign(static_cast<size_t>(w + kPad) * h, 0xAB);
    planes.data[i] = buffers[i].data();
    planes.stride[i] = w + kPad;
  }
  JpegToYuv420 converter;
  ASSERT_TRUE(converter.Convert(jpeg, kW, kH, planes).ok());
  for (int i = 0; i < 3; ++i) {
    const int w = i == 0 ? kW : kW / 2;
    const int h = i == 0 ? kH : kH / 2;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w + kPad; ++x) {
        const uint8_t got = buffers[i][static_cast<size_t>(y) * (w + kPad) + x];
        if (x >= w) {
          ASSERT_EQ(got, 0xAB) << "plane " << i << " padding at " << x << "," << y;
        } else {
          ASSERT_LE(std::abs(got - exact.planes[i][static_cast<size_t>(y) * w + x]), 2)
              << "plane " << i << " at " << x << "," << y;
        }
      }
    }
  }
}

TEST(JpegYuvTest, OneConverterTakesFramesOfEverySubsamplingInTurn) {
  JpegToYuv420 converter;
  for (int subsamp : {TJSAMP_420, TJSAMP_GRAY, TJSAMP_444, TJSAMP_420}) {
    SCOPED_TRACE(SubsampName(subsamp));
    const std::vector<uint8_t> jpeg = EncodeJpeg(PageLike(320, 180), 320, 180, 80, subsamp);
    const Frame exact = ExactPath(jpeg, 320, 180);
    Frame ours(320, 180);
    ASSERT_TRUE(converter.Convert(jpeg, 320, 180, ours.view()).ok());
    for (int i = 0; i < 3; ++i) EXPECT_GE(Psnr(exact.planes[i], ours.planes[i]), 50.0);
  }
}

TEST(JpegYuvTest, CorruptJpegsAreRefused) {
  const std::vector<uint8_t> jpeg = EncodeJpeg(PageLike(320, 180), 320, 180, 90, TJSAMP_420);
  Frame out(320, 180);
  JpegToYuv420 converter;

  const std::vector<uint8_t> garbage(1000, 0x5A);
  Status status = converter.Convert(garbage, 320, 180, out.view());
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("corrupt JPEG frame"), std::string_view::npos)
      << status.ToString();

  EXPECT_FALSE(converter.Convert({}, 320, 180, out.view()).ok());

  // Cut short: libjpeg-turbo fills the rest and warns; the warning is an error here, as in
  // capture's decode.
  const std::vector<uint8_t> truncated(jpeg.begin(),
                                       jpeg.begin() + static_cast<ptrdiff_t>(jpeg.size() / 2));
  status = converter.Convert(truncated, 320, 180, out.view());
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("corrupt JPEG frame"), std::string_view::npos)
      << status.ToString();

  // Entropy-coded data scrambled after the headers.
  std::vector<uint8_t> scrambled = jpeg;
  for (size_t i = scrambled.size() / 3; i < scrambled.size() - 2; i += 7) scrambled[i] = 0xFF;
  EXPECT_FALSE(converter.Convert(scrambled, 320, 180, out.view()).ok());

  // And the converter still works afterwards.
  EXPECT_TRUE(converter.Convert(jpeg, 320, 180, out.view()).ok());
}

TEST(JpegYuvTest, JpegsOfAnotherSizeAreRefusedByName) {
  const std::vector<uint8_t> jpeg = EncodeJpeg(PageLike(320, 180), 320, 180, 90, TJSAMP_420);
  Frame out(640, 360);
  JpegToYuv420 converter;
  Status status = converter.Convert(jpeg, 640, 360, out.view());
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("320x180"), std::string_view::npos) << status.ToString();
  EXPECT_NE(status.message().find("640x360"), std::string_view::npos) << status.ToString();

  status = converter.Convert(jpeg, 321, 180, out.view());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
}

class JpegYuvStreamTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"jpeg-yuv"};
};

// The film converter takes JPEGs, and its film plays back as the film made from the same
// JPEG decoded to RGBA.
TEST_F(JpegYuvStreamTest, H264ConverterTakesJpegs) {
  constexpr int kW = 320;
  constexpr int kH = 180;
  const std::vector<uint8_t> jpeg = EncodeJpeg(PageLike(kW, kH), kW, kH, 90, TJSAMP_420);
  std::vector<uint8_t> rgba(static_cast<size_t>(kW) * kH * 4);
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  ASSERT_EQ(tjDecompress2(tj.get(), jpeg.data(), jpeg.size(), rgba.data(), kW, kW * 4, kH,
                          TJPF_RGBA, TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE),
            0);

  std::vector<testing::DecodedVideo> films;
  for (bool from_jpeg : {false, true}) {
    StreamSpec spec;
    spec.container = Container::kMp4;
    spec.codec = Codec::kH264;
    spec.sink.target = (scratch_.path() / (from_jpeg ? "jpeg.mp4" : "rgba.mp4")).string();
    spec.width = kW;
    spec.height = kH;
    spec.quality = 100;
    auto stream = VideoStream::Open(spec);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    auto converter = (*stream)->NewConverter();
    EXPECT_TRUE(converter->AcceptsJpeg());
    for (int64_t pts = 0; pts < 3; ++pts) {
      auto frame = from_jpeg ? converter->ConvertJpeg(jpeg, kW, kH)
                             : converter->Convert(RgbaView{rgba.data(), kW, kH, kW * 4});
      ASSERT_TRUE(frame.ok()) << frame.status().ToString();
      ASSERT_TRUE((*stream)->Write(std::move(*frame), pts).ok());
    }
    if (from_jpeg) {
      auto wrong = converter->ConvertJpeg(jpeg, kW * 2, kH * 2);
      EXPECT_EQ(wrong.status().code(), StatusCode::kInternal);
    }
    ASSERT_TRUE((*stream)->Finish().ok());
    auto video = testing::DecodeVideo(spec.sink.target);
    ASSERT_TRUE(video.ok()) << video.status().ToString();
    EXPECT_EQ(video->pixel_format, "yuv420p");
    EXPECT_EQ(video->color_space, "bt709");
    ASSERT_EQ(video->rgb.size(), 3u);
    films.push_back(*std::move(video));
  }
  // Inputs a level apart at most; H.264 at CRF 10 keeps them close.
  for (size_t i = 0; i < 3; ++i)
    EXPECT_GE(Psnr(films[0].rgb[i], films[1].rgb[i]), 40.0) << "frame " << i;
}

TEST_F(JpegYuvStreamTest, OtherConvertersRefuseJpegs) {
  StreamSpec spec;
  spec.container = Container::kMatroska;
  spec.codec = Codec::kFfv1;
  spec.sink.target = (scratch_.path() / "film.mkv").string();
  spec.width = 64;
  spec.height = 32;
  auto stream = VideoStream::Open(spec);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  auto converter = (*stream)->NewConverter();
  EXPECT_FALSE(converter->AcceptsJpeg());
  const std::vector<uint8_t> jpeg = EncodeJpeg(PageLike(64, 32), 64, 32, 90, TJSAMP_420);
  EXPECT_EQ(converter->ConvertJpeg(jpeg, 64, 32).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace pagereel::encode
