#include "audio/summary.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace pagereel::audio {

std::string FrameText(Rational at, Rational fps) {
  const auto frame = static_cast<int64_t>(__int128{at.num} * fps.num / (__int128{at.den} * fps.den));
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", at.ToDouble());
  return "frame " + std::to_string(frame) + " (" + seconds + " s)";
}

std::string LeftOutText(const LeftOut& left_out, Rational fps) {
  return left_out.source + " at " + FrameText(left_out.at, fps) + ": " + left_out.reason;
}

std::string ProblemText(const Mixer::Problem& problem, Rational fps) {
  return "at " + FrameText(problem.at, fps) + ": " + problem.text;
}

std::vector<Heard> SoundsHeard(const Timeline& timeline) {
  std::vector<Heard> heard;
  for (const Sound& s : timeline.sounds) {
    if (s.spans.empty()) continue;
    if (s.made && std::any_of(heard.begin(), heard.end(),
                              [&](const Heard& h) { return h.source == s.source; })) {
      continue;
    }
    heard.push_back({s.source, s.spans.front().start});
  }
  return heard;
}

std::string ListText(const std::vector<std::string>& lines, size_t shown) {
  std::string text;
  for (size_t i = 0; i < lines.size() && i < shown; ++i) text += (i ? "; " : "") + lines[i];
  if (lines.size() > shown) text += "; and " + std::to_string(lines.size() - shown) + " more";
  return text;
}

}  // namespace pagereel::audio
