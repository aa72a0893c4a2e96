// Internal to encode/: the GIF writer. Its palette is built from the whole film (libavfilter's
// palettegen over every frame), so it needs two passes: frames are kept in a temporary raw
// file (beside the target, or in the scratch folder) while the palette statistics gather,
// then read back, mapped to the
// palette (paletteuse, error-diffusion dither) and encoded. Memory stays at one frame.
#ifndef PAGEREEL_ENCODE_GIF_ENCODER_H_
#define PAGEREEL_ENCODE_GIF_ENCODER_H_

#include <memory>

#include "encode/encoder.h"

namespace pagereel::encode {

Result<std::unique_ptr<Encoder>> OpenGifEncoder(const FilmWriterOptions& options);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_GIF_ENCODER_H_
