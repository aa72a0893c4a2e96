#include "encode/image.h"

#include <spng.h>
#include <turbojpeg.h>

extern "C" {
#include <libavutil/base64.h>
}

#include <memory>
#include <string>

namespace pagereel::encode {

Result<std::vector<uint8_t>> DecodeBase64(const char* text, size_t length) {
  // FFmpeg's table-driven decoder (libavutil), measured in bench/decode_bench.cc.
  std::vector<uint8_t> out(AV_BASE64_DECODE_SIZE(length) + 3);
  int n = av_base64_decode(out.data(), text, static_cast<int>(out.size()));
  if (n < 0) return InternalError("the browser sent a screenshot that is not valid base64");
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<Image> DecodeJpeg(const uint8_t* data, size_t size) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  if (!tj) return InternalError("could not start the JPEG decoder");
  int width = 0;
  int height = 0;
  int subsamp = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(tj.get(), data, size, &width, &height, &subsamp, &colorspace) != 0) {
    return InternalError(std::string("corrupt JPEG screenshot: ") + tjGetErrorStr2(tj.get()));
  }
  Image image;
  image.width = width;
  image.height = height;
  image.rgba.resize(static_cast<size_t>(width) * height * 4);
  // Fast DCT and chroma upsampling: the frame is subsampled to 4:2:0 again for the film, so
  // the finer upsampling bought nothing; 13 % less decode time in bench/decode_bench.cc.
  if (tjDecompress2(tj.get(), data, size, image.rgba.data(), width, width * 4, height, TJPF_RGBA,
                    TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE) != 0) {
    return InternalError(std::string("corrupt JPEG screenshot: ") + tjGetErrorStr2(tj.get()));
  }
  return image;
}

Result<Image> DecodePng(const uint8_t* data, size_t size) {
  std::unique_ptr<spng_ctx, void (*)(spng_ctx*)> ctx(spng_ctx_new(0), spng_ctx_free);
  if (!ctx) return InternalError("could not start the PNG decoder");
  // The browser's own PNGs: CRC checks cost time and protect against nothing here.
  spng_set_crc_action(ctx.get(), SPNG_CRC_USE, SPNG_CRC_USE);
  if (int err = spng_set_png_buffer(ctx.get(), data, size); err != 0) {
    return InternalError(std::string("corrupt PNG screenshot: ") + spng_strerror(err));
  }
  spng_ihdr ihdr{};
  if (int err = spng_get_ihdr(ctx.get(), &ihdr); err != 0) {
    return InternalError(std::string("corrupt PNG screenshot: ") + spng_strerror(err));
  }
  size_t out_size = 0;
  if (int err = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGBA8, &out_size); err != 0) {
    return InternalError(std::string("corrupt PNG screenshot: ") + spng_strerror(err));
  }
  Image image;
  image.width = static_cast<int>(ihdr.width);
  image.height = static_cast<int>(ihdr.height);
  image.rgba.resize(out_size);
  if (int err = spng_decode_image(ctx.get(), image.rgba.data(), out_size, SPNG_FMT_RGBA8, 0);
      err != 0) {
    return InternalError(std::string("corrupt PNG screenshot: ") + spng_strerror(err));
  }
  return image;
}

Result<Image> DecodeScreenshot(const Screenshot& screenshot) {
  PR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                      DecodeBase64(screenshot.base64, screenshot.length));
  if (screenshot.format == ImageFormat::kJpeg) return DecodeJpeg(bytes.data(), bytes.size());
  return DecodePng(bytes.data(), bytes.size());
}

}  // namespace pagereel::encode
