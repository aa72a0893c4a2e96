// MediaStore: the media bytes a film's sounds play, in one folder, each file named by the
// SHA-256 of its bytes. Segments, lanes and shards that fetched the same media share one
// file, and a timeline names media by that hash (audio/timeline.h), so a timeline from
// another machine finds its media wherever the folder was copied.
//
// Files are written under a temporary name and renamed, and never rewritten: any number of
// threads and processes may use one folder.
#ifndef PAGEREEL_AUDIO_MEDIA_STORE_H_
#define PAGEREEL_AUDIO_MEDIA_STORE_H_

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace pagereel::audio {

// SHA-256 of `bytes`, 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

class MediaStore {
 public:
  explicit MediaStore(std::string folder) : folder_(std::move(folder)) {}

  const std::string& folder() const { return folder_; }
  std::string PathOf(const std::string& sha256) const;

  // Stores `bytes` (once: a file already there is kept) and returns their hash. Creates
  // the folder. Errors name the folder.
  Result<std::string> Put(std::string_view bytes) const;

  // The bytes stored as `sha256`, checked against it. kNotFound names the hash and folder;
  // bytes that no longer match (the file changed) are kFailedPrecondition.
  Result<std::shared_ptr<const std::string>> Get(const std::string& sha256) const;

 private:
  std::string folder_;
};

}  // namespace pagereel::audio

#endif  // PAGEREEL_AUDIO_MEDIA_STORE_H_
