#include "audio/media_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

extern "C" {
#include <libavutil/hash.h>
}

namespace pagereel::audio {

namespace fs = std::filesystem;

std::string Sha256Hex(std::string_view bytes) {
  AVHashContext* raw = nullptr;
  if (av_hash_alloc(&raw, "SHA256") < 0) return std::string();
  std::unique_ptr<AVHashContext, void (*)(AVHashContext*)> hash(raw, [](AVHashContext* h) { av_hash_freep(&h); });
  av_hash_init(hash.get());
  av_hash_update(hash.get(), reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  uint8_t hex[2 * AV_HASH_MAX_SIZE + 1];
  av_hash_final_hex(hash.get(), hex, sizeof hex);
  return reinterpret_cast<const char*>(hex);
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
