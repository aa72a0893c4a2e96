#include "live/compositor.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "live/pixel_math.h"

namespace pagereel::live {
namespace {

using internal::BroadcastAlpha;
using internal::ChunkWords;
using internal::kChunkBytes;
using internal::kChunkPixels;
using internal::LoadWords;
using internal::MulDiv255;
using internal::MulHigh;

// How a layer's opacity is applied: not at all (opacity 1), or as a 0.16 fixed-point factor.
// (A genuine 16-bit factor, not a narrowed 32-bit one, is what lets g++ use pmulhuw.)
enum class Fade { kNone, kByFactor };

struct Opacity {
  Fade fade = Fade::kNone;
  uint16_t factor = 0;  // For kByFactor: round(opacity * 65536), 1..65535.
};

// The opacity to draw with, or nullopt when the layer is invisible.
std::optional<Opacity> ToOpacity(float opacity) {
  if (!(opacity > 0.0f)) return std::nullopt;  // Also NaN.
  if (opacity >= 1.0f) return Opacity{};
  const long factor = std::lround(static_cast<double>(opacity) * 65536.0);
  if (factor <= 0) return std::nullopt;
  return Opacity{Fade::kByFactor, static_cast<uint16_t>(std::min(factor, 65535L))};
}

// Opacity 1, per channel: d = s + round(d * (255 - sa) / 255), rounded exactly.
void BlendChunkFull(const uint8_t* src, const ChunkWords& words, uint8_t* dst) {
  uint8_t alpha[kChunkBytes];
  BroadcastAlpha(words, alpha);
  for (int j = 0; j < kChunkBytes; ++j) {
    dst[j] = static_cast<uint8_t>(src[j] + MulDiv255(dst[j], 255 - alpha[j]));
  }
}

// Opacity f = factor / 65536 < 1, per channel: d = s * f + d * (1 - sa * f / 255), with
// 16-bit products that keep 8 fraction bits (the multiply-high halves map to SSE2's
// pmulhuw) and one rounding at the end:
//   S   = s * f * 256                   (s << 8) * factor >> 16
//   A   = sa * f * 256
//   inv = (255 - sa * f) * 256          65280 - A
//   D   = d * (1 - sa * f / 255) * 256  (d * 257) * inv >> 16, as 257 / 65536 ~ 1 / 255
//   d   = (S + D + 128) >> 8
// The truncations cost at most 5/256 together, so the result is within 0.52 of exact.
// S + D stays below 65280 + 128 because colour <= alpha.
void BlendChunkFaded(const uint8_t* src, const ChunkWords& words, uint8_t* dst, uint16_t factor) {
  uint8_t alpha[kChunkBytes];
  BroadcastAlpha(words, alpha);
  for (int j = 0; j < kChunkBytes; ++j) {
    const uint16_t s = MulHigh(static_cast<uint16_t>(src[j] << 8), factor);
    const uint16_t a = MulHigh(static_cast<uint16_t>(alpha[j] << 8), factor);
    const auto inv = static_cast<uint16_t>(65280 - a);
    const uint16_t d = MulHigh(static_cast<uint16_t>(dst[j] * 257), inv);
    dst[j] = static_cast<uint8_t>(static_cast<uint16_t>(s + d + 128) >> 8);
  }
}

// The same two formulas for one pixel, for the ends of rows.
void BlendPixel(const uint8_t* src, uint8_t* dst, Opacity opacity) {
  const uint32_t sa = src[3];
  if (opacity.fade == Fade::kNone) {
    for (int k = 0; k < 4; ++k) {
      dst[k] = static_cast<uint8_t>(src[k] + MulDiv255(dst[k], 255 - sa));
    }
    return;
  }
  const uint16_t f = opacity.factor;
  const auto inv = static_cast<uint16_t>(65280 - MulHigh(static_cast<uint16_t>(sa << 8), f));
  for (int k = 0; k < 4; ++k) {
    const uint16_t s = MulHigh(static_cast<uint16_t>(src[k] << 8), f);
    const uint16_t d = MulHigh(static_cast<uint16_t>(dst[k] * 257), inv);
    dst[k] = static_cast<uint8_t>(static_cast<uint16_t>(s + d + 128) >> 8);
  }
}

// Draws n premultiplied pixels over n canvas pixels.
void BlendRow(const uint8_t* src, uint8_t* dst, int n, Opacity opacity) {
  int i = 0;
  for (; i + kChunkPixels <= n; i += kChunkPixels, src += kChunkBytes, dst += kChunkBytes) {
    uint8_t s[kChunkBytes];
    std::memcpy(s, src, kChunkBytes);
    const ChunkWords words = LoadWords(s);
    uint32_t any = 0;
    uint32_t all = 0xffffffffu;
    for (int k = 0; k < kChunkPixels; ++k) {
      any |= words.w[k];
      all &= words.w[k];
    }
    if (any == 0) continue;  // Transparent: leaves the canvas as it is.
    if (opacity.fade == Fade::kNone && (all >> 24) == 255) {
      std::memcpy(dst, s, kChunkBytes);  // Opaque: covers the canvas.
      continue;
    }
    uint8_t d[kChunkBytes];
    std::memcpy(d, dst, kChunkBytes);
    if (opacity.fade == Fade::kNone) {
      BlendChunkFull(s, words, d);
    } else {
      BlendChunkFaded(s, words, d, opacity.factor);
    }
    std::memcpy(dst, d, kChunkBytes);
  }
  for (; i < n; ++i, src += 4, dst += 4) BlendPixel(src, dst, opacity);
}

// Where a layer meets the canvas, in canvas coordinates; empty when first >= last.
struct Span {
  int first = 0;
  int last = 0;
};

Span Clip(int position, int size, int canvas) {
  const int64_t first = std::max<int64_t>(position, 0);
  const int64_t last = std::min<int64_t>(static_cast<int64_t>(position) + size, canvas);
  if (first >= last) return {};
  return {static_cast<int>(first), static_cast<int>(last)};
}

struct PlacedLayer {
  const Picture* picture;
  Span columns;
  Span rows;
  int x;
  int y;
  Opacity opacity;
};

}  // namespace

void Composite(std::span<const Layer> layers, Rgba background, Picture* out) {
  assert(out->pixels.size() == static_cast<size_t>(out->height) * out->stride());
  const int width = out->width;
  const int height = out->height;
  if (width <= 0 || height <= 0) return;

  // Clip every layer once; drop those that cannot change a pixel.
  std::vector<PlacedLayer> visible;
  visible.reserve(layers.size());
  for (const Layer& layer : layers) {
    const Picture* picture = layer.picture;
    if (picture == nullptr || picture->width <= 0 || picture->height <= 0) continue;
    const std::optional<Opacity> opacity = ToOpacity(layer.opacity);
    if (!opacity) continue;
    const Span columns = Clip(layer.x, picture->width, width);
    const Span rows = Clip(layer.y, picture->height, height);
    if (columns.first >= columns.last || rows.first >= rows.last) continue;
    visible.push_back({picture, columns, rows, layer.x, layer.y, *opacity});
  }

  // One background row, premultiplied like every picture.
  const uint8_t fill[4] = {MulDiv255(background.r, background.a),
                           MulDiv255(background.g, background.a),
                           MulDiv255(background.b, background.a), background.a};
  const size_t row_bytes = static_cast<size_t>(width) * 4;
  std::vector<uint8_t> background_row(row_bytes);
  for (size_t i = 0; i < row_bytes; i += 4) std::memcpy(&background_row[i], fill, 4);

  // Row by row, all layers at once, so the canvas row stays in cache while every layer
  // is drawn on it.
  for (int y = 0; y < height; ++y) {
    uint8_t* row = out->Row(y);
    std::memcpy(row, background_row.data(), row_bytes);
    for (const PlacedLayer& layer : visible) {
      if (y < layer.rows.first || y >= layer.rows.last) continue;
      const uint8_t* src =
          layer.picture->Row(y - layer.y) + static_cast<size_t>(layer.columns.first - layer.x) * 4;
      BlendRow(src, row + static_cast<size_t>(layer.columns.first) * 4,
               layer.columns.last - layer.columns.first, layer.opacity);
    }
  }
}

Status WriteStraightRgba(const Picture& picture, uint8_t* straight_rgba, int stride) {
  if (straight_rgba == nullptr || stride / 4 < picture.width) {
    return InvalidArgumentError(
        "cannot write a " + std::to_string(picture.width) + "x" + std::to_string(picture.height) +
        " picture as straight RGBA" + (straight_rgba == nullptr ? " to no destination" : "") +
        " with stride " + std::to_string(stride) + ": the stride must be at least 4 * width");
  }
  for (int y = 0; y < picture.height; ++y) {
    const uint8_t* in = picture.Row(y);
    uint8_t* out = straight_rgba + static_cast<size_t>(y) * static_cast<size_t>(stride);
    for (int x = 0; x < picture.width; ++x, in += 4, out += 4) {
      const uint32_t a = in[3];
      if (a == 255) {
        std::memcpy(out, in, 4);
        continue;
      }
      for (int k = 0; k < 3; ++k) {
        out[k] =
            a == 0 ? 0 : static_cast<uint8_t>(std::min<uint32_t>(255, (in[k] * 255u + a / 2) / a));
      }
      out[3] = static_cast<uint8_t>(a);
    }
  }
  return Status::Ok();
}

}  // namespace pagereel::live
