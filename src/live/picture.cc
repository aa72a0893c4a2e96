#include "live/picture.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "live/pixel_math.h"

extern "C" {
#include <libavutil/error.h>
#include <libswscale/swscale.h>
}

namespace pagereel::live {
namespace {

using internal::BroadcastAlpha;
using internal::kChunkBytes;
using internal::kChunkPixels;
using internal::LoadWords;
using internal::MulDiv255;

// Premultiplies n straight pixels: colour c becomes round(c * a / 255), alpha stays.
// By hand, because FFmpeg 5.1 (libswscale 6.7, Debian 12) has no premultiply step: libavutil
// defines every pixel format's alpha as straight (pixdesc.h, AV_PIX_FMT_FLAG_ALPHA), and
// libswscale's one alpha option, "alphablend", only flattens alpha onto a uniform colour or
// a checkerboard when the output format has no alpha.
void PremultiplyRow(const uint8_t* in, uint8_t* out, int n) {
  int i = 0;
  for (; i + kChunkPixels <= n; i += kChunkPixels, in += kChunkBytes, out += kChunkBytes) {
    uint8_t src[kChunkBytes];
    uint8_t factor[kChunkBytes];  // Alpha for the colours, 255 for alpha itself.
    std::memcpy(src, in, kChunkBytes);
    BroadcastAlpha(LoadWords(src), factor, 255);
    uint8_t result[kChunkBytes];
    for (int j = 0; j < kChunkBytes; ++j) {
      result[j] = MulDiv255(src[j], factor[j]);
    }
    std::memcpy(out, result, kChunkBytes);
  }
  for (; i < n; ++i, in += 4, out += 4) {
    const uint32_t a = in[3];
    for (int k = 0; k < 3; ++k) out[k] = MulDiv255(in[k], a);
    out[3] = static_cast<uint8_t>(a);
  }
}

// Lowers any colour above its alpha to it. Scaling premultiplied pixels with non-negative
// weights keeps colour <= alpha, except that each channel rounds on its own and may end
// one above; the compositor's maths needs the invariant.
void ClampToAlphaRow(uint8_t* p, int n) {
  int i = 0;
  for (; i + kChunkPixels <= n; i += kChunkPixels, p += kChunkBytes) {
    uint8_t px[kChunkBytes];
    uint8_t alpha[kChunkBytes];
    std::memcpy(px, p, kChunkBytes);
    BroadcastAlpha(LoadWords(px), alpha);
    for (int j = 0; j < kChunkBytes; ++j) px[j] = std::min(px[j], alpha[j]);
    std::memcpy(p, px, kChunkBytes);
  }
  for (; i < n; ++i, p += 4) {
    for (int k = 0; k < 3; ++k) p[k] = std::min(p[k], p[3]);
  }
}

struct SwsContextDeleter {
  void operator()(SwsContext* context) const { sws_freeContext(context); }
};

// A scaler for these sizes, reused by the calling thread while the sizes stay the same:
// a source's worker scales every frame alike, and making a context costs about 0.75 ms
// (measured here for 1280x720 to 1920x1080).
SwsContext* ScalerFor(int width, int height, int out_width, int out_height) {
  thread_local std::unique_ptr<SwsContext, SwsContextDeleter> cached;
  // Bilinear (area-weighted when shrinking): its weights are never negative, so scaled
  // premultiplied pixels stay valid (bicubic's overshoot would not, and cost 2.4x as
  // much). Full chroma in and out so no channel is ever subsampled.
  constexpr int kFlags = SWS_BILINEAR | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;
  // sws_getCachedContext frees the context it is given when it cannot reuse it.
  cached.reset(sws_getCachedContext(cached.release(), width, height, AV_PIX_FMT_RGBA, out_width,
                                    out_height, AV_PIX_FMT_RGBA, kFlags, nullptr, nullptr,
                                    nullptr));
  return cached.get();
}

std::string Size(int width, int height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

bool SideOk(int side) { return side >= 1 && side <= kMaxPictureSide; }

}  // namespace

Picture::Picture(int w, int h)
    : width(w), height(h), pixels(static_cast<size_t>(w) * static_cast<size_t>(h) * 4) {
  assert(w >= 0 && h >= 0 && w <= kMaxPictureSide && h <= kMaxPictureSide);
}

Result<Picture> PreparePicture(const uint8_t* straight_rgba, int width, int height, int stride,
                               int out_width, int out_height) {
  if (!SideOk(width) || !SideOk(height) || !SideOk(out_width) || !SideOk(out_height) ||
      stride / 4 < width || straight_rgba == nullptr) {
    return InvalidArgumentError(
        "cannot prepare a " + Size(out_width, out_height) + " picture from a " +
        Size(width, height) + " RGBA image with stride " + std::to_string(stride) +
        (straight_rgba == nullptr ? " and no pixels" : "") + ": widths and heights must be 1.." +
        std::to_string(kMaxPictureSide) + " and the stride at least 4 * width");
  }
  if (width == out_width && height == out_height) {
    Picture out(width, height);
    for (int y = 0; y < height; ++y) {
      PremultiplyRow(straight_rgba + static_cast<size_t>(y) * static_cast<size_t>(stride),
                     out.Row(y), width);
    }
    return out;
  }

  // Premultiply first, then scale: scaling straight pixels would mix the colour of
  // transparent pixels (often garbage) into the edges of what is visible.
  Picture premultiplied(width, height);
  for (int y = 0; y < height; ++y) {
    PremultiplyRow(straight_rgba + static_cast<size_t>(y) * static_cast<size_t>(stride),
                   premultiplied.Row(y), width);
  }
  SwsContext* scaler = ScalerFor(width, height, out_width, out_height);
  if (scaler == nullptr) {
    return InternalError("libswscale cannot scale RGBA " + Size(width, height) + " to " +
                         Size(out_width, out_height));
  }
  Picture out(out_width, out_height);
  const uint8_t* const src_planes[4] = {premultiplied.pixels.data(), nullptr, nullptr, nullptr};
  const int src_strides[4] = {premultiplied.stride(), 0, 0, 0};
  uint8_t* const dst_planes[4] = {out.pixels.data(), nullptr, nullptr, nullptr};
  const int dst_strides[4] = {out.stride(), 0, 0, 0};
  const int rows = sws_scale(scaler, src_planes, src_strides, 0, height, dst_planes, dst_strides);
  if (rows != out_height) {
    std::string what = std::to_string(rows) + " rows";
    if (rows < 0) {
      char error[AV_ERROR_MAX_STRING_SIZE] = {};
      av_strerror(rows, error, sizeof(error));
      what = error;
    }
    return InternalError("libswscale failed to scale RGBA " + Size(width, height) + " to " +
                         Size(out_width, out_height) + ": " + what);
  }
  for (int y = 0; y < out_height; ++y) ClampToAlphaRow(out.Row(y), out_width);
  return out;
}

}  // namespace pagereel::live
