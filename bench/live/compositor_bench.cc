// What `pagereel live` spends per tick compositing (Composite) and per new source frame
// preparing it (PreparePicture), on one core.
//
// Composite: layer 1 is an opaque full-frame picture; layers 2 and 3 are lower thirds
// (full width, the bottom third of the frame) that are transparent except for a bar
// with a soft, half-transparent edge and some text-like opaque blocks, as a page's
// lower-third graphic is.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "live/compositor.h"
#include "live/picture.h"

namespace pagereel::live {
namespace {

Picture OpaqueFrame(int width, int height) {
  Picture p(width, height);
  std::mt19937 rng(1);
  for (size_t i = 0; i < p.pixels.size(); i += 4) {
    p.pixels[i] = static_cast<uint8_t>(rng());
    p.pixels[i + 1] = static_cast<uint8_t>(rng());
    p.pixels[i + 2] = static_cast<uint8_t>(rng());
    p.pixels[i + 3] = 255;
  }
  return p;
}

// A lower third: the picture covers the bottom third; a bar fills its middle rows from
// 5 % to 70 % of the width, opaque inside with a 24-pixel fading edge on the right and
// 30 % opaque blocks of "text" on it; everything else is transparent.
Picture LowerThird(int width, int height, int shift) {
  Picture p(width, height / 3);
  const int bar_top = p.height / 4;
  const int bar_bottom = p.height * 3 / 4;
  const int bar_left = width / 20 + shift;
  const int bar_right = width * 7 / 10 + shift;
  for (int y = bar_top; y < bar_bottom; ++y) {
    uint8_t* row = p.Row(y);
    for (int x = bar_left; x < bar_right + 24 && x < width; ++x) {
      int a = x < bar_right ? 255 : 255 - (x - bar_right + 1) * 10;
      const bool text = ((x / 7 + y / 9) % 3 == 0) && x < bar_right;
      if (text) a = 77;
      uint8_t* px = row + 4 * x;
      px[0] = static_cast<uint8_t>(20 * a / 255);
      px[1] = static_cast<uint8_t>(60 * a / 255);
      px[2] = static_cast<uint8_t>(160 * a / 255);
      px[3] = static_cast<uint8_t>(a);
    }
  }
  return p;
}

void BM_Composite(benchmark::State& state) {
  const int width = static_cast<int>(state.range(0));
  const int height = width * 9 / 16;
  const auto layer_count = static_cast<size_t>(state.range(1));
  const Picture frame = OpaqueFrame(width, height);
  const Picture third_a = LowerThird(width, height, 0);
  const Picture third_b = LowerThird(width, height, width / 10);
  const std::vector<Layer> all = {{&frame, 0, 0, 1.0f},
                                  {&third_a, 0, height - third_a.height, 1.0f},
                                  {&third_b, 0, height - third_b.height - height / 12, 0.8f}};
  const std::vector<Layer> layers(all.begin(), all.begin() + static_cast<long>(layer_count));
  Picture out(width, height);
  for (auto _ : state) {
    Composite(layers, Rgba{0, 0, 0, 255}, &out);
    benchmark::DoNotOptimize(out.pixels.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::to_string(width) + "x" + std::to_string(height) + ", " +
                 std::to_string(layer_count) + " layer(s)");
}
BENCHMARK(BM_Composite)->ArgsProduct({{1280, 1920}, {1, 2, 3}})->Unit(benchmark::kMillisecond);

void BM_PreparePicture(benchmark::State& state) {
  const int width = 1280;
  const int height = 720;
  const int out_width = static_cast<int>(state.range(0));
  const int out_height = out_width * 9 / 16;
  // A screenshot: straight RGBA, mostly opaque with a transparent band.
  std::vector<uint8_t> straight(static_cast<size_t>(width) * height * 4);
  std::mt19937 rng(2);
  for (size_t i = 0; i < straight.size(); i += 4) {
    straight[i] = static_cast<uint8_t>(rng());
    straight[i + 1] = static_cast<uint8_t>(rng());
    straight[i + 2] = static_cast<uint8_t>(rng());
    straight[i + 3] = (i / 4) / width < static_cast<size_t>(height / 3) ? 0 : 200;
  }
  for (auto _ : state) {
    Result<Picture> picture =
        PreparePicture(straight.data(), width, height, width * 4, out_width, out_height);
    if (!picture.ok()) {
      state.SkipWithError(picture.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(picture->pixels.data());
  }
  state.SetLabel("1280x720 -> " + std::to_string(out_width) + "x" + std::to_string(out_height));
}
BENCHMARK(BM_PreparePicture)->Arg(1280)->Arg(1920)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pagereel::live
