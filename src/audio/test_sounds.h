// Test-only: media with clicks at known samples, made in the test (WAV written here, other
// formats by the ffmpeg command line from it), and the onsets found in decoded sound.
#ifndef PAGEREEL_AUDIO_TEST_SOUNDS_H_
#define PAGEREEL_AUDIO_TEST_SOUNDS_H_

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace pagereel::audio::test_sounds {

// A click: 2 ms of a 3 kHz cosine at 0.8, its first sample at full height, so its onset is
// one sample wherever a codec puts it.
inline void AddClick(std::vector<float>* samples, int channels, int rate, int64_t at, float level = 0.8f) {
  const int64_t length = rate / 500;
  for (int64_t k = 0; k < length; ++k) {
    const int64_t i = at + k;
    if (i < 0 || (i + 1) * channels > static_cast<int64_t>(samples->size())) break;
    for (int c = 0; c < channels; ++c) {
      (*samples)[static_cast<size_t>(i * channels + c)] +=
          level * static_cast<float>(std::cos(2 * M_PI * 3000.0 * static_cast<double>(k) / rate));
    }
  }
}

// `seconds` of silence with a click at each of `clicks` (samples).
inline std::vector<float> ClickTrack(int rate, int channels, double seconds, const std::vector<int64_t>& clicks) {
  std::vector<float> samples(static_cast<size_t>(std::llround(seconds * rate)) * channels);
  for (int64_t at : clicks) AddClick(&samples, channels, rate, at);
  return samples;
}

// `seconds` of a 440 Hz sine at `level`.
inline std::vector<float> Tone(int rate, int channels, double seconds, float level) {
  std::vector<float> samples(static_cast<size_t>(std::llround(seconds * rate)) * channels);
  for (size_t i = 0; i < samples.size() / channels; ++i) {
    for (int c = 0; c < channels; ++c) {
      samples[i * channels + c] = level * static_cast<float>(std::sin(2 * M_PI * 440.0 * static_cast<double>(i) / rate));
    }
  }
  return samples;
}

// A 16-bit PCM WAV file of `samples` (interleaved), as bytes.
inline std::string Wav(const std::vector<float>& samples, int channels, int rate) {
  std::string out;
  auto put = [&](uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  const uint32_t data = static_cast<uint32_t>(samples.size() * 2);
  out += "RIFF";
  put(36 + data, 4);
  out += "WAVEfmt ";
  put(16, 4);
  put(1, 2);  // PCM
  put(static_cast<uint32_t>(channels), 2);
  put(static_cast<uint32_t>(rate), 4);
  put(static_cast<uint32_t>(rate * channels * 2), 4);
  put(static_cast<uint32_t>(channels * 2), 2);
  put(16, 2);
  out += "data";
  put(data, 4);
  for (float s : samples) {
    const long v = std::lround(std::fmax(-1.0, std::fmin(1.0, s)) * 32767.0);
    put(static_cast<uint32_t>(static_cast<int16_t>(v)) & 0xffff, 2);
  }
  return out;
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `wav` encoded by the ffmpeg command line with `codec_args` into `out`; its bytes, or
// empty if ffmpeg failed.
inline std::string Encoded(const std::string& wav, const std::string& out, const std::string& codec_args) {
  const std::string command = "ffmpeg -nostdin -v error -y -i '" + wav + "' " + codec_args + " '" + out + "'";
  if (std::system(command.c_str()) != 0) return std::string();
  return ReadFile(out);
}

// The samples (of the first channel of interleaved `samples`) where a sound begins: louder
// than `threshold` after at least `quiet` samples below it.
inline std::vector<int64_t> Onsets(const std::vector<float>& samples, int channels, float threshold = 0.3f,
                                   int64_t quiet = 2400) {
  std::vector<int64_t> out;
  int64_t last_loud = -quiet - 1;
  const int64_t n = static_cast<int64_t>(samples.size()) / channels;
  for (int64_t i = 0; i < n; ++i) {
    if (std::fabs(samples[static_cast<size_t>(i * channels)]) <= threshold) continue;
    if (i - last_loud > quiet) out.push_back(i);
    last_loud = i;
  }
  return out;
}

// The loudest sample of the first channel in [from, to).
inline float Peak(const std::vector<float>& samples, int channels, int64_t from, int64_t to) {
  float peak = 0;
  for (int64_t i = from; i < to && (i + 1) * channels <= static_cast<int64_t>(samples.size()); ++i) {
    peak = std::fmax(peak, std::fabs(samples[static_cast<size_t>(i * channels)]));
  }
  return peak;
}

// What the sound tests of films (render/sound_render_test.cc) and of clips
// (serve/clip_test.cc) serve: a page that starts clicks.wav from a timer and autoplays a
// quiet tone.wav, a page without sound, and the two WAVs.
//
// Media times of the clicks in clicks.wav, in samples at 48 kHz (0.1, 0.35, 0.8 s); the
// page starts it at film time 0.5 s (kClicksStart).
inline const std::vector<int64_t> kClicks = {4800, 16800, 38400};
inline constexpr int64_t kClicksStart = 24000;

inline constexpr char kClicksPage[] = R"(<!doctype html>
<body style="background:#123">
<audio id="tone" autoplay src="tone.wav"></audio>
<script>
  // At frame 0, a timer for 500 ms: the clicks start then, from a detached element.
  requestAnimationFrame(() => setTimeout(() => new Audio('clicks.wav').play(), 500));
</script>
</body>)";

inline constexpr char kSilentPage[] = R"(<!doctype html><body style="background:#321"></body>)";

// clicks.wav: 1.5 s, mono, 48 kHz, a click at each of kClicks.
inline std::string ClicksWav() { return Wav(ClickTrack(48000, 1, 1.5, kClicks), 1, 48000); }
// tone.wav: 3 s of a 440 Hz sine at 0.05 (under Onsets' threshold), stereo, 48 kHz.
inline std::string ToneWav() { return Wav(Tone(48000, 2, 3, 0.05f), 2, 48000); }

}  // namespace pagereel::audio::test_sounds

#endif  // PAGEREEL_AUDIO_TEST_SOUNDS_H_
