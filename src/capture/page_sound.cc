#include "capture/page_sound.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "capture/page_session.h"
#include "cdp/json_util.h"

extern "C" {
#include <libavutil/base64.h>
}

namespace pagereel::capture {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(); }

bool Less(Rational a, Rational b) { return __int128{a.num} * b.den < __int128{b.num} * a.den; }

// Seconds as a film time, to the microsecond (media offsets, and times between frames).
Rational Micros(double seconds) { return Rational::Make(std::llround(seconds * 1e6), 1'000'000); }

Result<audio::SpanEnd> EndNamed(const std::string& name) {
  if (name == "paused") return audio::SpanEnd::kPaused;
  if (name == "changed") return audio::SpanEnd::kChanged;
  if (name == "removed") return audio::SpanEnd::kRemoved;
  if (name == "media") return audio::SpanEnd::kMediaEnd;
  return InvalidArgumentError("no such end '" + name + "'");
}

}  // namespace

std::string MiBText(int64_t bytes) {
  char text[32];
  if (bytes % (1 << 20) == 0) {
    std::snprintf(text, sizeof text, "%lld MiB", static_cast<long long>(bytes >> 20));
  } else {
    std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return text;
}

Rational FilmTimeOfMs(double ms, Rational fps) {
  if (!(ms > 0)) return Rational{0, 1};
  if (ms == std::floor(ms)) {
    // The frame presented at `ms`, if any: FrameTimeMillis(n) is just after n's exact time.
    const int64_t guess = static_cast<int64_t>(ms / 1000 * fps.ToDouble());
    for (int64_t n = std::max<int64_t>(0, guess - 1); n <= guess + 1; ++n) {
      if (FrameTimeMillis(n, fps) == static_cast<int64_t>(ms)) {
        return Rational::Make(n * fps.den, fps.num);
      }
    }
  }
  return Micros(ms / 1000);
}

std::vector<std::string> SoundUrls(const std::vector<std::string>& messages) {
  std::vector<std::string> urls;
  std::set<std::string> seen;
  for (const std::string& m : messages) {
    json j = json::parse(m, nullptr, false);
    if (!j.is_object() || !j.contains("url") || !j["url"].is_string()) continue;
    if (seen.insert(j["url"].get<std::string>()).second) urls.push_back(j["url"]);
  }
  return urls;
}

Result<audio::Timeline> SoundTimeline(const std::vector<std::string>& messages, Rational fps,
                                      Rational until, const MediaFetched& media) {
  audio::Timeline timeline;
  timeline.until = until;
  std::map<std::string, size_t> index;  // Sound id -> its place in timeline.sounds.
  std::set<std::string> left_out;       // Ids of sounds whose media failed.
  for (const std::string& text : messages) {
    json j = json::parse(text, nullptr, false);
    auto bad = [&](const std::string& why) {
      return InternalError("the page script's sound message " + text.substr(0, 200) + " " + why +
                           "; this is a fault in pagereel, please report it");
    };
    if (!j.is_object() || !j["id"].is_string() || !j["t"].is_number()) {
      return bad("has no sound id or time");
    }
    const std::string id = j["id"];
    const Rational t = FilmTimeOfMs(j["t"].get<double>(), fps);
    if (j.contains("leftOut")) {  // Sound the page made that no span can carry.
      if (!j["leftOut"].is_string() || !j["source"].is_string()) return bad("names no source or reason");
      timeline.left_out.push_back(audio::LeftOut{j["source"], t, j["leftOut"]});
      continue;
    }
    if (j.contains("end")) {
      if (!j["end"].is_string()) return bad("has an end that is not a name");
      Result<audio::SpanEnd> end = EndNamed(j["end"]);
      if (!end.ok()) return bad(std::string(end.status().message()));
      auto it = index.find(id);
      if (it == index.end()) continue;  // Left out, or ended before it began.
      audio::Sound& sound = timeline.sounds[it->second];
      if (sound.spans.empty() || sound.spans.back().end) continue;
      audio::Span& span = sound.spans.back();
      if (!Less(span.start, t)) {
        sound.spans.pop_back();  // Nothing played (changed in the moment it started).
      } else {
        span.end = t;
        span.ended_by = *end;
      }
      continue;
    }
    if (!j["url"].is_string() || !j["offset"].is_number() || !j["rate"].is_number() ||
        !j["volume"].is_number() || !j["loop"].is_boolean() || !j["pitch"].is_boolean()) {
      return bad("does not say what the span plays");
    }
    const std::string url = j["url"];
    if (left_out.count(id)) continue;
    auto failed = media.failed.find(url);
    auto fetched = media.sha256.find(url);
    if (fetched == media.sha256.end()) {
      left_out.insert(id);
      timeline.left_out.push_back(audio::LeftOut{
          j.value("source", url), t,
          failed != media.failed.end() ? failed->second : "its media " + url + " was not fetched"});
      continue;
    }
    auto [it, added] = index.emplace(id, timeline.sounds.size());
    if (added) {
      audio::Sound sound;
      sound.id = id;
      sound.source = j.value("source", url);
      sound.media = fetched->second;
      timeline.sounds.push_back(std::move(sound));
    }
    audio::Sound& sound = timeline.sounds[it->second];
    if (!sound.spans.empty() && !sound.spans.back().end) {
      return bad("starts a span of sound '" + id + "' while one is playing");
    }
    audio::Span span;
    span.start = t;
    span.offset = Micros(std::max(0.0, j["offset"].get<double>()));
    span.rate = j["rate"];
    span.preserves_pitch = j["pitch"];
    span.volume = j["volume"];
    span.loop = j["loop"];
    sound.spans.push_back(span);
  }
  // Sounds the page only ever changed in the moment they started played nothing.
  std::erase_if(timeline.sounds, [](const audio::Sound& s) { return s.spans.empty(); });
  return audio::Restrict(timeline, Rational{0, 1}, until);
}

Result<std::string> FetchMedia(PageSession& session, const std::string& frame_id,
                               const std::string& url, int64_t max_bytes) {
  auto failed = [&](const std::string& why) {
    return UnavailableError("could not fetch " + url + ": " + why);
  };
  Result<cdp::Message> called =
      session.Call("Network.loadNetworkResource",
                   Dump({{"frameId", frame_id},
                         {"url", url},
                         {"options", {{"disableCache", false}, {"includeCredentials", true}}}}));
  // The browser refuses some URLs outright: file: from a page that is not a file ("Unsupported
  // URL scheme", measured on headless-shell 156), as it keeps such pages from local files.
  if (!called.ok()) return failed(std::string(called.status().message()));
  const cdp::Message& reply = *called;
  Result<bool> success = cdp::GetBool(reply, {"result", "resource", "success"});
  if (!success.ok() || !*success) {
    Result<std::string> error = cdp::GetString(reply, {"result", "resource", "netErrorName"});
    Result<double> status = cdp::GetNumber(reply, {"result", "resource", "httpStatusCode"});
    return failed(status.ok() && *status >= 400 ? "HTTP status " + std::to_string(static_cast<int>(*status))
                  : error.ok()                  ? *error
                                                : "the browser did not load it");
  }
  PR_ASSIGN_OR_RETURN(std::string handle,
                      cdp::GetString(reply, {"result", "resource", "stream"}));
  std::string bytes;
  Status status = Status::Ok();
  for (;;) {
    Result<cdp::Message> chunk =
        session.Call("IO.read", Dump({{"handle", handle}, {"size", 4 << 20}}));
    if (!chunk.ok()) {
      status = chunk.status();
      break;
    }
    Result<bool> base64 = cdp::GetBool(*chunk, {"result", "base64Encoded"});
    if (base64.ok() && *base64) {
      Result<std::string_view> data = cdp::GetRawStringView(*chunk, {"result", "data"});
      if (!data.ok()) {
        status = failed("the browser sent no data");
        break;
      }
      std::string decoded(AV_BASE64_DECODE_SIZE(data->size()), '\0');
      std::string text(*data);  // av_base64_decode reads up to a NUL.
      int n = av_base64_decode(reinterpret_cast<uint8_t*>(decoded.data()), text.c_str(),
                               static_cast<int>(decoded.size()));
      if (n < 0) {
        status = failed("the browser sent damaged data");
        break;
      }
      bytes.append(decoded.data(), n);
    } else if (Result<std::string> text = cdp::GetString(*chunk, {"result", "data"}); text.ok()) {
      bytes.append(*text);
    }
    if (static_cast<int64_t>(bytes.size()) > max_bytes) {
      status = ResourceExhaustedError("could not fetch " + url + ": it is larger than " +
                                      MiBText(max_bytes));
      break;
    }
    Result<bool> eof = cdp::GetBool(*chunk, {"result", "eof"});
    if (!eof.ok() || *eof) break;
  }
  (void)session.Call("IO.close", Dump({{"handle", handle}}));
  if (!status.ok()) return status;
  return bytes;
}

}  // namespace pagereel::capture
