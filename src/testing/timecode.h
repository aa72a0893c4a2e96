// Reads the clock rows that tests/pages/timecode.html paints: 20 cells of 32x40 px per row,
// white for 1, most significant bit first. Works on any 8-bit interleaved image.
#ifndef PAGEREEL_TESTING_TIMECODE_H_
#define PAGEREEL_TESTING_TIMECODE_H_

#include <cstdint>
#include <string>

namespace pagereel::testing {

enum TimecodeRow {
  kRafTimestamp = 0,
  kPerformanceNow = 1,
  kDateNow = 2,
  kCssAnimation = 3,
  kWebAnimation = 4,
  kSvgTime = 5,
  kRafCount = 6,
  kIntervalCount = 7,
};

inline int ReadTimecodeRow(const uint8_t* pixels, int stride, int channels, int row) {
  constexpr int kBits = 20;
  constexpr int kCellW = 32;
  constexpr int kCellH = 40;
  int value = 0;
  for (int b = 0; b < kBits; ++b) {
    int x = b * kCellW + kCellW / 2;
    int y = row * kCellH + kCellH / 2;
    const uint8_t* p = pixels + static_cast<size_t>(y) * stride + static_cast<size_t>(x) * channels;
    value = (value << 1) | (p[0] > 128 ? 1 : 0);
  }
  return value;
}

inline std::string TestPageUrl(const std::string& name) {
  return std::string("file://") + PAGEREEL_SOURCE_DIR + "/tests/pages/" + name;
}

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_TIMECODE_H_
