// What the kernel says about memory: this process's resident set, that of whole process
// groups (a browser and its helpers share one), and the memory available to start more.
#ifndef PAGEREEL_BASE_PROCESS_MEMORY_H_
#define PAGEREEL_BASE_PROCESS_MEMORY_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <vector>

namespace pagereel {

// Resident bytes of this process, or 0 when /proc cannot be read.
int64_t SelfResidentBytes();

// Resident bytes of every process in each of `groups`, summed per group (one walk of
// /proc for all of them). Groups with no live process are missing from the map.
std::map<pid_t, int64_t> GroupResidentBytes(const std::vector<pid_t>& groups);

// MemAvailable from /proc/meminfo, or -1 when it cannot be read.
int64_t AvailableMemoryBytes();

}  // namespace pagereel

#endif  // PAGEREEL_BASE_PROCESS_MEMORY_H_
