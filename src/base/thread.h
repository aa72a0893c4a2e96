// Small helpers for the threads pagereel starts. Every thread has a name (shown by top -H,
// gdb and `pagereel probe`), at most 15 characters as Linux allows.
#ifndef PAGEREEL_BASE_THREAD_H_
#define PAGEREEL_BASE_THREAD_H_

#include <string_view>

namespace pagereel {

// Names the calling thread; longer names are cut to 15 characters.
void SetCurrentThreadName(std::string_view name);

}  // namespace pagereel

#endif  // PAGEREEL_BASE_THREAD_H_
