#include "live/compositor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "live/picture.h"

namespace pagereel::live {
namespace {

// Straightforward floating-point compositing: the canvas in doubles, no rounding between
// layers, background premultiplied as c * a / 255.
std::vector<double> ReferenceComposite(const std::vector<Layer>& layers, Rgba background, int width,
                                       int height) {
  std::vector<double> canvas(static_cast<size_t>(width) * height * 4);
  const double a = background.a;
  for (size_t i = 0; i < canvas.size(); i += 4) {
    canvas[i] = background.r * a / 255.0;
    canvas[i + 1] = background.g * a / 255.0;
    canvas[i + 2] = background.b * a / 255.0;
    canvas[i + 3] = a;
  }
  for (const Layer& layer : layers) {
    if (layer.picture == nullptr) continue;
    const double op = std::isnan(layer.opacity)
                          ? 0.0
                          : static_cast<double>(std::clamp(layer.opacity, 0.0f, 1.0f));
    const Picture& p = *layer.picture;
    for (int y = 0; y < p.height; ++y) {
      for (int x = 0; x < p.width; ++x) {
        const int64_t cx = int64_t{layer.x} + x;
        const int64_t cy = int64_t{layer.y} + y;
        if (cx < 0 || cy < 0 || cx >= width || cy >= height) continue;
        const uint8_t* s = p.Row(y) + 4 * x;
        double* d = &canvas[(static_cast<size_t>(cy) * width + static_cast<size_t>(cx)) * 4];
        const double keep = 1.0 - s[3] * op / 255.0;
        for (int k = 0; k < 4; ++k) d[k] = s[k] * op + d[k] * keep;
      }
    }
  }
  return canvas;
}

// A random valid premultiplied picture: some pixels transparent, some opaque, the rest
// anything with colour <= alpha; runs of one kind so whole chunks take each path.
Picture RandomPicture(std::mt19937& rng, int width, int height) {
  Picture p(width, height);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> kind(0, 3);
  int current = kind(rng);
  for (size_t i = 0; i < p.pixels.size(); i += 4) {
    if (byte(rng) < 8) current = kind(rng);
    int a = 0;
    if (current == 1) a = 255;
    if (current >= 2) a = byte(rng);
    p.pixels[i + 3] = static_cast<uint8_t>(a);
    for (int k = 0; k < 3; ++k) {
      p.pixels[i + k] =
          static_cast<uint8_t>(a == 0 ? 0 : std::uniform_int_distribution<int>(0, a)(rng));
    }
  }
  return p;
}

Picture Solid(int width, int height, uint8_t r, uint8_t g, uint8_t b, uint8_t a) {
  Picture p(width, height);
  for (size_t i = 0; i < p.pixels.size(); i += 4) {
    p.pixels[i] = r;
    p.pixels[i + 1] = g;
    p.pixels[i + 2] = b;
    p.pixels[i + 3] = a;
  }
  return p;
}

// Largest |out - reference| over all bytes.
double MaxError(const Picture& out, const std::vector<double>& reference) {
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    worst = std::max(worst, std::abs(out.pixels[i] - reference[i]));
  }
  return worst;
}

TEST(CompositeTest, MatchesReferenceOnRandomLayers) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> side(1, 70);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  double worst = 0;
  for (int round = 0; round < 400; ++round) {
    const int width = side(rng);
    const int height = side(rng);
    const int count = 1 + round % 4;
    std::vector<Picture> pictures;
    pictures.reserve(static_cast<size_t>(count));
    std::vector<Layer> layers;
    for (int i = 0; i < count; ++i) {
      pictures.push_back(RandomPicture(rng, side(rng), side(rng)));
      const Picture& p = pictures.back();
      Layer layer;
      layer.picture = &p;
      layer.x = std::uniform_int_distribution<int>(-p.width - 2, width + 2)(rng);
      layer.y = std::uniform_int_distribution<int>(-p.height - 2, height + 2)(rng);
      const float pick = unit(rng);
      layer.opacity = pick < 0.4f ? 1.0f : (pick < 0.45f ? 0.0f : unit(rng));
      layers.push_back(layer);
    }
    const Rgba background{static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()),
                          static_cast<uint8_t>(rng()),
                          static_cast<uint8_t>(round % 2 == 0 ? 255 : rng() % 256)};
    Picture out(width, height);
    Composite(layers, background, &out);
    const std::vector<double> reference = ReferenceComposite(layers, background, width, height);
    for (size_t i = 0; i < reference.size(); ++i) {
      // Within 1 of the reference rounded to 8 bits.
      ASSERT_LE(std::abs(out.pixels[i] - std::round(reference[i])), 1.0)
          << "round " << round << " byte " << i << " reference " << reference[i];
    }
    worst = std::max(worst, MaxError(out, reference));
  }
  RecordProperty("max_error", std::to_string(worst));
}

TEST(CompositeTest, OneLayerOverOpaqueBackgroundRoundsToNearest) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> side(1, 90);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int round = 0; round < 300; ++round) {
    const int width = side(rng);
    const int height = side(rng);
    const Picture picture = RandomPicture(rng, side(rng), side(rng));
    std::vector<Layer> layers = {{&picture,
                                  std::uniform_int_distribution<int>(-picture.width, width)(rng),
                                  std::uniform_int_distribution<int>(-picture.height, height)(rng),
                                  round % 3 == 0 ? 1.0f : unit(rng)}};
    const Rgba background{static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()),
                          static_cast<uint8_t>(rng()), 255};
    Picture out(width, height);
    Composite(layers, background, &out);
    const double bound = layers[0].opacity == 1.0f ? 0.5 : 0.52;
    ASSERT_LE(MaxError(out, ReferenceComposite(layers, background, width, height)), bound)
        << "round " << round << " opacity " << layers[0].opacity;
  }
}

TEST(CompositeTest, OpaqueSourceReplacesWhatIsBelow) {
  std::mt19937 rng(1);
  const Picture below = RandomPicture(rng, 37, 5);
  Picture opaque = RandomPicture(rng, 37, 5);
  for (size_t i = 3; i < opaque.pixels.size(); i += 4) opaque.pixels[i] = 255;
  const std::vector<Layer> layers = {{&below, 0, 0, 1.0f}, {&opaque, 0, 0, 1.0f}};
  Picture out(37, 5);
  Composite(layers, Rgba{1, 2, 3, 40}, &out);
  EXPECT_EQ(out.pixels, opaque.pixels);
}

TEST(CompositeTest, TransparentSourceAndZeroOpacityChangeNothing) {
  std::mt19937 rng(2);
  const Picture below = RandomPicture(rng, 41, 7);
  const Picture transparent(41, 7);
  const Picture visible = RandomPicture(rng, 41, 7);
  Picture expected(41, 7);
  const std::vector<Layer> just_below = {{&below, 0, 0, 1.0f}};
  Composite(just_below, Rgba{9, 8, 7, 200}, &expected);

  Picture out(41, 7);
  const std::vector<Layer> with_transparent = {
      {&below, 0, 0, 1.0f}, {&transparent, 0, 0, 1.0f}, {&transparent, 3, -2, 0.5f}};
  Composite(with_transparent, Rgba{9, 8, 7, 200}, &out);
  EXPECT_EQ(out.pixels, expected.pixels);

  const std::vector<Layer> with_zero_opacity = {
      {&below, 0, 0, 1.0f},
      {&visible, 0, 0, 0.0f},
      {&visible, 0, 0, -3.0f},
      {&visible, 0, 0, std::numeric_limits<float>::quiet_NaN()}};
  Composite(with_zero_opacity, Rgba{9, 8, 7, 200}, &out);
  EXPECT_EQ(out.pixels, expected.pixels);
}

TEST(CompositeTest, HalfRedOverBlue) {
  // Straight (255, 0, 0, 128) is premultiplied (128, 0, 0, 128).
  const Picture red = Solid(19, 3, 128, 0, 0, 128);
  Picture out(19, 3);
  const std::vector<Layer> layers = {{&red, 0, 0, 1.0f}};
  Composite(layers, Rgba{0, 0, 255, 255}, &out);
  // Blue: 255 * 127 / 255 = 127; alpha: 128 + 255 * 127 / 255 = 255.
  EXPECT_EQ(out.pixels, Solid(19, 3, 128, 0, 127, 255).pixels);

  // An opaque red layer at opacity 0.5: 127.5 each way, so 127 or 128.
  const Picture opaque_red = Solid(19, 3, 255, 0, 0, 255);
  const std::vector<Layer> faded = {{&opaque_red, 0, 0, 0.5f}};
  Composite(faded, Rgba{0, 0, 255, 255}, &out);
  for (size_t i = 0; i < out.pixels.size(); i += 4) {
    EXPECT_NEAR(out.pixels[i], 127.5, 0.5);
    EXPECT_EQ(out.pixels[i + 1], 0);
    EXPECT_NEAR(out.pixels[i + 2], 127.5, 0.5);
    EXPECT_EQ(out.pixels[i + 3], 255);
  }
}

TEST(CompositeTest, ClipsLayersAtEveryEdge) {
  const Picture white = Solid(4, 4, 255, 255, 255, 255);
  Picture out(6, 5);
  const std::vector<Layer> layers = {{&white, -2, -3, 1.0f}, {&white, 4, 3, 1.0f}};
  Composite(layers, Rgba{0, 0, 0, 255}, &out);
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 6; ++x) {
      const bool covered = (x < 2 && y < 1) || (x >= 4 && y >= 3);
      EXPECT_EQ(out.Row(y)[4 * x], covered ? 255 : 0) << x << "," << y;
    }
  }
}

TEST(CompositeTest, LayersWhollyOutsideOrAtExtremePositionsAreSkipped) {
  std::mt19937 rng(3);
  const Picture p = RandomPicture(rng, 20, 20);
  const Picture empty;
  Picture out(16, 16);
  const std::vector<Layer> layers = {
      {&p, -20, 0, 1.0f},     {&p, 16, 0, 1.0f},      {&p, 0, -20, 1.0f},
      {&p, 0, 16, 1.0f},      {&p, INT_MAX, 0, 1.0f}, {&p, INT_MIN, INT_MIN, 1.0f},
      {&p, 0, INT_MAX, 0.5f}, {nullptr, 0, 0, 1.0f},  {&empty, 0, 0, 1.0f}};
  Composite(layers, Rgba{10, 20, 30, 255}, &out);
  EXPECT_EQ(out.pixels, Solid(16, 16, 10, 20, 30, 255).pixels);
}

TEST(CompositeTest, BackgroundIsPremultiplied) {
  Picture out(3, 2);
  Composite({}, Rgba{255, 100, 0, 128}, &out);
  EXPECT_EQ(out.pixels, Solid(3, 2, 128, 50, 0, 128).pixels);  // 100 * 128 / 255 = 50.2
  Picture nothing;
  Composite({}, Rgba{}, &nothing);  // An empty canvas is allowed.
}

TEST(WriteStraightRgbaTest, UndoesPremultiplying) {
  Picture p(256, 256);
  for (int a = 0; a < 256; ++a) {
    for (int c = 0; c < 256; ++c) {
      uint8_t* px = p.Row(a) + 4 * c;
      const int premultiplied = std::min(c, a);
      px[0] = px[1] = px[2] = static_cast<uint8_t>(premultiplied);
      px[3] = static_cast<uint8_t>(a);
    }
  }
  std::vector<uint8_t> straight(256 * 260 * 4);
  ASSERT_TRUE(WriteStraightRgba(p, straight.data(), 260 * 4).ok());
  for (int a = 0; a < 256; ++a) {
    for (int c = 0; c < 256; ++c) {
      const uint8_t* px = &straight[static_cast<size_t>(a) * 260 * 4 + 4 * c];
      const int premultiplied = std::min(c, a);
      const int expected = a == 0 ? 0 : static_cast<int>(std::lround(premultiplied * 255.0 / a));
      EXPECT_EQ(px[0], expected) << c << "," << a;
      EXPECT_EQ(px[3], a);
    }
  }
}

TEST(WriteStraightRgbaTest, RejectsShortStride) {
  Picture p(10, 2);
  std::vector<uint8_t> out(100);
  const Status status = WriteStraightRgba(p, out.data(), 39);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("10x2"), std::string_view::npos) << status.ToString();
  EXPECT_NE(status.message().find("39"), std::string_view::npos) << status.ToString();
  EXPECT_EQ(WriteStraightRgba(p, nullptr, 40).code(), StatusCode::kInvalidArgument);
}

TEST(PreparePictureTest, PremultipliesEveryColourAndAlphaExactly) {
  // Pixel (c, a) at x = c, y = a; widths 256 (whole chunks) and 255 (a partial chunk),
  // with 12 bytes of padding at the end of each row.
  for (int width : {256, 255}) {
    const int stride = width * 4 + 12;
    std::vector<uint8_t> straight(static_cast<size_t>(stride) * 256, 0xee);
    for (int a = 0; a < 256; ++a) {
      for (int c = 0; c < width; ++c) {
        uint8_t* px = &straight[static_cast<size_t>(a) * stride + 4 * c];
        px[0] = static_cast<uint8_t>(c);
        px[1] = static_cast<uint8_t>(255 - c);
        px[2] = static_cast<uint8_t>(c / 2);
        px[3] = static_cast<uint8_t>(a);
      }
    }
    Result<Picture> picture = PreparePicture(straight.data(), width, 256, stride, width, 256);
    ASSERT_TRUE(picture.ok()) << picture.status().ToString();
    ASSERT_EQ(picture->width, width);
    ASSERT_EQ(picture->pixels.size(), static_cast<size_t>(width) * 256 * 4);
    for (int a = 0; a < 256; ++a) {
      for (int c = 0; c < width; ++c) {
        const uint8_t* px = picture->Row(a) + 4 * c;
        EXPECT_EQ(px[0], (c * a + 127) / 255);
        EXPECT_EQ(px[1], ((255 - c) * a + 127) / 255);
        EXPECT_EQ(px[2], (c / 2 * a + 127) / 255);
        ASSERT_EQ(px[3], a);
      }
    }
  }
}

// Bilinear interpolation at pixel centres, clamped at the edges: what libswscale's
// bilinear filter computes when enlarging.
double Bilinear(const Picture& p, double fx, double fy, int k) {
  fx = std::clamp(fx, 0.0, p.width - 1.0);
  fy = std::clamp(fy, 0.0, p.height - 1.0);
  const int x0 = static_cast<int>(fx);
  const int y0 = static_cast<int>(fy);
  const int x1 = std::min(x0 + 1, p.width - 1);
  const int y1 = std::min(y0 + 1, p.height - 1);
  const double ax = fx - x0;
  const double ay = fy - y0;
  auto at = [&](int x, int y) { return static_cast<double>(p.Row(y)[4 * x + k]); };
  return (1 - ay) * ((1 - ax) * at(x0, y0) + ax * at(x1, y0)) +
         ay * ((1 - ax) * at(x0, y1) + ax * at(x1, y1));
}

TEST(PreparePictureTest, EnlargesBilinearlyChannelByChannel) {
  // Opaque noise: any mixing of channels (a trip through subsampled YUV) would show.
  std::mt19937 rng(4);
  const int width = 64;
  const int height = 36;
  std::vector<uint8_t> straight(static_cast<size_t>(width) * height * 4);
  for (size_t i = 0; i < straight.size(); ++i) {
    straight[i] = i % 4 == 3 ? 255 : static_cast<uint8_t>(rng());
  }
  Result<Picture> premultiplied =
      PreparePicture(straight.data(), width, height, width * 4, width, height);
  Result<Picture> big = PreparePicture(straight.data(), width, height, width * 4, 96, 54);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  ASSERT_EQ(big->width, 96);
  ASSERT_EQ(big->height, 54);
  double worst = 0;
  double sum = 0;
  for (int y = 0; y < 54; ++y) {
    for (int x = 0; x < 96; ++x) {
      for (int k = 0; k < 4; ++k) {
        const double expected = Bilinear(*premultiplied, (x + 0.5) * width / 96.0 - 0.5,
                                         (y + 0.5) * height / 54.0 - 0.5, k);
        const double error = std::abs(big->Row(y)[4 * x + k] - expected);
        worst = std::max(worst, error);
        sum += error;
      }
    }
  }
  // libswscale's fixed-point weights: 3.7 at worst on noise, 0.5 on average (measured).
  EXPECT_LE(worst, 4.0);
  EXPECT_LE(sum / (96 * 54 * 4), 0.75);
}

TEST(PreparePictureTest, ScaledPixelsStayValidAndTransparentColourDoesNotBleed) {
  // Left half opaque blue, right half transparent with its colour left red (as pages'
  // screenshots often are): after scaling no pixel may show red.
  std::mt19937 rng(5);
  const int width = 50;
  const int height = 20;
  std::vector<uint8_t> straight(static_cast<size_t>(width) * height * 4);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* px = &straight[(static_cast<size_t>(y) * width + x) * 4];
      const bool left = x < width / 2;
      px[0] = left ? 0 : 255;
      px[1] = 0;
      px[2] = left ? 255 : static_cast<uint8_t>(rng());
      px[3] = left ? 255 : (x % 7 == 0 ? static_cast<uint8_t>(rng() % 3) : 0);
    }
  }
  for (auto [out_width, out_height] : {std::pair{123, 47}, std::pair{17, 9}}) {
    Result<Picture> scaled =
        PreparePicture(straight.data(), width, height, width * 4, out_width, out_height);
    ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
    for (size_t i = 0; i < scaled->pixels.size(); i += 4) {
      const uint8_t* px = &scaled->pixels[i];
      EXPECT_LE(px[0], 2) << i;  // At most what the nearly transparent pixels carry.
      EXPECT_LE(px[1], px[3]);
      EXPECT_LE(px[2], px[3]);
    }
  }
}

TEST(PreparePictureTest, ScalesAUniformColourToTheSameColour) {
  const int width = 100;
  const int height = 60;
  std::vector<uint8_t> straight(static_cast<size_t>(width) * height * 4);
  for (size_t i = 0; i < straight.size(); i += 4) {
    straight[i] = 200;
    straight[i + 1] = 100;
    straight[i + 2] = 50;
    straight[i + 3] = 128;
  }
  for (auto [out_width, out_height] : {std::pair{1920, 1080}, std::pair{33, 7}}) {
    Result<Picture> scaled =
        PreparePicture(straight.data(), width, height, width * 4, out_width, out_height);
    ASSERT_TRUE(scaled.ok());
    for (size_t i = 0; i < scaled->pixels.size(); i += 4) {
      ASSERT_NEAR(scaled->pixels[i], 100, 1) << i;  // 200 * 128 / 255 = 100.4
      ASSERT_NEAR(scaled->pixels[i + 1], 50, 1) << i;
      ASSERT_NEAR(scaled->pixels[i + 2], 25, 1) << i;
      ASSERT_NEAR(scaled->pixels[i + 3], 128, 1) << i;
    }
  }
}

TEST(PreparePictureTest, RejectsBadSizesNamingThem) {
  std::vector<uint8_t> pixels(64 * 64 * 4);
  struct Case {
    int width, height, stride, out_width, out_height;
    const char* named;
  };
  for (const Case& c :
       {Case{0, 10, 40, 10, 10, "0x10"}, Case{10, -1, 40, 10, 10, "10x-1"},
        Case{10, 10, 39, 10, 10, "stride 39"}, Case{10, 10, 40, 0, 10, "0x10 picture"},
        Case{10, 10, 40, 10, 16385, "10x16385"}, Case{16385, 1, 16385 * 4, 10, 10, "16385x1"}}) {
    Result<Picture> p =
        PreparePicture(pixels.data(), c.width, c.height, c.stride, c.out_width, c.out_height);
    ASSERT_FALSE(p.ok()) << c.named;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.named), std::string_view::npos) << p.status().ToString();
  }
  EXPECT_EQ(PreparePicture(nullptr, 4, 4, 16, 4, 4).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pagereel::live
