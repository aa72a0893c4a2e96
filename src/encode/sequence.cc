#include "encode/sequence.h"

#include <algorithm>
#include <iterator>
#include <regex>

namespace pagereel::encode {

namespace fs = std::filesystem;

namespace {

// The frame-number field, with the zero flag and the width captured.
const std::regex& FrameNumberField() {
  static const std::regex field("%(0?)([0-9]{0,2})d");
  return field;
}

}  // namespace

int CountFrameNumberFields(const std::string& file_name) {
  return static_cast<int>(std::distance(
      std::sregex_iterator(file_name.begin(), file_name.end(), FrameNumberField()),
      std::sregex_iterator()));
}

std::optional<SequencePattern> SequencePattern::Parse(const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(pattern, m, FrameNumberField())) return std::nullopt;
  SequencePattern p;
  p.prefix_ = m.prefix();
  p.suffix_ = m.suffix();
  p.pad_ = m[1].length() > 0 ? '0' : ' ';
  p.width_ = m[2].length() > 0 ? std::stoi(m[2]) : 0;
  return p;
}

fs::path SequencePattern::Name(int64_t index) const {
  std::string number = std::to_string(index);
  if (static_cast<int>(number.size()) < width_) {
    number.insert(0, static_cast<size_t>(width_) - number.size(), pad_);
  }
  return prefix_ + number + suffix_;
}

fs::path SequencePattern::Folder() const {
  fs::path folder = fs::path(prefix_ + "0" + suffix_).parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

std::string SequencePattern::Extension() const {
  // The suffix's own last dot, not fs::path's extension: ".png" alone has none for it.
  const size_t dot = suffix_.rfind('.');
  std::string ext = dot == std::string::npos || suffix_.find('/', dot) != std::string::npos
                        ? std::string()
                        : suffix_.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpeg" ? ".jpg" : ext;
}

std::optional<int64_t> SequencePattern::IndexOf(const std::string& file) const {
  std::string head = fs::path(prefix_ + "0").filename().string();
  head.pop_back();
  if (file.size() <= head.size() + suffix_.size() || file.rfind(head, 0) != 0 ||
      file.compare(file.size() - suffix_.size(), suffix_.size(), suffix_) != 0) {
    return std::nullopt;
  }
  std::string digits = file.substr(head.size(), file.size() - head.size() - suffix_.size());
  size_t first = digits.find_first_not_of(' ');
  if (first == std::string::npos || digits.size() > 18) return std::nullopt;
  digits = digits.substr(first);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(digits);
}

std::vector<fs::path> SequencePattern::Existing() const {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(Folder(), ec)) {
    if (IndexOf(entry.path().filename().string())) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace pagereel::encode
