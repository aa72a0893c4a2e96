#include "audio/timeline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "encode/sound.h"

namespace pagereel::audio {

namespace {

using json = nlohmann::json;

// 128-bit products keep t * 48000 exact for any film length; __extension__ tells
// -Wpedantic the GCC/Clang type is intended.
__extension__ typedef __int128 Int128;

constexpr char kFormat[] = "pagereel-sound/1";

constexpr SpanEnd kEnds[] = {SpanEnd::kOpen, SpanEnd::kPaused, SpanEnd::kChanged,
                             SpanEnd::kRemoved, SpanEnd::kMediaEnd};

bool Less(Rational a, Rational b) { return Int128{a.num} * b.den < Int128{b.num} * a.den; }
bool LessOrEqual(Rational a, Rational b) { return !Less(b, a); }
Rational Min(Rational a, Rational b) { return Less(a, b) ? a : b; }

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool IsHash(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Whether `span` was playing at some time in [from, until), or ended exactly at `from` (a
// window starting there sees the pause that ended it); for from == until, whether it was
// playing just before that instant.
bool Alive(const Span& span, Rational from, Rational until) {
  return Less(span.start, until) && (!span.end || LessOrEqual(from, *span.end));
}

// `span` as a window ending at `until` knows it: an end at or after `until` is not yet known.
Span KnownUntil(Span span, Rational until) {
  if (span.end && LessOrEqual(until, *span.end)) {
    span.end.reset();
    span.ended_by = SpanEnd::kOpen;
  }
  return span;
}

std::string Where(const Sound& sound, size_t span) {
  return "sound '" + sound.id + "' (" + sound.source + ") span " + std::to_string(span + 1);
}

json SpanJson(const Span& s) {
  json j = {{"start", TimeText(s.start)},
            {"offset", TimeText(s.offset)},
            {"rate", s.rate},
            {"preserves_pitch", s.preserves_pitch},
            {"volume", s.volume},
            {"loop", s.loop},
            {"ended_by", SpanEndName(s.ended_by)}};
  if (s.end) j["end"] = TimeText(*s.end);
  return j;
}

// A time field of `j`; `what` names it in errors.
Result<Rational> TimeField(const json& j, const char* key, const std::string& what) {
  if (!j.contains(key) || !j[key].is_string()) {
    return InvalidArgumentError(what + " has no \"" + key + "\" time (text such as \"3/2\")");
  }
  Result<Rational> t = ParseTime(j[key].get<std::string>());
  if (!t.ok()) return InvalidArgumentError(what + ": " + std::string(t.status().message()));
  return t;
}

Result<double> NumberField(const json& j, const char* key, double fallback, const std::string& what) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) return InvalidArgumentError(what + ": \"" + key + "\" is not a number");
  const double v = j[key].get<double>();
  if (!std::isfinite(v)) return InvalidArgumentError(what + ": \"" + key + "\" is not finite");
  return v;
}

Result<Span> SpanFromJson(const json& j, const std::string& what) {
  if (!j.is_object()) return InvalidArgumentError(what + " is not an object");
  Span s;
  PR_ASSIGN_OR_RETURN(s.start, TimeField(j, "start", what));
  PR_ASSIGN_OR_RETURN(s.offset, TimeField(j, "offset", what));
  if (j.contains("end")) {
    PR_ASSIGN_OR_RETURN(s.end, TimeField(j, "end", what));
  }
  PR_ASSIGN_OR_RETURN(s.rate, NumberField(j, "rate", 1, what));
  PR_ASSIGN_OR_RETURN(s.volume, NumberField(j, "volume", 1, what));
  s.preserves_pitch = j.value("preserves_pitch", true);
  s.loop = j.value("loop", false);
  const std::string ended_by = j.value("ended_by", "open");
  const SpanEnd* named = std::find_if(std::begin(kEnds), std::end(kEnds),
                                      [&](SpanEnd e) { return SpanEndName(e) == ended_by; });
  if (named == std::end(kEnds)) {
    return InvalidArgumentError(what + ": \"ended_by\" is '" + ended_by +
                                "', not open, paused, changed, removed or media-end");
  }
  s.ended_by = *named;
  // Chromium plays media elements at 1/16 to 16 times; Web Audio comes as rendered PCM.
  if (s.rate <= 0 || s.rate > 16) {
    return InvalidArgumentError(what + ": rate " + std::to_string(s.rate) + " is not above 0 and at most 16");
  }
  if (s.volume < 0) return InvalidArgumentError(what + ": volume " + std::to_string(s.volume) + " is below 0");
  if ((s.ended_by == SpanEnd::kOpen) != !s.end) {
    return InvalidArgumentError(what + (s.end ? " has an end but is marked open"
                                              : " has no end and is not marked open"));
  }
  if (s.end && LessOrEqual(*s.end, s.start)) {
    return InvalidArgumentError(what + " ends at " + TimeText(*s.end) + ", not after its start " +
                                TimeText(s.start));
  }
  return s;
}

// The order spans are compared and kept in: by sound, then start.
using SpanKey = std::tuple<std::string, int64_t, int64_t>;

}  // namespace

int64_t SampleAt(Rational t) {
  const Int128 scaled = Int128{t.num} * encode::kSoundRate;
  return static_cast<int64_t>((2 * scaled + t.den) / (2 * Int128{t.den}));
}

std::string TimeText(Rational t) { return t.ToString(); }

Result<Rational> ParseTime(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return InvalidArgumentError("bad film time '" + std::string(text) + "': " + std::string(why) +
                                " (write seconds as an integer or a fraction such as 1001/30000)");
  };
  int64_t num = 0;
  int64_t den = 1;
  const size_t slash = text.find('/');
  if (!ParseInt(text.substr(0, slash), &num) ||
      (slash != std::string_view::npos && !ParseInt(text.substr(slash + 1), &den))) {
    return bad("not an integer or a fraction of two integers");
  }
  if (den <= 0) return bad("the denominator must be positive");
  if (num < 0) return bad("film times are not negative");
  return Rational::Make(num, den);
}

std::string_view SpanEndName(SpanEnd end) {
  switch (end) {
    case SpanEnd::kOpen: return "open";
    case SpanEnd::kPaused: return "paused";
    case SpanEnd::kChanged: return "changed";
    case SpanEnd::kRemoved: return "removed";
    case SpanEnd::kMediaEnd: return "media-end";
  }
  return "open";
}

std::string ToJson(const Timeline& timeline) {
  json sounds = json::array();
  for (const Sound& sound : timeline.sounds) {
    json spans = json::array();
    for (const Span& s : sound.spans) spans.push_back(SpanJson(s));
    json js = {{"id", sound.id}, {"source", sound.source}, {"media", sound.media}, {"spans", spans}};
    if (sound.made) js["made"] = true;
    sounds.push_back(std::move(js));
  }
  json left_out = json::array();
  for (const LeftOut& l : timeline.left_out) {
    left_out.push_back({{"source", l.source}, {"at", TimeText(l.at)}, {"reason", l.reason}});
  }
  json j = {{"format", kFormat},
            {"from", TimeText(timeline.from)},
            {"until", TimeText(timeline.until)},
            {"sounds", sounds},
            {"left_out", left_out}};
  return j.dump(1) + "\n";
}

Result<Timeline> FromJson(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError("a sound timeline is not a JSON object");
  if (j.value("format", "") != kFormat) {
    return InvalidArgumentError("a sound timeline is not in the format " + std::string(kFormat) +
                                " (made by another version of pagereel?)");
  }
  Timeline t;
  PR_ASSIGN_OR_RETURN(t.from, TimeField(j, "from", "the sound timeline"));
  PR_ASSIGN_OR_RETURN(t.until, TimeField(j, "until", "the sound timeline"));
  if (Less(t.until, t.from)) {
    return InvalidArgumentError("the sound timeline's window ends (" + TimeText(t.until) +
                                ") before it starts (" + TimeText(t.from) + ")");
  }
  const json empty = json::array();
  const json& sounds = j.contains("sounds") ? j["sounds"] : empty;
  if (!sounds.is_array()) return InvalidArgumentError("the sound timeline's \"sounds\" is not a list");
  for (const json& js : sounds) {
    if (!js.is_object()) return InvalidArgumentError("a sound of the timeline is not an object");
    Sound sound;
    sound.id = js.value("id", "");
    sound.source = js.value("source", "");
    sound.media = js.value("media", "");
    sound.made = js.value("made", false);
    if (sound.id.empty()) return InvalidArgumentError("a sound of the timeline has no id");
    if (std::any_of(t.sounds.begin(), t.sounds.end(), [&](const Sound& s) { return s.id == sound.id; })) {
      return InvalidArgumentError("the sound timeline names sound '" + sound.id + "' twice");
    }
    if (!IsHash(sound.media)) {
      return InvalidArgumentError("sound '" + sound.id + "' (" + sound.source +
                                  ") names no media by its SHA-256 (64 lowercase hex digits)");
    }
    const json& spans = js.contains("spans") ? js["spans"] : empty;
    if (!spans.is_array()) return InvalidArgumentError("sound '" + sound.id + "': \"spans\" is not a list");
    for (const json& jspan : spans) {
      const std::string what = Where(sound, sound.spans.size());
      PR_ASSIGN_OR_RETURN(Span span, SpanFromJson(jspan, what));
      if (!sound.spans.empty()) {
        const Span& before = sound.spans.back();
        if (!before.end || Less(span.start, *before.end)) {
          return InvalidArgumentError(what + " starts at " + TimeText(span.start) +
                                      ", before the span before it ended");
        }
      }
      if (!Alive(span, t.from, t.until)) {
        return InvalidArgumentError(what + " (" + TimeText(span.start) + " to " +
                                    (span.end ? TimeText(*span.end) : "open") +
                                    ") does not play in the timeline's window " +
                                    TimeText(t.from) + " to " + TimeText(t.until));
      }
      if (span.end && LessOrEqual(t.until, *span.end)) {
        return InvalidArgumentError(what + " ends at " + TimeText(*span.end) +
                                    ", which the timeline cannot know: it ends at " +
                                    TimeText(t.until) + " (leave the span open)");
      }
      sound.spans.push_back(span);
    }
    t.sounds.push_back(std::move(sound));
  }
  const json& left_out = j.contains("left_out") ? j["left_out"] : empty;
  if (!left_out.is_array()) return InvalidArgumentError("the sound timeline's \"left_out\" is not a list");
  for (const json& jl : left_out) {
    if (!jl.is_object()) return InvalidArgumentError("a left-out sound of the timeline is not an object");
    LeftOut l;
    l.source = jl.value("source", "");
    l.reason = jl.value("reason", "");
    PR_ASSIGN_OR_RETURN(l.at, TimeField(jl, "at", "left-out sound '" + l.source + "'"));
    t.left_out.push_back(std::move(l));
  }
  return t;
}

Timeline Restrict(const Timeline& timeline, Rational from, Rational until) {
  Timeline out;
  out.from = from;
  out.until = until;
  for (const Sound& sound : timeline.sounds) {
    Sound kept = sound;
    kept.spans.clear();
    for (const Span& span : sound.spans) {
      if (Alive(span, from, until)) kept.spans.push_back(KnownUntil(span, until));
    }
    if (!kept.spans.empty()) out.sounds.push_back(std::move(kept));
  }
  for (const LeftOut& l : timeline.left_out) {
    if (LessOrEqual(from, l.at) && Less(l.at, until)) out.left_out.push_back(l);
  }
  return out;
}

namespace {

// Spans of `t` alive in [from, until), by sound and start, as a window ending at `until`
// knows them.
std::map<SpanKey, std::pair<const Sound*, Span>> Shared(const Timeline& t, Rational from, Rational until) {
  std::map<SpanKey, std::pair<const Sound*, Span>> out;
  for (const Sound& sound : t.sounds) {
    for (const Span& span : sound.spans) {
      if (!Alive(span, from, until)) continue;
      out.emplace(SpanKey{sound.id, span.start.num, span.start.den},
                  std::pair<const Sound*, Span>{&sound, KnownUntil(span, until)});
    }
  }
  return out;
}

// Times and numbers as a user reads them in a message ("2.500 s", "rate 1"); the JSON keeps
// exact fractions.
std::string Seconds(Rational t) {
  char text[40];
  std::snprintf(text, sizeof text, "%.3f s", t.ToDouble());
  return text;
}

std::string Number(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

std::string Window(const Timeline& t) { return Seconds(t.from) + " to " + Seconds(t.until); }

std::string Describe(const Span& s) {
  return "from " + Seconds(s.start) + " at media time " + Seconds(s.offset) + ", rate " +
         Number(s.rate) + ", volume " + Number(s.volume) + (s.loop ? ", looping" : "") +
         (s.end ? ", " + std::string(SpanEndName(s.ended_by)) + " at " + Seconds(*s.end) : ", playing on");
}

// Whether `a` and `b` (windows a.from <= b.from <= a.until) agree on the time both saw.
Status CheckAgreement(const Timeline& a, const Timeline& b) {
  const Rational from = b.from;
  const Rational until = Min(a.until, b.until);
  auto in_a = Shared(a, from, until);
  auto in_b = Shared(b, from, until);
  const std::string windows = " (the sound timelines of " + Window(a) + " and " + Window(b) +
                              "); a lane that reached its segment by a jump may hear otherwise: "
                              "use exact pre-roll";
  auto differ = [&](const Sound& sound, const Span& span, const std::string& other) {
    return FailedPreconditionError("sound '" + sound.id + "' (" + sound.source + ") played " +
                                   Describe(span) + " in one lane and " + other + " in the other" + windows);
  };
  // A span of one that the other lacks, and what the other has of that sound instead.
  auto unmatched = [&](const auto& in, const auto& other) -> Status {
    for (const auto& [key, found] : in) {
      if (other.contains(key)) continue;
      const auto& [sound, span] = found;
      for (const auto& [other_key, other_found] : other) {
        if (std::get<0>(other_key) == sound->id && !in.contains(other_key)) {
          return differ(*sound, span, Describe(other_found.second));
        }
      }
      return differ(*sound, span, "not");
    }
    return Status::Ok();
  };
  PR_RETURN_IF_ERROR(unmatched(in_a, in_b));
  PR_RETURN_IF_ERROR(unmatched(in_b, in_a));
  for (const auto& [key, found] : in_a) {
    const auto& [sound, span] = found;
    const auto& [other_sound, other_span] = in_b.at(key);
    // Made media of a span still playing at the shared window's end was cut there in one
    // window and later in the other (Sound::made).
    const bool made_so_far = sound->made && other_sound->made && !span.end;
    if (other_sound->media != sound->media && !made_so_far) {
      return differ(*sound, span, "from other media bytes");
    }
    if (other_span != span) return differ(*sound, span, Describe(other_span));
  }
  return Status::Ok();
}

// a and b agree (CheckAgreement); b.until > a.until. Everything a knows that b does not
// (spans over before b.from), then b.
Timeline Extend(const Timeline& a, const Timeline& b) {
  Timeline out;
  out.from = a.from;
  out.until = b.until;
  for (const Sound& sound : a.sounds) {
    Sound kept = sound;
    kept.spans.clear();
    for (const Span& span : sound.spans) {
      if (span.end && Less(*span.end, b.from)) kept.spans.push_back(span);
    }
    const auto later = std::find_if(b.sounds.begin(), b.sounds.end(),
                                    [&](const Sound& s) { return s.id == sound.id; });
    if (later != b.sounds.end()) {
      kept.media = later->media;  // The same, or made further (Sound::made).
      kept.spans.insert(kept.spans.end(), later->spans.begin(), later->spans.end());
    }
    if (!kept.spans.empty()) out.sounds.push_back(std::move(kept));
  }
  for (const Sound& sound : b.sounds) {
    if (std::none_of(out.sounds.begin(), out.sounds.end(), [&](const Sound& s) { return s.id == sound.id; })) {
      out.sounds.push_back(sound);
    }
  }
  out.left_out = a.left_out;
  for (const LeftOut& l : b.left_out) {
    if (std::find(out.left_out.begin(), out.left_out.end(), l) == out.left_out.end()) out.left_out.push_back(l);
  }
  return out;
}

}  // namespace

Result<Timeline> Merge(const std::vector<Timeline>& parts) {
  if (parts.empty()) return InvalidArgumentError("no sound timelines to merge");
  std::vector<const Timeline*> sorted;
  for (const Timeline& t : parts) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Timeline* a, const Timeline* b) {
    return Less(a->from, b->from) || (a->from == b->from && Less(a->until, b->until));
  });
  Timeline merged = *sorted.front();
  for (size_t i = 1; i < sorted.size(); ++i) {
    const Timeline& next = *sorted[i];
    if (Less(merged.until, next.from)) {
      return FailedPreconditionError("no sound timeline covers film time " + Seconds(merged.until) +
                                     " to " + Seconds(next.from) + "; render the segments there again");
    }
    PR_RETURN_IF_ERROR(CheckAgreement(merged, next));
    if (Less(merged.until, next.until)) merged = Extend(merged, next);
  }
  std::stable_sort(merged.sounds.begin(), merged.sounds.end(), [](const Sound& a, const Sound& b) {
    const Rational& sa = a.spans.front().start;
    const Rational& sb = b.spans.front().start;
    return Less(sa, sb) || (sa == sb && a.id < b.id);
  });
  return merged;
}

}  // namespace pagereel::audio
