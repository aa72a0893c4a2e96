// Internal to encode/: the names of an image sequence's files. A pattern holds one
// frame-number field (%d, %5d or %05d: at most two digits of width), as FilmKindForPath
// accepts it; frame n is the pattern with n in that field.
#ifndef PAGEREEL_ENCODE_SEQUENCE_H_
#define PAGEREEL_ENCODE_SEQUENCE_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pagereel::encode {

class SequencePattern {
 public:
  // Nullopt when `pattern` has no frame-number field.
  static std::optional<SequencePattern> Parse(const std::string& pattern);

  // Frame `index`'s file.
  std::filesystem::path Name(int64_t index) const;
  std::filesystem::path Folder() const;
  // The files' extension, lower case, with the dot; ".jpeg" reads as ".jpg".
  std::string Extension() const;
  // The frame number `file` (a name in Folder()) stands for, if it is one of this pattern's.
  std::optional<int64_t> IndexOf(const std::string& file) const;
  // This pattern's files in Folder(), sorted by name.
  std::vector<std::filesystem::path> Existing() const;

 private:
  SequencePattern() = default;

  std::string prefix_;
  std::string suffix_;
  char pad_ = ' ';
  int width_ = 0;
};

// How many frame-number fields `file_name` holds (FilmKindForPath wants exactly one).
int CountFrameNumberFields(const std::string& file_name);

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_SEQUENCE_H_
