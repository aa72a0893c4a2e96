// Timeline: what a page did with sound, on film time, as plain data (audio/README.md has
// the whole design). Each sound is one source of media bytes (stored once by content hash,
// audio/media_store.h) and the spans in which it played: from a film time, at a media
// offset, rate and volume, until a pause, a change, its removal or the end of its media.
//
// A timeline knows what happened in a window of film time [from, until): it lists every
// span that was playing at some time in that window, or ended exactly at `from`, with its
// whole history (a span that began before `from` keeps its start). A span still playing at
// `until` has no end (kOpen): what became of it is known only to a later window. Render's
// segments each store the timeline of what their page ran (from frame 0, pre-roll too, to
// the segment's end: audio/README.md); Merge() joins them into the film's and checks that
// windows which both saw a span describe it alike (a lane that reached its segment by a
// jump may have started a sound elsewhere than the lane before it did).
//
// Times are exact rationals of a second (frame n at rate r is n * r.den / r.num), so a span
// started on a frame starts on that frame's sample (SampleAt), whatever the rate.
//
// Plain values; any thread.
#ifndef PAGEREEL_AUDIO_TIMELINE_H_
#define PAGEREEL_AUDIO_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/rational.h"
#include "base/status.h"

namespace pagereel::audio {

// The sample a film time falls on, at the film's 48 kHz (encode/sound.h): t * 48000,
// rounded to the nearest (halves up). A film of n frames has encode::SoundSamples(n, fps)
// samples (rounded down, as live counts them). REQUIRES: t >= 0.
int64_t SampleAt(Rational t);

// Film time `t` as text: "3/2", "0", "1001/30000" (Rational::ToString), and back. The
// reader takes an integer or a fraction of integers with a positive denominator.
std::string TimeText(Rational t);
Result<Rational> ParseTime(std::string_view text);

// Why a span stopped.
enum class SpanEnd {
  kOpen,      // Still playing at the timeline's `until`: `end` is unset.
  kPaused,    // pause(), or the page stopped the sound.
  kChanged,   // A seek, or a new rate, volume, mute or loop: the next span carries on.
  kRemoved,   // The element left the document and was not put back.
  kMediaEnd,  // The media ran out (not looping).
};
std::string_view SpanEndName(SpanEnd end);  // "open", "paused", "changed", ...

struct Span {
  Rational start;                // Film time of the span's first sample.
  std::optional<Rational> end;   // Film time it stopped at; unset while kOpen.
  SpanEnd ended_by = SpanEnd::kOpen;
  Rational offset;               // Media time (s) playing at `start`.
  double rate = 1;               // playbackRate, above 0 and at most 16.
  bool preserves_pitch = true;   // HTMLMediaElement.preservesPitch.
  double volume = 1;             // After mute: 0 when muted. >= 0.
  bool loop = false;             // At the media's end, carries on from media time 0.

  friend bool operator==(const Span&, const Span&) = default;
};

struct Sound {
  std::string id;      // The page's name for it, the same in every lane: "media-3".
  std::string source;  // What a user recognises, for messages: "<audio src=click.wav>".
  std::string media;   // SHA-256 of the media bytes, 64 hex digits (audio/media_store.h).
  std::vector<Span> spans;  // In film order; each ends before the next starts.
  // Media the page made as the film went (Web Audio's rendered PCM, capture/web_audio.h):
  // a window that saw the sound still playing at its end holds the media made so far, so
  // a later window's media is longer, and Merge compares only the spans of such a sound.
  bool made = false;

  friend bool operator==(const Sound&, const Sound&) = default;
};

// Sound the page made that the film does not carry, for the summary and --strict:
// a MediaStream, an MSE player, speech synthesis, media that failed to fetch.
struct LeftOut {
  std::string source;
  Rational at;
  std::string reason;

  friend bool operator==(const LeftOut&, const LeftOut&) = default;
};

struct Timeline {
  Rational from;
  Rational until;
  std::vector<Sound> sounds;
  std::vector<LeftOut> left_out;

  bool empty() const { return sounds.empty(); }
  friend bool operator==(const Timeline&, const Timeline&) = default;
};

// The timeline as JSON text ({"format": "pagereel-sound/1", "from": "0", ...}), and back.
// The reader checks everything a mixer relies on and names the sound and span that is
// wrong: times in order, each span inside the window's rules, rates above 0, volumes of 0
// or more, media hashes of 64 hex digits.
std::string ToJson(const Timeline& timeline);
Result<Timeline> FromJson(std::string_view json);

// What `timeline` knows of [from, until) (both within its own window): the spans playing
// then, as a timeline of that window would list them (ends at or after `until` unset).
Timeline Restrict(const Timeline& timeline, Rational from, Rational until);

// The film's timeline from its segments' (any order; windows may overlap but must leave
// no gap), its sounds in the order they first play (then by id), however the segments
// were cut. Where two windows share time, the spans both saw must agree; the error
// (kFailedPrecondition) names the sound, the film time and what differs.
Result<Timeline> Merge(const std::vector<Timeline>& parts);

}  // namespace pagereel::audio

#endif  // PAGEREEL_AUDIO_TIMELINE_H_
