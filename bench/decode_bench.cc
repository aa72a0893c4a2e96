// Micro costs of the per-frame work pagereel does outside the browser: JSON routing,
// base64 and JPEG/PNG decode of a real screenshot-sized payload. Google Benchmark.
#include <benchmark/benchmark.h>

#include <turbojpeg.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "capture/image.h"
#include "cdp/json_util.h"
#include "encode/film_writer.h"
#include "encode/stream.h"

extern "C" {
#include <libavutil/base64.h>
}

namespace {

using namespace pagereel;

// A 1280x720 frame with gradients and noise, so JPEG and PNG sizes resemble a real page.
std::vector<uint8_t> SampleFrame(int w, int h) {
  std::vector<uint8_t> rgba(static_cast<size_t>(w) * h * 4);
  uint32_t s = 1;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      s = s * 1664525 + 1013904223;
      uint8_t* p = &rgba[(static_cast<size_t>(y) * w + x) * 4];
      p[0] = static_cast<uint8_t>(x * 255 / w);
      p[1] = static_cast<uint8_t>(y * 255 / h);
      p[2] = static_cast<uint8_t>(((x / 40 + y / 40) % 2) * 200 + (s >> 29));
      p[3] = 255;
    }
  }
  return rgba;
}

// The reply the browser sends for one beginFrame with a screenshot of the sample frame.
cdp::Message Reply(encode::ImageFormat format) {
  const int w = 1280;
  const int h = 720;
  std::vector<uint8_t> rgba = SampleFrame(w, h);
  // Encode through the sequence writer's codecs by way of a temporary file would be
  // roundabout; libjpeg-turbo/libspng are reached through encode's public API instead.
  char path[] = "/tmp/pagereel-bench-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  std::string pattern = std::string(path) + "-%d" + (format == encode::ImageFormat::kJpeg ? ".jpg" : ".png");
  encode::FilmWriterOptions o;
  o.film.kind = format == encode::ImageFormat::kJpeg ? encode::FilmKind::kJpegSequence
                                                     : encode::FilmKind::kPngSequence;
  o.film.width = w;
  o.film.height = h;
  o.film.quality = 90;
  o.path = pattern;
  auto writer = encode::FilmWriter::Open(o);
  (void)(*writer)->Write(encode::RgbaView{rgba.data(), w, h, w * 4});
  (void)(*writer)->Finish();
  std::string file = std::string(path) + "-0" + (format == encode::ImageFormat::kJpeg ? ".jpg" : ".png");
  std::FILE* f = std::fopen(file.c_str(), "rb");
  std::vector<uint8_t> bytes;
  int c;
  while ((c = std::fgetc(f)) != EOF) bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(f);
  std::remove(file.c_str());
  std::remove(path);
  std::string b64(AV_BASE64_SIZE(bytes.size()), '\0');
  av_base64_encode(b64.data(), static_cast<int>(b64.size()), bytes.data(), static_cast<int>(bytes.size()));
  b64.resize(std::strlen(b64.c_str()));
  cdp::Message m;
  m.json = R"({"id":7,"result":{"hasDamage":true,"screenshotData":")" + b64 + R"("},"sessionId":"S"})";
  m.json.reserve(m.json.size() + cdp::kJsonPadding);
  return m;
}

void BM_FindScreenshotInReply(benchmark::State& state) {
  cdp::Message m = Reply(encode::ImageFormat::kJpeg);
  for (auto _ : state) {
    auto view = cdp::GetRawStringView(m, {"result", "screenshotData"});
    benchmark::DoNotOptimize(view);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m.json.size()));
}
BENCHMARK(BM_FindScreenshotInReply);

void BM_Base64(benchmark::State& state) {
  cdp::Message m = Reply(encode::ImageFormat::kJpeg);
  auto frame = capture::TakeScreenshot(m, {"result", "screenshotData"}, 0, encode::ImageFormat::kJpeg);
  for (auto _ : state) {
    auto bytes = encode::DecodeBase64(frame->base64(), frame->length);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(frame->length));
}
BENCHMARK(BM_Base64);

void BM_DecodeFrame(benchmark::State& state) {
  auto format = state.range(0) == 0 ? encode::ImageFormat::kJpeg : encode::ImageFormat::kPng;
  cdp::Message m = Reply(format);
  auto frame = capture::TakeScreenshot(m, {"result", "screenshotData"}, 0, format);
  for (auto _ : state) {
    auto image = encode::DecodeScreenshot(frame->screenshot());
    benchmark::DoNotOptimize(image);
  }
  state.SetLabel(format == encode::ImageFormat::kJpeg ? "jpeg 1280x720" : "png 1280x720");
}
BENCHMARK(BM_DecodeFrame)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// An .mp4 film's stream, for its converter (what FilmWriter converts frames with).
std::unique_ptr<encode::VideoStream> Mp4Stream(const char* path, int w, int h) {
  encode::StreamSpec spec;
  spec.sink = encode::Sink{encode::Sink::Kind::kFile, path, nullptr};
  spec.width = w;
  spec.height = h;
  return std::move(encode::VideoStream::Open(spec)).value();
}

// RGBA to the film's BT.709 YUV 4:2:0, as the segment writers do for an .mp4.
void BM_ConvertForMp4(benchmark::State& state) {
  const int w = static_cast<int>(state.range(0));
  const int h = w * 9 / 16;
  std::vector<uint8_t> rgba = SampleFrame(w, h);
  auto stream = Mp4Stream("/tmp/pagereel-bench-convert.mp4", w, h);
  auto converter = stream->NewConverter();
  for (auto _ : state) {
    auto frame = converter->Convert(encode::RgbaView{rgba.data(), w, h, w * 4});
    benchmark::DoNotOptimize(frame);
  }
  state.SetLabel(std::to_string(w) + "x" + std::to_string(h));
}
BENCHMARK(BM_ConvertForMp4)->Arg(1280)->Arg(1920)->Unit(benchmark::kMillisecond);

// The sample frame as Chromium sends it: JPEG, 4:2:0 (Chromium's screenshots are 4:2:0 at
// every quality), quality 90 as pagereel asks for.
std::vector<uint8_t> ChromiumJpeg(int w, int h) {
  std::vector<uint8_t> rgba = SampleFrame(w, h);
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  tjCompress2(tj.get(), rgba.data(), w, w * 4, h, TJPF_RGBA, &jpeg, &size, TJSAMP_420, 90, 0);
  std::vector<uint8_t> out(jpeg, jpeg + size);
  tjFree(jpeg);
  return out;
}

// A film frame from a screenshot's JPEG bytes, both ways, alternating in one loop so both
// see the same machine: old = decode to RGBA (encode::DecodeJpeg) then the film converter's
// swscale; new = the film converter's ConvertJpeg (encode/jpeg_yuv.h). Reports each per
// frame and new/old; the time per iteration is the two together.
void BM_FilmFrameFromJpeg(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const int w = static_cast<int>(state.range(0));
  const int h = w * 9 / 16;
  const std::vector<uint8_t> jpeg = ChromiumJpeg(w, h);
  auto stream = Mp4Stream("/tmp/pagereel-bench-jpeg.mp4", w, h);
  auto converter = stream->NewConverter();
  if (!converter->AcceptsJpeg()) {
    state.SkipWithError("the .mp4 converter does not take JPEG");
    return;
  }
  Clock::duration old_path{};
  Clock::duration new_path{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    auto image = encode::DecodeJpeg(jpeg.data(), jpeg.size());
    auto old_frame = converter->Convert(encode::RgbaView{image->rgba.data(), w, h, w * 4});
    benchmark::DoNotOptimize(old_frame);
    const auto t1 = Clock::now();
    auto new_frame = converter->ConvertJpeg(std::span<const uint8_t>(jpeg), w, h);
    benchmark::DoNotOptimize(new_frame);
    const auto t2 = Clock::now();
    if (!old_frame.ok() || !new_frame.ok()) {
      state.SkipWithError("conversion failed");
      return;
    }
    old_path += t1 - t0;
    new_path += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  const double old_ms = std::chrono::duration<double, std::milli>(old_path).count() / n;
  const double new_ms = std::chrono::duration<double, std::milli>(new_path).count() / n;
  state.counters["old_ms"] = old_ms;
  state.counters["new_ms"] = new_ms;
  state.counters["new/old"] = new_ms / old_ms;
  state.SetLabel(std::to_string(w) + "x" + std::to_string(h) + " 4:2:0 q90, " +
                 std::to_string(jpeg.size() / 1024) + " KiB");
}
BENCHMARK(BM_FilmFrameFromJpeg)->Arg(1280)->Arg(1920)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
