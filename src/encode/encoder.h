// Internal to encode/: the encoders behind FilmWriter, one per kind of film. A film kind is a
// VideoStream into a file or memory (encode/stream.h); a GIF is libavfilter's palette passes
// (gif_encoder.h); a sequence is one PNG or JPEG file per frame. Each takes frames already
// converted by one of its converters, in order. One thread at a time.
#ifndef PAGEREEL_ENCODE_ENCODER_H_
#define PAGEREEL_ENCODE_ENCODER_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "encode/film_writer.h"
#include "encode/frame.h"

namespace pagereel::encode {

class Encoder {
 public:
  // `options` as FilmWriter::Open takes them (checked there).
  static Result<std::unique_ptr<Encoder>> Open(const FilmWriterOptions& options);
  virtual ~Encoder() = default;

  // A converter for this encoder, for any thread. Destroy it before the encoder.
  virtual std::unique_ptr<Converter> NewConverter() const = 0;

  // Adds the next frame, made by one of this encoder's converters.
  virtual Status WritePrepared(std::unique_ptr<PreparedFrame> frame) = 0;

  // Flushes, finishes the container and moves the output into place.
  virtual Status Finish() = 0;

  // The finished output: its path (kPath), or its bytes (kMemory, once).
  virtual const std::string& final_path() const = 0;
  virtual std::string TakeBytes() = 0;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_ENCODER_H_
