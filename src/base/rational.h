// Exact rational numbers for frame rates and frame times.
//
// Frame n of a film at rate num/den frames per second is at exactly n * den / num seconds.
// Nothing here accumulates time in floating point; conversions to microseconds or
// milliseconds round once, at the end. Plain value types: safe to copy between threads.
#ifndef PAGEREEL_BASE_RATIONAL_H_
#define PAGEREEL_BASE_RATIONAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace pagereel {

// A positive rational, kept in lowest terms.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  // REQUIRES: den != 0. Reduces and moves the sign to the numerator.
  static Rational Make(int64_t num, int64_t den);

  double ToDouble() const { return static_cast<double>(num) / static_cast<double>(den); }
  std::string ToString() const;  // "30000/1001", or "30" when den is 1.

  friend bool operator==(const Rational&, const Rational&) = default;
};

// Parses a frame rate: "30", "29.97" (read as 30000/1001, as are 23.976 and 59.94),
// "12.5" (25/2), or "30000/1001". Rejects zero, negatives, and rates above 1000 fps with a
// message naming the text.
Result<Rational> ParseFrameRate(std::string_view text);

// The time pages read at frame `index`, in whole milliseconds (the resolution pagereel
// presents time to pages at): 0 for frame 0, then the first whole millisecond after the
// frame's exact time, so a page that counts frames as floor(t * fps / 1000), or adds up
// per-frame steps of delta * fps / 1000 (lottie-web), lands on `index` exactly, clear of
// floating-point noise. For the 1001 rates, pages are assumed to write the rate as the
// usual decimal (29.97): the time is taken after the frame's exact time at that rate,
// which also serves pages that use the fraction (for films shorter than 9 hours).
// Rates of 1000 fps leave no room: there the time is rounded up.
int64_t FrameTimeMillis(int64_t index, Rational rate);

// Number of whole frames that start before `seconds` (a decimal such as "2.5"): the frame
// count of a film of that duration. Rounds the boundary up so 1 s at 30000/1001 is 30 frames.
int64_t FramesInDuration(double seconds, Rational rate);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_RATIONAL_H_
