# One warnings list for pagereel's own targets (never applied to third-party code).
set(PAGEREEL_WARNINGS
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)
# Clang checks the locking annotations of base/thread_annotations.h (the thread-safety
# preset builds with clang, and CI builds that preset).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  list(APPEND PAGEREEL_WARNINGS -Wthread-safety)
endif()
if(PAGEREEL_WERROR)
  list(APPEND PAGEREEL_WARNINGS -Werror)
endif()
# GCC 12 reports impossible memcpy overlaps inside std::string moves (GCC bug 105651);
# the warning is noise there and would break the ci preset.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND PAGEREEL_WARNINGS -Wno-restrict)
endif()
