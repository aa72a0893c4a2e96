# pagereel_add_library(NAME SRCS ... [DEPS ...] [PRIVATE_DEPS ...])
#   Declares the static library pagereel_NAME (alias pagereel::NAME). Headers are included
#   as "NAME/file.h" from src/.
# pagereel_add_test(NAME SRCS ... [DEPS ...] [LABELS ...] [TIMEOUT s] [SERIAL])
#   Declares the GoogleTest binary NAME_test and registers its tests with ctest, labelled
#   (unit by default; integration for tests that run the real browser or encoders; slow).
#   SERIAL: ctest runs them alone (tests that measure the host and would see other tests).
function(pagereel_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(pagereel_${name} STATIC ${ARG_SRCS})
  add_library(pagereel::${name} ALIAS pagereel_${name})
  target_include_directories(pagereel_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
  target_compile_options(pagereel_${name} PRIVATE ${PAGEREEL_WARNINGS})
  target_link_libraries(pagereel_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

function(pagereel_add_test name)
  if(NOT PAGEREEL_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name}_test ${ARG_SRCS})
  target_compile_options(${name}_test PRIVATE ${PAGEREEL_WARNINGS})
  target_compile_definitions(${name}_test PRIVATE
    PAGEREEL_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    PAGEREEL_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  # gtest_discover_tests loses a list's escaping on its way to set_tests_properties: with
  # LABELS "integration;slow" the tests were labelled "integration" only, and the slow ones
  # ran in the default suite. One label per test (ctest -L/-LE match labels as regexes).
  list(LENGTH ARG_LABELS label_count)
  if(label_count GREATER 1)
    message(FATAL_ERROR "pagereel_add_test(${name}): give one label, not ${ARG_LABELS}")
  endif()
  gtest_discover_tests(${name}_test
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${serial}
    DISCOVERY_TIMEOUT 60)
endfunction()
