// Internal to live_picture: the 8-bit RGBA arithmetic shared by picture.cc and
// compositor.cc. Pure functions, any thread.
//
// Rows are processed in chunks of kChunkPixels pixels held in local arrays: a loop with a
// constant trip count over local (so unaliased) arrays is what g++ -O2's "very cheap"
// vectorizer accepts, so every loop below compiles to SSE2 without intrinsics. The pixels
// of a row that do not fill a chunk go through the same formulas one at a time.
#ifndef PAGEREEL_LIVE_PIXEL_MATH_H_
#define PAGEREEL_LIVE_PIXEL_MATH_H_

#include <bit>
#include <cstdint>
#include <cstring>

namespace pagereel::live::internal {

// Chunks load four bytes R, G, B, A as one uint32_t with A in the top byte.
static_assert(std::endian::native == std::endian::little, "RGBA words assume little endian");

inline constexpr int kChunkPixels = 16;
inline constexpr int kChunkBytes = kChunkPixels * 4;

// round(a * b / 255), exactly (a * b / 255 is never a half), in 16-bit lanes.
inline uint8_t MulDiv255(uint32_t a, uint32_t b) {
  const auto x = static_cast<uint16_t>(a * b + 128);
  return static_cast<uint8_t>(static_cast<uint16_t>(x + (x >> 8)) >> 8);
}

// (a * b) >> 16: SSE2's pmulhuw when vectorized.
inline uint16_t MulHigh(uint16_t a, uint16_t b) {
  return static_cast<uint16_t>((static_cast<uint32_t>(a) * b) >> 16);
}

// A chunk's pixels as words.
struct ChunkWords {
  uint32_t w[kChunkPixels];
};

inline ChunkWords LoadWords(const uint8_t* pixels) {
  ChunkWords words;
  std::memcpy(words.w, pixels, kChunkBytes);
  return words;
}

// out[4 * i + k] = alpha of pixel i for k = 0..3, except that the alpha lane itself gets
// `alpha_lane` when it is not negative.
inline void BroadcastAlpha(const ChunkWords& words, uint8_t* out, int alpha_lane = -1) {
  uint32_t b[kChunkPixels];
  const uint32_t keep = alpha_lane < 0 ? 0xffffffffu : 0x00ffffffu;
  const uint32_t lane = alpha_lane < 0 ? 0u : static_cast<uint32_t>(alpha_lane) << 24;
  for (int i = 0; i < kChunkPixels; ++i) {
    const uint32_t a = words.w[i] >> 24;
    b[i] = ((a | (a << 8) | (a << 16) | (a << 24)) & keep) | lane;
  }
  std::memcpy(out, b, kChunkBytes);
}

}  // namespace pagereel::live::internal

#endif  // PAGEREEL_LIVE_PIXEL_MATH_H_
