#include "audio/media_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

extern "C" {
#include <libavutil/mem.h>
#include <libavutil/sha.h>
}

namespace pagereel::audio {

namespace fs = std::filesystem;

std::string Sha256Hex(std::string_view bytes) {
  std::unique_ptr<AVSHA, void (*)(void*)> sha(av_sha_alloc(), av_free);
  av_sha_init(sha.get(), 256);
  av_sha_update(sha.get(), reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  uint8_t digest[32];
  av_sha_final(sha.get(), digest);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string MediaStore::PathOf(const std::string& sha256) const {
  return (fs::path(folder_) / sha256).string();
}

Result<std::string> MediaStore::Put(std::string_view bytes) const {
  std::string sha = Sha256Hex(bytes);
  const fs::path target = PathOf(sha);
  std::error_code ec;
  if (fs::exists(target, ec)) return sha;
  fs::create_directories(folder_, ec);
  if (ec) return IoError("cannot create the media folder " + folder_ + ": " + ec.message());
  const fs::path tmp = fs::path(folder_) / (".tmp-" + std::to_string(::getpid()) + "-" + sha);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return ErrnoError("writing media into " + folder_, errno);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (ok) fs::rename(tmp, target, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    return IoError("cannot write media into " + folder_ + " (is the disk full?)");
  }
  return sha;
}

Result<std::shared_ptr<const std::string>> MediaStore::Get(const std::string& sha256) const {
  std::ifstream in(PathOf(sha256), std::ios::binary);
  if (!in) return NotFoundError("media " + sha256 + " is not in " + folder_);
  auto bytes = std::make_shared<std::string>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return IoError("cannot read media " + sha256 + " from " + folder_);
  if (Sha256Hex(*bytes) != sha256) {
    return FailedPreconditionError("media " + sha256 + " in " + folder_ +
                                   " changed since it was stored; render the film again");
  }
  return std::shared_ptr<const std::string>(std::move(bytes));
}

}  // namespace pagereel::audio
