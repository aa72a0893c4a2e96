#include "serve/clip.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>

#include "audio/media_store.h"
#include "audio/mixer.h"
#include "audio/summary.h"
#include "encode/concat.h"
#include "encode/film_writer.h"

namespace pagereel::serve {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds Since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t);
}

encode::FilmKind KindOf(ClipFormat format) {
  switch (format) {
    case ClipFormat::kGif: return encode::FilmKind::kGif;
    case ClipFormat::kMp4: return encode::FilmKind::kMp4;
    case ClipFormat::kWebm: return encode::FilmKind::kWebm;
  }
  return encode::FilmKind::kGif;
}

// How many frames to make, from what the client gave and what the page declared.
Result<int64_t> FrameCount(const ClipOptions& clip, const capture::Page& page, int width,
                           int height) {
  int64_t frames = 0;
  if (clip.frames) {
    frames = *clip.frames;
  } else {
    double seconds = page.declared_duration().value_or(clip.default_seconds);
    // Checked as a double first: a duration such as 1e300 has more frames than an int64_t
    // holds, and the conversion would make a short clip of it.
    if (!std::isfinite(seconds) ||
        seconds * clip.fps.ToDouble() > static_cast<double>(clip.max_frames) + 1) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%g", seconds);
      return InvalidArgumentError(
          "duration: the page declares window.pagereel.duration = " + std::string(shown) +
          " s, more than this service makes (at most " + std::to_string(clip.max_frames) +
          " frames at " + clip.fps.ToString() + " fps); give duration or frames");
    }
    frames = FramesInDuration(seconds, clip.fps);
    if (frames > clip.max_frames) {
      return InvalidArgumentError(
          "duration: the page declares window.pagereel.duration = " + std::to_string(seconds) +
          " s, " + std::to_string(frames) + " frames at " + clip.fps.ToString() +
          " fps, more than the " + std::to_string(clip.max_frames) +
          " this service makes; give duration or frames");
    }
  }
  if (clip.max_frame_pixels > 0 &&
      static_cast<double>(frames) * width * height > static_cast<double>(clip.max_frame_pixels)) {
    return InvalidArgumentError("frames: " + std::to_string(frames) + " frames of " +
                                std::to_string(width) + "x" + std::to_string(height) +
                                " are more pixels than this service encodes in one clip (" +
                                std::to_string(clip.max_frame_pixels) +
                                "); ask for fewer frames or a smaller size");
  }
  return std::max<int64_t>(frames, 1);
}

// A folder of its own in the scratch folder for one clip's sound (its media, the pictures
// and the joined clip), removed with it.
class SoundFolder {
 public:
  static Result<SoundFolder> Make(const std::filesystem::path& scratch_dir) {
    std::string pattern = (scratch_dir / "sound-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return ErrnoError("making a folder for the clip's sound in " + scratch_dir.string(), errno);
    }
    return SoundFolder(pattern);
  }
  SoundFolder(SoundFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  SoundFolder& operator=(SoundFolder&& other) noexcept {
    std::swap(path_, other.path_);
    return *this;
  }
  ~SoundFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit SoundFolder(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// strict=true: a clip without some of its page's sound is not the clip that was asked for.
Status RefuseLeftOut(const ClipOptions& clip, const std::vector<std::string>& left_out) {
  if (clip.left_out != ClipOptions::LeftOut::kFail || left_out.empty()) return Status::Ok();
  const size_t n = left_out.size();
  return FailedPreconditionError(
      std::to_string(n) + (n == 1 ? " sound" : " sounds") +
      " would be left out of the clip (strict=true): " + audio::ListText(left_out, 3) +
      ". Without strict=true the clip comes without them; with audio=false, without any sound");
}

// The clip `pictures` (the film without sound, `frames` frames) with `timeline`'s sound
// mixed beside them, through `folder`; what was mixed and left out goes in `r`.
Result<std::string> AddSound(std::string pictures, int64_t frames, const audio::Timeline& timeline,
                             const audio::MediaStore& media, const ClipOptions& clip,
                             const std::filesystem::path& folder, ClipReport& r) {
  for (const audio::LeftOut& l : timeline.left_out) {
    r.sounds_left_out.push_back(audio::LeftOutText(l, clip.fps));
  }
  PR_RETURN_IF_ERROR(RefuseLeftOut(clip, r.sounds_left_out));
  if (timeline.empty()) return pictures;
  PR_ASSIGN_OR_RETURN(std::unique_ptr<audio::Mixer> mixer,
                      audio::Mixer::Open(timeline, media, encode::SoundSamples(frames, clip.fps)));
  // Media that cannot be decoded is known once the mix is open; media damaged part way only
  // once it is read, so strict=true checks both.
  size_t problems_seen = 0;
  auto mixer_problems = [&] {
    const std::vector<audio::Mixer::Problem>& heard = mixer->problems();
    for (; problems_seen < heard.size(); ++problems_seen) {
      r.sounds_left_out.push_back(audio::ProblemText(heard[problems_seen], clip.fps));
    }
    return RefuseLeftOut(clip, r.sounds_left_out);
  };
  PR_RETURN_IF_ERROR(mixer_problems());
  const char* extension = clip.format == ClipFormat::kWebm ? ".webm" : ".mp4";
  const std::string silent = (folder / (std::string("pictures") + extension)).string();
  const std::string joined = (folder / (std::string("clip") + extension)).string();
  {
    std::ofstream out(silent, std::ios::binary);
    out.write(pictures.data(), static_cast<std::streamsize>(pictures.size()));
    if (!out.flush()) return IoError("cannot write the clip's pictures into " + folder.string() + " (is the disk full?)");
  }
  pictures.clear();
  encode::JoinOptions join;
  join.kind = KindOf(clip.format);
  join.fps = clip.fps;
  join.sound = mixer.get();
  join.sound_codec = encode::SoundCodec::kAuto;
  PR_RETURN_IF_ERROR(encode::JoinSegments({encode::SegmentFile{silent, 0, frames}}, joined, join));
  PR_RETURN_IF_ERROR(mixer_problems());
  for (const audio::Heard& h : audio::SoundsHeard(timeline)) {
    r.sounds.push_back(h.source + " from " + audio::FrameText(h.from, clip.fps));
  }
  std::ifstream in(joined, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad() || bytes.empty()) return IoError("cannot read the clip back from " + folder.string());
  return bytes;
}

}  // namespace

Result<std::string> MakeClip(browser::Browser& browser, const capture::PageOptions& page_options,
                             const ClipOptions& clip, const std::filesystem::path& scratch_dir,
                             Clock::time_point deadline, ClipReport* report) {
  ClipReport local;
  ClipReport& r = report != nullptr ? *report : local;
  capture::PageOptions options = page_options;
  options.fps = clip.fps;
  options.alpha = clip.transparent;
  options.max_media_bytes = clip.max_media_bytes;
  r.sound_asked = clip.format != ClipFormat::kGif && clip.sound == ClipOptions::Sound::kIfAny;

  Clock::time_point load_start = Clock::now();
  PR_ASSIGN_OR_RETURN(std::unique_ptr<capture::Page> page, capture::Page::Open(browser, options));
  r.load = Since(load_start);
  PR_ASSIGN_OR_RETURN(int64_t frames, FrameCount(clip, *page, options.width, options.height));

  encode::FilmWriterOptions writer_options;
  writer_options.film.kind = KindOf(clip.format);
  writer_options.film.width = options.width;
  writer_options.film.height = options.height;
  writer_options.film.fps = clip.fps;
  writer_options.film.alpha = clip.transparent;
  writer_options.film.quality = clip.quality;
  writer_options.to = encode::WriteTo::kMemory;
  writer_options.scratch_dir = scratch_dir.string();
  PR_ASSIGN_OR_RETURN(std::unique_ptr<encode::FilmWriter> writer,
                      encode::FilmWriter::Open(writer_options));

  for (int64_t i = 0; i < frames; ++i) {
    if (Clock::now() >= deadline) {
      return DeadlineExceededError(
          "the clip was not finished in time: " +
          std::to_string(i) + " of " + std::to_string(frames) +
          " frames were made; ask for fewer frames, a smaller size or a longer timeout");
    }
    if (options.should_stop && options.should_stop()) {
      return CancelledError("the clip was no longer wanted");
    }
    Clock::time_point frame_start = Clock::now();
    PR_ASSIGN_OR_RETURN(capture::EncodedFrame frame, page->Capture(i));
    Clock::time_point encode_start = Clock::now();
    r.frames_time += std::chrono::duration_cast<std::chrono::milliseconds>(encode_start - frame_start);
    PR_RETURN_IF_ERROR(writer->Write(frame.screenshot()));
    r.encode += Since(encode_start);
    r.frames = i + 1;
  }
  // What the page played, known now that its last frame has run; its media fetched through
  // the page's own context.
  std::optional<SoundFolder> folder;
  std::optional<audio::Timeline> timeline;
  if (r.sound_asked) {
    Clock::time_point sound_start = Clock::now();
    PR_ASSIGN_OR_RETURN(folder, SoundFolder::Make(scratch_dir));
    // The clip is the whole film: its Web Audio is rendered on to the clip's end.
    PR_ASSIGN_OR_RETURN(timeline, page->Sound(audio::MediaStore((folder->path() / "media").string()),
                                              capture::Page::SoundEnd::kFilmEnds));
    r.sound += Since(sound_start);
  }
  page.reset();  // The browser context goes before the (possibly long) GIF palette pass.
  Clock::time_point finish_start = Clock::now();
  PR_RETURN_IF_ERROR(writer->Finish());
  r.encode += Since(finish_start);
  if (!timeline) return writer->TakeBytes();
  if (Clock::now() >= deadline) {
    return DeadlineExceededError("the clip was not finished in time: its " +
                                 std::to_string(frames) +
                                 " frames were made, its sound was not; ask for fewer frames, "
                                 "a smaller size, audio=false or a longer timeout");
  }
  Clock::time_point sound_start = Clock::now();
  Result<std::string> bytes = AddSound(writer->TakeBytes(), frames, *timeline,
                                       audio::MediaStore((folder->path() / "media").string()),
                                       clip, folder->path(), r);
  r.sound += Since(sound_start);
  return bytes;
}

}  // namespace pagereel::serve
