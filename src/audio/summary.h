// How pagereel names a film's sound to its user: where in the film a sound was (frame and
// seconds), which sounds were mixed and which were left out and why. Render's summary and
// serve's clip answers say it alike.
//
// Pure functions; any thread.
#ifndef PAGEREEL_AUDIO_SUMMARY_H_
#define PAGEREEL_AUDIO_SUMMARY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "audio/mixer.h"
#include "audio/timeline.h"
#include "base/rational.h"

namespace pagereel::audio {

// Where film time `at` falls in a film of `fps`: "frame 45 (1.500 s)".
std::string FrameText(Rational at, Rational fps);

// "<audio src=a.mp3> at frame 45 (1.500 s): could not fetch ...".
std::string LeftOutText(const LeftOut& left_out, Rational fps);

// A sound the mixer left out or cut short: "at frame 45 (1.500 s): sound 'media-2' ...".
std::string ProblemText(const Mixer::Problem& problem, Rational fps);

// A sound as a user knows it: its source and when it first plays.
struct Heard {
  std::string source;
  Rational from;
};
// The sounds `timeline` plays, in its order; a Web Audio context's pieces of film time
// (capture/web_audio.h) are one sound.
std::vector<Heard> SoundsHeard(const Timeline& timeline);

// The first `shown` of `lines` joined by "; ", and "; and N more" for the rest.
std::string ListText(const std::vector<std::string>& lines, size_t shown);

}  // namespace pagereel::audio

#endif  // PAGEREEL_AUDIO_SUMMARY_H_
