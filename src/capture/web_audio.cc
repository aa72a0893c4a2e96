#include "capture/web_audio.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

extern "C" {
#include <libavutil/base64.h>
}

namespace pagereel::capture {
namespace {

using nlohmann::json;

constexpr int64_t kRate = 48000;  // The film's (encode/sound.h); the page renders at it too.

Rational SampleTime(int64_t sample) { return Rational::Make(sample, kRate); }

void PutLittleEndian(std::string& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string FloatWav(const float* samples, size_t frames) {
  const uint32_t data = static_cast<uint32_t>(frames * 2 * sizeof(float));
  std::string out;
  out.reserve(44 + data);
  out += "RIFF";
  PutLittleEndian(out, 36 + data, 4);
  out += "WAVEfmt ";
  PutLittleEndian(out, 16, 4);
  PutLittleEndian(out, 3, 2);  // WAVE_FORMAT_IEEE_FLOAT
  PutLittleEndian(out, 2, 2);
  PutLittleEndian(out, kRate, 4);
  PutLittleEndian(out, kRate * 2 * sizeof(float), 4);
  PutLittleEndian(out, 2 * sizeof(float), 2);
  PutLittleEndian(out, 32, 2);
  out += "data";
  PutLittleEndian(out, data, 4);
  static_assert(std::endian::native == std::endian::little, "WAV samples are little-endian");
  out.append(reinterpret_cast<const char*>(samples), data);
  return out;
}

Status WebAudioTrack::Add(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InternalError("the page script's Web Audio " + std::string(text.substr(0, 120)) + " " + why +
                         "; this is a fault in pagereel, please report it");
  };
  json blocks = json::parse(text, nullptr, false);
  if (!blocks.is_array()) return bad("is not a list");
  for (const json& b : blocks) {
    if (!b.is_object() || !b["id"].is_string() || !b["at"].is_number_integer() || !b["pcm"].is_string() ||
        b["at"].get<int64_t>() < 0) {
      return bad("has a block without a context, a film sample or samples");
    }
    const std::string& pcm = b["pcm"].get_ref<const std::string&>();
    std::string bytes(AV_BASE64_DECODE_SIZE(pcm.size()), '\0');
    const int n = av_base64_decode(reinterpret_cast<uint8_t*>(bytes.data()), pcm.c_str(),
                                   static_cast<int>(bytes.size()));
    if (n < 0 || n % (2 * sizeof(float)) != 0) return bad("has damaged samples");
    std::vector<float> samples(static_cast<size_t>(n) / sizeof(float));
    std::memcpy(samples.data(), bytes.data(), static_cast<size_t>(n));
    Add(b["id"].get<std::string>(), b["at"].get<int64_t>(), samples);
  }
  return Status::Ok();
}

void WebAudioTrack::Add(const std::string& id, int64_t at, const std::vector<float>& samples) {
  std::map<int64_t, Piece>& pieces = contexts_[id];
  const int64_t frames = static_cast<int64_t>(samples.size() / 2);
  for (int64_t done = 0; done < frames;) {
    const int64_t sample = at + done;
    const int64_t index = sample / kPieceSamples;
    const int64_t from = sample - index * kPieceSamples;  // Within the piece.
    const int64_t count = std::min(frames - done, kPieceSamples - from);
    Piece& piece = pieces[index];
    if (piece.media.empty()) {  // A piece stored whole is never rendered again.
      if (static_cast<int64_t>(piece.samples.size()) < 2 * (from + count)) {
        piece.samples.resize(static_cast<size_t>(2 * (from + count)), 0.0f);
      }
      std::copy_n(samples.begin() + 2 * done, 2 * count, piece.samples.begin() + 2 * from);
      piece.end = std::max(piece.end, from + count);
    }
    done += count;
  }
}

Result<std::vector<audio::Sound>> WebAudioTrack::Sounds(const audio::MediaStore& store, Rational until) {
  std::vector<audio::Sound> sounds;
  for (auto& [id, pieces] : contexts_) {
    // "audio-context-2" (or an iframe's URL#audio-context-1): "AudioContext 2".
    const size_t number = id.rfind('-');
    const std::string source = "Web Audio (AudioContext " + id.substr(number + 1) + ")";
    for (auto& [index, piece] : pieces) {
      const int64_t first = index * kPieceSamples;
      const Rational end = SampleTime(first + kPieceSamples);
      // Whole once rendered to its end; a piece ending at `until` is still open there.
      const bool whole = piece.end == kPieceSamples && end.num * until.den < until.num * end.den;
      audio::Sound sound;
      sound.id = id + "." + std::to_string(index);
      sound.source = source;
      sound.made = true;
      if (!piece.media.empty()) {
        sound.media = piece.media;
      } else {
        PR_ASSIGN_OR_RETURN(sound.media, store.Put(FloatWav(piece.samples.data(), static_cast<size_t>(piece.end))));
        if (whole) {
          piece.media = sound.media;
          std::vector<float>().swap(piece.samples);
        }
      }
      audio::Span span;
      span.start = SampleTime(first);
      if (whole) {
        span.end = end;
        span.ended_by = audio::SpanEnd::kMediaEnd;
      }
      sound.spans.push_back(span);
      sounds.push_back(std::move(sound));
    }
  }
  return sounds;
}

}  // namespace pagereel::capture
