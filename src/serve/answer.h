// Answer: an HTTP answer of the capture service before its connection writes it, and the
// service's error answers. Error answers are JSON whatever text they carry: a detail that
// quotes what a client sent may hold bytes that are not UTF-8, and they are written as
// U+FFFD rather than refused (a strict JSON writer throws on them). Pure; any thread.
#ifndef PAGEREEL_SERVE_ANSWER_H_
#define PAGEREEL_SERVE_ANSWER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagereel::serve {

struct Answer {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Beyond Content-Type.
};

// The service's error answer: JSON {"error": what `status` means, "detail": `detail`}.
Answer ErrorAnswer(int status, std::string_view detail);

// `text` fit for the value of an HTTP header: control characters become spaces, bytes
// outside ASCII are written %XX (a sound's source may be any URL or text a page spoke), and
// it is cut to `max_bytes` ("..." ends a text cut short).
std::string HeaderText(std::string_view text, size_t max_bytes = 300);

// 404 for a path that is no route of the service, naming it (its first 100 bytes) and the
// routes there are.
Answer NoRouteAnswer(std::string_view path);

}  // namespace pagereel::serve

#endif  // PAGEREEL_SERVE_ANSWER_H_
