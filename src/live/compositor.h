// The live compositor: stacks premultiplied Pictures (one per source) over a background
// into the output picture of one tick, and turns an output back into straight RGBA where an
// output needs it.
//
// Plain functions without state: any thread may call them, on different outputs at once.
// In `pagereel live` the clock thread calls Composite once per tick, so it is written for
// speed: 8-bit integer maths in loops that g++ -O2 vectorizes (SSE2), whole 16-pixel runs
// of a layer that are fully transparent skipped and fully opaque ones copied. Figures are
// in bench/RESULTS.md, "live compositor, one core".
#ifndef PAGEREEL_LIVE_COMPOSITOR_H_
#define PAGEREEL_LIVE_COMPOSITOR_H_

#include <cstdint>
#include <span>

#include "base/status.h"
#include "live/picture.h"

namespace pagereel::live {

// One picture placed on the canvas. The compositor does not own `picture`; it must stay
// alive and unchanged during the call.
struct Layer {
  const Picture* picture = nullptr;  // Null or empty: the layer is skipped.
  int x = 0;  // Canvas position of the picture's top-left pixel; may be negative, and the
  int y = 0;  // picture may lie partly or wholly outside the canvas (it is clipped).
  float opacity = 1.0f;  // 0..1, multiplies the whole layer. Outside 0..1 clamped; NaN is 0.
};

// Fills *out (keeping its size) with `background`, then draws each layer over it in order
// with premultiplied source-over, per channel out = src * opacity + dst * (1 - srcA *
// opacity). Each result is rounded to 8 bits: exactly to nearest at opacity 1, within 0.52
// of the exact value otherwise. Layers at opacity 1 copy opaque pixels exactly and leave
// the canvas untouched under transparent ones; opacity 0 leaves it untouched.
// When background.a is 255 every output pixel is opaque: its bytes then are straight RGBA
// as well, ready for an encoder as they are (WriteStraightRgba is not needed).
// REQUIRES: out != nullptr; no layer's picture is *out.
void Composite(std::span<const Layer> layers, Rgba background, Picture* out);

// Writes `picture` as straight (not premultiplied) RGBA rows, `stride` bytes apart, into
// `straight_rgba`: c = round(c * 255 / a), colour 0 where a is 0. For outputs that carry
// alpha (a key signal, a transparent overlay); opaque outputs need no conversion (see
// Composite). Errors: InvalidArgumentError when stride < picture.width * 4 or the
// destination is null.
Status WriteStraightRgba(const Picture& picture, uint8_t* straight_rgba, int stride);

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_COMPOSITOR_H_
