#include "encode/film_writer.h"

#include <span>
#include <utility>
#include <vector>

#include "encode/encoder.h"
#include "encode/sound_track.h"

namespace pagereel::encode {

namespace {

using Clock = std::chrono::steady_clock;

std::string SizeText(int width, int height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

}  // namespace

Result<std::unique_ptr<FilmWriter>> FilmWriter::Open(const FilmWriterOptions& options) {
  const FilmSpec& film = options.film;
  if (film.width <= 0 || film.height <= 0) {
    return InvalidArgumentError("a film of " + SizeText(film.width, film.height) +
                                " pixels cannot be made");
  }
  if (film.alpha && !CanCarryAlpha(film.kind)) {
    return InvalidArgumentError(std::string(FilmKindName(film.kind)) +
                                " films cannot carry an alpha channel");
  }
  if (options.to == WriteTo::kPath && options.path.empty()) {
    return InvalidArgumentError("the film has no path to be written to");
  }
  if (options.sound != nullptr) {
    PR_RETURN_IF_ERROR(ChooseSoundCodec(film.kind, options.sound_codec).status());
  }
  PR_ASSIGN_OR_RETURN(std::unique_ptr<Encoder> encoder, Encoder::Open(options));
  return std::unique_ptr<FilmWriter>(new FilmWriter(film, options.sound, std::move(encoder)));
}

FilmWriter::FilmWriter(const FilmSpec& film, const SoundSource* sound, std::unique_ptr<Encoder> encoder)
    : film_(film), sound_(sound), encoder_(std::move(encoder)), converter_(encoder_->NewConverter()) {}

FilmWriter::~FilmWriter() {
  converter_.reset();  // Before its encoder, which removes what an unfinished film wrote.
}

Status FilmWriter::Write(const Screenshot& screenshot) {
  const Clock::time_point started = Clock::now();
  if (screenshot.format == ImageFormat::kJpeg && converter_->AcceptsJpeg()) {
    PR_ASSIGN_OR_RETURN(std::vector<uint8_t> jpeg,
                        DecodeBase64(screenshot.base64, screenshot.length));
    return Encode(converter_->ConvertJpeg(jpeg, film_.width, film_.height), started);
  }
  PR_ASSIGN_OR_RETURN(Image image, DecodeScreenshot(screenshot));
  if (image.width != film_.width || image.height != film_.height) {
    return InternalError("the screenshot came back " + SizeText(image.width, image.height) +
                         ", not the film's " + SizeText(film_.width, film_.height));
  }
  return Encode(converter_->Convert(RgbaView{image.rgba.data(), image.width, image.height,
                                             image.width * 4}),
                started);
}

Status FilmWriter::Write(const RgbaView& frame) {
  return Encode(converter_->Convert(frame), Clock::now());
}

Status FilmWriter::Encode(Result<std::unique_ptr<PreparedFrame>> prepared,
                          Clock::time_point started) {
  const Clock::time_point converted = Clock::now();
  decode_time_ += converted - started;
  if (!prepared.ok()) return prepared.status();
  Status written = encoder_->WritePrepared(std::move(prepared).value());
  encode_time_ += Clock::now() - converted;
  if (written.ok()) ++frames_;
  return written;
}

Status FilmWriter::Finish() {
  if (sound_ != nullptr) PR_RETURN_IF_ERROR(CheckSoundLength(*sound_, frames_, film_.fps));
  const Clock::time_point started = Clock::now();
  Status finished = encoder_->Finish();
  encode_time_ += Clock::now() - started;
  return finished;
}

const std::string& FilmWriter::path() const { return encoder_->final_path(); }

std::string FilmWriter::TakeBytes() { return encoder_->TakeBytes(); }

}  // namespace pagereel::encode
