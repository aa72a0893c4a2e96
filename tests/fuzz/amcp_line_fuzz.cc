// libFuzzer target: bytes as a controller would send them to pagereel's AMCP server, read the
// way the server reads them (live/amcp_protocol.h). The first byte says how many bytes
// arrive at a time (0: all at once); the rest is the connection. Lines are cut with the
// server's limit; each is checked for HTTP, tokenised and parsed; every parameter goes
// through what the server makes of one (INVOKE's call, template data, a template name); every
// reply is written. What it checks: nothing throws or crashes; the splitter holds no more
// than one unfinished line within its limit; every reply ends in CR LF and is UTF-8 with no bare CR or LF
// inside a line; an INVOKE call that is accepted is a name and JSON arguments, nothing else.
//
// tests/fuzz/CMakeLists.txt builds it (clang, PAGEREEL_FUZZ) and runs it on the seeds in
// amcp_line/.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/utf8.h"
#include "live/amcp_protocol.h"

namespace {

using namespace pagereel::live::amcp;  // NOLINT(build/namespaces): a fuzz target.

constexpr size_t kLimit = 4096;  // Small, so the fuzzer reaches the overflow often.

void Check(bool ok) {
  if (!ok) std::abort();
}

void CheckReply(const std::string& reply) {
  Check(reply.size() >= 2 && reply.ends_with("\r\n"));
  Check(pagereel::IsUtf8(reply));
  // Lines end in CR LF; no line holds a CR or an LF of its own.
  for (size_t at = 0; at < reply.size();) {
    const size_t end = reply.find("\r\n", at);
    Check(end != std::string::npos);
    const std::string_view line(reply.data() + at, end - at);
    Check(line.find('\r') == std::string_view::npos && line.find('\n') == std::string_view::npos);
    at = end + 2;
  }
}

void Line(const std::string& line) {
  (void)LooksLikeHttp(line);
  if (!pagereel::IsUtf8(line)) {
    CheckReply(ErrorReply("", line));
    return;
  }
  Parsed parsed = Parse(line);
  if (parsed.error) {
    const ParseError& e = *parsed.error;
    CheckReply(e.code == Code::kError ? ErrorReply(e.request_id, line)
                                      : Reply(e.request_id, e.code, e.command));
    return;
  }
  if (!parsed.request) return;
  const Request& r = *parsed.request;
  Check(!r.command.empty());
  CheckReply(Reply(r.request_id, Code::kOk, r.command));
  for (const std::string& p : r.params) {
    pagereel::Result<std::string> call = InvokeExpression(p);
    if (call.ok()) {
      // name(args): the name has no parenthesis, and the call ends with the list.
      const size_t open = call->find('(');
      Check(open != std::string::npos && open > 0 && call->back() == ')');
    }
    (void)TemplateData(p);
    (void)TemplateUrl(p, "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = data[0] == 0 ? size : data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  LineSplitter splitter(kLimit);
  for (size_t at = 0; at < bytes.size(); at += step) {
    // The server reads only when no whole line is waiting.
    splitter.Feed(bytes.substr(at, step));
    while (std::optional<std::string> line = splitter.Next()) Line(*line);
    if (splitter.overflowed()) {
      CheckReply(Reply("", Code::kError, "", {"the line is too long"}));
      return 0;
    }
    // What is left is one unfinished line within the limit (and perhaps its CR).
    Check(splitter.pending_bytes() <= kLimit + 1);
  }
  return 0;
}
