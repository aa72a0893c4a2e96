# Writes page_script.h: the injected page script as a C++ string literal. Run as:
#   cmake -DIN=<page_script.js> -DOUT=<page_script.h> -P embed_page_script.cmake
file(READ "${IN}" js)
string(FIND "${js}" ")pagereel_js\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )pagereel_js\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from src/capture/page_script.js by embed_page_script.cmake; do not edit.
#ifndef PAGEREEL_CAPTURE_PAGE_SCRIPT_H_
#define PAGEREEL_CAPTURE_PAGE_SCRIPT_H_

namespace pagereel::capture {

// The script injected into every document before its own scripts (see page_script.js).
// It holds one placeholder, kPageScriptConfig, that Page replaces with a JSON object.
inline constexpr const char* kPageScript = R\"pagereel_js(${js})pagereel_js\";
inline constexpr const char* kPageScriptConfig = \"__PAGEREEL_CONFIG__\";

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_PAGE_SCRIPT_H_
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
