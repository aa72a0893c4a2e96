// What a film's sound costs: one step of bench/sound_bench.sh per process, so each run's
// peak memory is its own. Steps:
//   film-pictures OUT SECONDS            an MP4 of moving 640x360 pictures, no sound
//   film-sound    OUT SECONDS MEDIA      the same film with MEDIA playing from frame 0
//                                        (mixed by audio::Mixer, AAC, one FilmWriter)
//   segments      DIR SECONDS            the pictures as 10 s segments (DIR/seg-N.mp4)
//   join-pictures DIR SECONDS OUT        the segments joined, no sound
//   join-sound    DIR SECONDS OUT MEDIA  the segments joined with MEDIA's sound (how render
//                                        makes a film: the sound is made once, at the join)
//   mix           SECONDS MEDIA          the mix alone, read and dropped
// Prints one line: the step and its wall seconds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "audio/media_store.h"
#include "audio/mixer.h"
#include "encode/concat.h"
#include "encode/film_writer.h"

namespace {

using namespace pagereel;
namespace fs = std::filesystem;

constexpr int kWidth = 640;
constexpr int kHeight = 360;
constexpr Rational kFps{30, 1};
constexpr int64_t kSegmentFrames = 300;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "sound_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const Status& s) {
  if (!s.ok()) Fail(std::string(s.message()));
}

// A music file played from film time 0 to the end, as one sound.
std::unique_ptr<audio::Mixer> Music(const std::string& media, int64_t frames, const std::string& store_dir) {
  std::ifstream in(media, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  audio::MediaStore store(store_dir);
  Result<std::string> sha = store.Put(bytes);
  Check(sha.status());
  audio::Timeline t;
  t.until = Rational::Make(frames * kFps.den, kFps.num);
  t.sounds.push_back(audio::Sound{"music", media, *sha, {audio::Span{}}});
  Result<std::unique_ptr<audio::Mixer>> mixer = audio::Mixer::Open(t, store, encode::SoundSamples(frames, kFps));
  Check(mixer.status());
  if (!(*mixer)->problems().empty()) Fail((*mixer)->problems().front().text);
  return std::move(mixer).value();
}

// Writes frames [first, first + count) of the moving picture to `path`.
void WritePictures(const std::string& path, int64_t first, int64_t count, encode::SoundSource* sound) {
  encode::FilmWriterOptions options;
  options.film.kind = encode::FilmKind::kMp4;
  options.film.width = kWidth;
  options.film.height = kHeight;
  options.film.fps = kFps;
  options.path = path;
  options.sound = sound;
  Result<std::unique_ptr<encode::FilmWriter>> writer = encode::FilmWriter::Open(options);
  Check(writer.status());
  std::vector<uint8_t> rgba(static_cast<size_t>(kWidth) * kHeight * 4);
  for (int64_t f = first; f < first + count; ++f) {
    for (int y = 0; y < kHeight; ++y) {
      uint8_t* row = &rgba[static_cast<size_t>(y) * kWidth * 4];
      for (int x = 0; x < kWidth; ++x) {
        row[4 * x] = static_cast<uint8_t>(x + 2 * f);
        row[4 * x + 1] = static_cast<uint8_t>(y + f);
        row[4 * x + 2] = static_cast<uint8_t>((x ^ y) + 3 * f);
        row[4 * x + 3] = 255;
      }
    }
    Check((*writer)->Write(encode::RgbaView{rgba.data(), kWidth, kHeight, kWidth * 4}));
  }
  Check((*writer)->Finish());
}

std::vector<encode::SegmentFile> Segments(const std::string& dir, int64_t frames) {
  std::vector<encode::SegmentFile> out;
  for (int64_t first = 0, i = 0; first < frames; first += kSegmentFrames, ++i) {
    out.push_back({dir + "/seg-" + std::to_string(i) + ".mp4", first, std::min(kSegmentFrames, frames - first)});
  }
  return out;
}

void Join(const std::string& dir, int64_t frames, const std::string& out, encode::SoundSource* sound) {
  encode::JoinOptions options;
  options.kind = encode::FilmKind::kMp4;
  options.fps = kFps;
  options.sound = sound;
  Check(encode::JoinSegments(Segments(dir, frames), out, options));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2) Fail("usage: see bench/sound_bench.cc");
  const std::string& step = args[0];
  auto arg = [&](size_t i) {
    if (i >= args.size()) Fail("step " + step + " needs more arguments");
    return args[i];
  };
  const auto started = std::chrono::steady_clock::now();
  const std::string scratch = (fs::temp_directory_path() / ("sound-bench-media-" + std::to_string(::getpid()))).string();
  if (step == "mix") {
    const int64_t frames = std::stoll(arg(1)) * kFps.num;
    std::unique_ptr<audio::Mixer> mixer = Music(arg(2), frames, scratch);
    std::vector<float> buffer(2 * 4096);
    for (;;) {
      Result<int64_t> got = mixer->Read(buffer.data(), 4096);
      Check(got.status());
      if (*got == 0) break;
    }
  } else {
    const int64_t frames = std::stoll(arg(2)) * kFps.num;
    if (step == "film-pictures") {
      WritePictures(arg(1), 0, frames, nullptr);
    } else if (step == "film-sound") {
      std::unique_ptr<audio::Mixer> mixer = Music(arg(3), frames, scratch);
      WritePictures(arg(1), 0, frames, mixer.get());
    } else if (step == "segments") {
      for (const encode::SegmentFile& s : Segments(arg(1), frames)) WritePictures(s.path, s.first_frame, s.frame_count, nullptr);
    } else if (step == "join-pictures") {
      Join(arg(1), frames, arg(3), nullptr);
    } else if (step == "join-sound") {
      std::unique_ptr<audio::Mixer> mixer = Music(arg(4), frames, scratch);
      Join(arg(1), frames, arg(3), mixer.get());
    } else {
      Fail("unknown step " + step);
    }
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
  std::printf("%s %.3f\n", step.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return 0;
}
