// What a page did with sound, as the page script tells it (page_script.js, "sound:"
// messages), made into a sound timeline (audio/timeline.h), and the media its sounds play,
// fetched through the page's own browser context. Page uses these; they are apart from it so
// the turning of messages into spans can be tested without a browser.
//
// Plain functions; any thread (FetchMedia: the page's thread).
#ifndef PAGEREEL_CAPTURE_PAGE_SOUND_H_
#define PAGEREEL_CAPTURE_PAGE_SOUND_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "audio/timeline.h"
#include "base/rational.h"
#include "base/status.h"

namespace pagereel::capture {

class PageSession;

// The most bytes one sound's media may have (a film's sound is made from memory).
inline constexpr int64_t kMaxMediaBytes = int64_t{1} << 30;

// `bytes` for messages: "64 MiB", "1.5 MiB".
std::string MiBText(int64_t bytes);

// The film time of a page's time `ms` (film ms, as page_script.js reads it): a whole ms on
// which a frame is presented (FrameTimeMillis) is that frame's exact time, so a sound
// started on frame n starts on frame n's sample at any rate; any other time is itself (to
// the microsecond). Negative times are 0.
Rational FilmTimeOfMs(double ms, Rational fps);

// The media a page's sounds asked for, by URL: the SHA-256 its bytes are stored under
// (audio::MediaStore), or why they could not be fetched.
struct MediaFetched {
  std::map<std::string, std::string> sha256;
  std::map<std::string, std::string> failed;
};

// The URLs the messages name (each once, in order of first use).
std::vector<std::string> SoundUrls(const std::vector<std::string>& messages);

// The timeline of [0, until) from the page's "sound:" messages (their JSON, in the order
// sent). A sound whose media failed is a LeftOut entry at its first start, and so is a
// message with "leftOut" (its reason) and "source" (Web Audio fed from a stream); a message
// that is not understood is an error naming it (a fault in pagereel: the script writes them).
Result<audio::Timeline> SoundTimeline(const std::vector<std::string>& messages, Rational fps,
                                      Rational until, const MediaFetched& media);

// The bytes at `url`, loaded by the browser for frame `frame_id` as the page's own loads are
// (its context's proxy and cookies), at most `max_bytes`. Errors name the URL; media over
// `max_bytes` is kResourceExhausted (the reading stops at the first piece past it).
Result<std::string> FetchMedia(PageSession& session, const std::string& frame_id,
                               const std::string& url, int64_t max_bytes = kMaxMediaBytes);

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_PAGE_SOUND_H_
