#include "live/show.h"

#include <cctype>
#include <set>

namespace pagereel::live {

Status ValidateShow(const ShowSpec& show) {
  if (show.width < 16 || show.height < 16 || show.width > 7680 || show.height > 4320) {
    return InvalidArgumentError("the show's size " + std::to_string(show.width) + "x" +
                                std::to_string(show.height) + " is outside 16x16 to 7680x4320");
  }
  if (show.width % 2 != 0 || show.height % 2 != 0) {
    return InvalidArgumentError("the show's size " + std::to_string(show.width) + "x" +
                                std::to_string(show.height) +
                                " must be even in both directions (H.264 needs it)");
  }
  if (show.fps.num <= 0 || show.fps.den <= 0 || show.fps.ToDouble() > 240 ||
      show.fps.ToDouble() < 1) {
    return InvalidArgumentError("the show's rate " + show.fps.ToString() +
                                " is outside 1 to 240 frames per second");
  }
  if (show.sources.empty()) return InvalidArgumentError("the show has no sources");
  if (show.outputs.empty()) return InvalidArgumentError("the show has no outputs");
  if (show.clock.late_threshold.count() <= 0) {
    return InvalidArgumentError("the late-tick threshold must be greater than zero");
  }
  std::set<std::string> ids;
  for (const SourceSpec& s : show.sources) {
    const std::string name = "source '" + s.id + "'";
    if (s.id.empty()) return InvalidArgumentError("a source has no id");
    if (!IsValidId(s.id)) {
      return InvalidArgumentError(name + ": an id is 1 to 64 letters, digits, _, - and .");
    }
    if (!ids.insert(s.id).second) return InvalidArgumentError("two sources are called '" + s.id + "'");
    if (s.url.empty()) return InvalidArgumentError(name + " has no url");
    if (s.width < 0 || s.height < 0 || s.width > 7680 || s.height > 4320) {
      return InvalidArgumentError(name + ": size " + std::to_string(s.width) + "x" +
                                  std::to_string(s.height) + " is outside 0 to 7680x4320");
    }
    if (s.opacity < 0 || s.opacity > 1) {
      return InvalidArgumentError(name + ": opacity " + std::to_string(s.opacity) +
                                  " is outside 0 to 1");
    }
    if (!(s.volume >= 0 && s.volume <= kMaxVolume)) {
      return InvalidArgumentError(name + ": volume " + std::to_string(s.volume) + " is outside 0 to " +
                                  std::to_string(static_cast<int>(kMaxVolume)));
    }
    const int width = s.width > 0 ? s.width : show.width;
    const int height = s.height > 0 ? s.height : show.height;
    if (s.x >= show.width || s.y >= show.height || s.x + width <= 0 || s.y + height <= 0) {
      return InvalidArgumentError(name + ": at x=" + std::to_string(s.x) + ", y=" +
                                  std::to_string(s.y) + " its " + std::to_string(width) + "x" +
                                  std::to_string(height) + " picture lies wholly outside the " +
                                  std::to_string(show.width) + "x" + std::to_string(show.height) +
                                  " program");
    }
    if (s.worker < -1 || s.worker > 63) {
      return InvalidArgumentError(name + ": worker " + std::to_string(s.worker) +
                                  " is outside 0 to 63");
    }
  }
  std::set<std::string> targets;
  for (const OutputSpec& o : show.outputs) {
    if (!IsValidId(o.id)) {
      return InvalidArgumentError("output '" + o.id +
                                  "': an id is 1 to 64 letters, digits, _, - and .");
    }
    if (o.stream.sink.kind != encode::Sink::Kind::kMemory &&
        !targets.insert(o.stream.sink.target).second) {
      return InvalidArgumentError("two outputs go to " + o.stream.sink.target);
    }
  }
  return Status::Ok();
}

bool IsValidId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

Rational StaggerPhase(int worker) {
  int64_t num = 0;
  int64_t den = 1;
  for (unsigned k = static_cast<unsigned>(worker); k != 0; k >>= 1) {
    num = num * 2 + (k & 1);
    den *= 2;
  }
  return Rational::Make(num, den);
}

}  // namespace pagereel::live
