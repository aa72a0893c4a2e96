// WebAudioTrack: the sound a page's AudioContexts rendered (page_script.js, "Web Audio":
// stand-ins backed by OfflineAudioContexts, rendered up to each frame's time), gathered
// from the page on film samples and made into sounds of a timeline (audio/timeline.h).
//
// Each context's sound is cut into pieces of kPieceSamples of film time, each piece a
// sound of its own with one span and its media (a float WAV) stored by hash
// (audio::MediaStore), marked made (audio::Sound::made). A piece the page has rendered to
// its end has the same bytes in every segment, lane and run (rendering is deterministic),
// so it is stored once; the piece still being rendered at a segment's end is stored as far
// as it goes, its span left open, and a later segment holds more of it. So what a film
// stores is about its own length, and a segment's timeline names at most one unfinished
// piece per context.
//
// Not thread-safe: Page's thread.
#ifndef PAGEREEL_CAPTURE_WEB_AUDIO_H_
#define PAGEREEL_CAPTURE_WEB_AUDIO_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "audio/media_store.h"
#include "audio/timeline.h"
#include "base/rational.h"
#include "base/status.h"

namespace pagereel::capture {

class WebAudioTrack {
 public:
  // Ten seconds at the film's 48 kHz: 3.8 MB of stereo float per piece.
  static constexpr int64_t kPieceSamples = 480'000;

  // Adds what the page's takeWebAudio() returned: JSON [{id, at, pcm}], `at` the film
  // sample of the first, `pcm` base64 of little-endian float32 stereo, interleaved.
  // Errors name what was wrong (a fault in pagereel: the page script writes it).
  Status Add(std::string_view json);

  // Adds `samples` (interleaved stereo) of context `id` from film sample `at` on; where
  // two renders overlap, the later one's samples stand.
  void Add(const std::string& id, int64_t at, const std::vector<float>& samples);

  // The sounds of everything added so far, for a timeline of [0, until): finished pieces
  // (their media stored on first use and then dropped from memory) and each context's
  // unfinished one, stored as far as it goes.
  Result<std::vector<audio::Sound>> Sounds(const audio::MediaStore& store, Rational until);

 private:
  struct Piece {
    std::vector<float> samples;  // Interleaved stereo from the piece's first sample; dropped once stored whole.
    int64_t end = 0;             // Samples of it rendered (from its start).
    std::string media;           // Hash of the whole piece, once stored.
  };
  // Context id -> piece index -> piece.
  std::map<std::string, std::map<int64_t, Piece>> contexts_;
};

// A WAV file (IEEE float, 32-bit, 48 kHz) of interleaved stereo `samples`.
std::string FloatWav(const float* samples, size_t frames);

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_WEB_AUDIO_H_
