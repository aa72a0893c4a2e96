// FilmWriter: turns a page's screenshots into a film, in order: decodes each one, converts
// it to what the film's codec consumes and encodes it. The one way frames become a film:
// render's segments, serve's clips and the GIF join all write through it.
//
// Screenshots come as the browser sent them (encode/image.h). JPEG screenshots of a film in
// yuv420p (H.264, VP9 without alpha) skip RGBA: their own YCbCr planes become the frame
// (encode/jpeg_yuv.h, half the CPU of decoding to RGBA and converting back, measured in
// bench/decode_bench.cc); everything else is decoded to RGBA first.
//
// A film written to a path appears there only when Finish() succeeds (it is written under a
// hidden partial name and renamed); a sequence is renamed into place as a whole, and the
// files of an older sequence of the same pattern numbered beyond the new one are removed.
// A writer destroyed before Finish() removes what it wrote. Opening one removes partial
// files of the same output left by pagereel processes that no longer run.
//
// One thread at a time (a segment's writer thread, a capture worker); libx264 and libvpx run
// their own worker threads inside.
#ifndef PAGEREEL_ENCODE_FILM_WRITER_H_
#define PAGEREEL_ENCODE_FILM_WRITER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "encode/film.h"
#include "encode/frame.h"
#include "encode/image.h"
#include "encode/sound.h"

namespace pagereel::encode {

class Encoder;  // Internal (encode/encoder.h).

enum class WriteTo {
  kPath,    // `path`: a film file, or a sequence pattern such as frames/%05d.png.
  kMemory,  // The finished film's bytes, from TakeBytes() (films only, not sequences).
};

struct FilmWriterOptions {
  FilmSpec film;
  WriteTo to = WriteTo::kPath;
  std::string path;  // kPath.
  // Where a GIF keeps its frames between its two passes (the palette is built from all of
  // them first): empty, beside `path`; for kMemory, the system's temporary folder.
  std::string scratch_dir;
  // The film's sound (nullptr: none), pulled as frames are written and encoded once, in
  // `sound_codec` (ChooseSoundCodec: GIF and image sequences take none). Finish() fails
  // unless it has SoundSamples(frames written, fps) samples. A film written in segments
  // gets its sound at the join instead (encode/concat.h).
  SoundSource* sound = nullptr;
  SoundCodec sound_codec = SoundCodec::kAuto;
};

class FilmWriter {
 public:
  // Opens the codec and the output. Errors name the output and what is wrong with it.
  static Result<std::unique_ptr<FilmWriter>> Open(const FilmWriterOptions& options);
  ~FilmWriter();  // Unfinished: what was written is removed.
  FilmWriter(const FilmWriter&) = delete;
  FilmWriter& operator=(const FilmWriter&) = delete;

  // Adds the next frame. Fails (kInternal) on a corrupt screenshot or one of another size
  // than the film's.
  Status Write(const Screenshot& screenshot);
  // Adds the next frame from decoded pixels of the film's size.
  Status Write(const RgbaView& frame);

  // Flushes the encoder, finishes the container and moves the output into place.
  Status Finish();

  // Where the finished output is (kPath): the file, or the sequence's pattern.
  const std::string& path() const;
  // The finished film (kMemory), handed over once.
  std::string TakeBytes();

  int64_t frames() const { return frames_; }
  // Time spent decoding and converting frames, and in the encoder and muxer (Finish too).
  std::chrono::nanoseconds decode_time() const { return decode_time_; }
  std::chrono::nanoseconds encode_time() const { return encode_time_; }

 private:
  FilmWriter(const FilmSpec& film, const SoundSource* sound, std::unique_ptr<Encoder> encoder);
  Status Encode(Result<std::unique_ptr<PreparedFrame>> prepared,
                std::chrono::steady_clock::time_point started);

  const FilmSpec film_;
  const SoundSource* const sound_;  // Null without sound.
  std::unique_ptr<Encoder> encoder_;
  std::unique_ptr<Converter> converter_;  // Destroyed before encoder_.
  int64_t frames_ = 0;
  std::chrono::nanoseconds decode_time_{0};
  std::chrono::nanoseconds encode_time_{0};
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_FILM_WRITER_H_
