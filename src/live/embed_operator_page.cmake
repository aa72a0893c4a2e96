# Writes a header holding the operator page as a C++ string literal. Run as:
#   cmake -DIN=<operator_page.html> -DOUT=<operator_page.h> -P embed_operator_page.cmake
file(READ "${IN}" html)
string(FIND "${html}" ")pagereel_html\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )pagereel_html\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from src/live/operator_page.html by embed_operator_page.cmake; do not edit.
#ifndef PAGEREEL_LIVE_OPERATOR_PAGE_H_
#define PAGEREEL_LIVE_OPERATOR_PAGE_H_

namespace pagereel::live {

// The operator page served at GET / (see operator_page.html).
inline constexpr const char* kOperatorPage = R\"pagereel_html(${html})pagereel_html\";

}  // namespace pagereel::live

#endif  // PAGEREEL_LIVE_OPERATOR_PAGE_H_
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
