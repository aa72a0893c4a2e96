#include "base/rational.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <numeric>

namespace pagereel {

Rational Rational::Make(int64_t num, int64_t den) {
  assert(den != 0);
  if (den < 0) {
    num = -num;
    den = -den;
  }
  int64_t g = std::gcd(num, den);
  if (g == 0) g = 1;
  return Rational{num / g, den / g};
}

std::string Rational::ToString() const {
  if (den == 1) return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}

namespace {

// 128-bit products keep n * den * 1e6 exact for any film length; __extension__ tells
// -Wpedantic the GCC/Clang type is intended.
__extension__ typedef __int128 Int128;

constexpr int64_t kMaxFps = 1000;

Status BadRate(std::string_view text, std::string_view why) {
  return InvalidArgumentError("bad frame rate '" + std::string(text) + "': " + std::string(why) +
                              " (use an integer like 30, a decimal like 29.97, or a fraction "
                              "like 30000/1001)");
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Result<Rational> ParseFrameRate(std::string_view text) {
  Rational rate;
  if (size_t slash = text.find('/'); slash != std::string_view::npos) {
    int64_t num = 0;
    int64_t den = 0;
    if (!ParseInt(text.substr(0, slash), &num) || !ParseInt(text.substr(slash + 1), &den)) {
      return BadRate(text, "not a fraction of two integers");
    }
    if (den <= 0) return BadRate(text, "the denominator must be positive");
    if (num <= 0) return BadRate(text, "the rate must be positive");
    rate = Rational::Make(num, den);
  } else if (size_t dot = text.find('.'); dot != std::string_view::npos) {
    // NTSC-family rates are written as rounded decimals; they mean the 1001 fractions.
    if (text == "23.976" || text == "23.98") return Rational{24000, 1001};
    if (text == "29.97") return Rational{30000, 1001};
    if (text == "47.952") return Rational{48000, 1001};
    if (text == "59.94") return Rational{60000, 1001};
    if (text == "119.88") return Rational{120000, 1001};
    std::string_view whole = text.substr(0, dot);
    std::string_view frac = text.substr(dot + 1);
    int64_t w = 0;
    int64_t f = 0;
    if ((!whole.empty() && !ParseInt(whole, &w)) || frac.empty() || frac.size() > 6 ||
        !ParseInt(frac, &f) || frac.front() == '-' || frac.front() == '+') {
      return BadRate(text, "not a number");
    }
    int64_t scale = 1;
    for (size_t i = 0; i < frac.size(); ++i) scale *= 10;
    if (w < 0 || whole.starts_with('-')) return BadRate(text, "the rate must be positive");
    rate = Rational::Make(w * scale + f, scale);
  } else {
    int64_t n = 0;
    if (!ParseInt(text, &n)) return BadRate(text, "not a number");
    rate = Rational{n, 1};
  }
  if (rate.num <= 0) return BadRate(text, "the rate must be positive");
  if (rate.num > kMaxFps * rate.den) return BadRate(text, "more than 1000 frames per second");
  // Containers keep rates as 32-bit fractions.
  constexpr int64_t kMaxTerm = 2147483647;
  if (rate.num > kMaxTerm || rate.den > kMaxTerm) return BadRate(text, "too fine a fraction");
  return rate;
}

int64_t FrameTimeMillis(int64_t index, Rational rate) {
  if (index <= 0) return 0;
  // index * 1000 / fps as numer / denom, with fps the rate pages are assumed to use.
  Int128 numer = static_cast<Int128>(index) * rate.den * 1000;
  Int128 denom = rate.num;
  if (rate.den == 1001 && rate.num % 1000 == 0) {
    // 30000/1001 is written 29.97, that is (num / 1000) * 999 / 1000.
    numer = static_cast<Int128>(index) * 1'000'000'000;
    denom = static_cast<Int128>(rate.num) * 999;
  }
  if (rate.den * 1000 <= rate.num) return static_cast<int64_t>((numer + denom - 1) / denom);
  return static_cast<int64_t>(numer / denom + 1);
}

int64_t FramesInDuration(double seconds, Rational rate) {
  // Frames n with n * den / num < seconds. A tiny epsilon absorbs decimal input such as
  // 0.1 that binary floating point cannot hold exactly.
  double frames = seconds * static_cast<double>(rate.num) / static_cast<double>(rate.den);
  return static_cast<int64_t>(std::ceil(frames - 1e-9));
}

}  // namespace pagereel
