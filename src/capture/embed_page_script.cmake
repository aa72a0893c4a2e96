# Writes a header holding an injected page script as a C++ string literal. Run as:
#   cmake -DIN=<script.js> -DOUT=<script.h> -DSYMBOL=<kName> [-DCOMMON=<script_common.js>]
#         -P embed_page_script.cmake
# SYMBOL kPageScript also gets kPageScriptConfig, the placeholder Page replaces.
file(READ "${IN}" js)
# Scripts that say /*__PAGEREEL_COMMON__*/ get script_common.js there (COMMON).
if(DEFINED COMMON)
  file(READ "${COMMON}" common)
  string(REPLACE "/*__PAGEREEL_COMMON__*/\n" "${common}" js "${js}")
endif()
string(FIND "${js}" ")pagereel_js\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )pagereel_js\"")
endif()
get_filename_component(source_name "${IN}" NAME)
string(TOUPPER "${SYMBOL}" guard)
set(extra "")
if(SYMBOL STREQUAL "kPageScript")
  set(extra "inline constexpr const char* kPageScriptConfig = \"__PAGEREEL_CONFIG__\";\n")
endif()
file(WRITE "${OUT}.tmp" "// Generated from src/capture/${source_name} by embed_page_script.cmake; do not edit.
#ifndef PAGEREEL_CAPTURE_${guard}_H_
#define PAGEREEL_CAPTURE_${guard}_H_

namespace pagereel::capture {

// The script injected into documents before their own scripts (see ${source_name}).
// The page script with script_common.js is over the 65,536 characters the standard asks
// compilers to take in one literal; GCC and Clang take any length (Clang warns under
// -Wpedantic, which the build makes an error).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored \"-Woverlength-strings\"
#endif
inline constexpr const char* ${SYMBOL} = R\"pagereel_js(${js})pagereel_js\";
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
${extra}
}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_${guard}_H_
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
