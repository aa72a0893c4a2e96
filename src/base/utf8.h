// UTF-8 as pagereel's servers check and quote text: whether a value a client sent is UTF-8
// (what may go into the JSON of the DevTools protocol), and where text may be cut without
// splitting a character. Pure; any thread.
#ifndef PAGEREEL_BASE_UTF8_H_
#define PAGEREEL_BASE_UTF8_H_

#include <cstddef>
#include <string_view>

namespace pagereel {

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF, no sequence cut short).
bool IsUtf8(std::string_view text);

// The longest start of `text` of at most `max_bytes` bytes that does not end inside a
// well-formed character. A byte that begins no well-formed character counts as one
// character of its own (a JSON writer replaces it; it is never split off a neighbour).
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_UTF8_H_
