// AMCP, CasparCG's control protocol, as pagereel reads it: lines cut from a byte stream, a
// line cut into tokens exactly as CasparCG's server does (quotes, backslash escapes, a
// parenthesised list kept whole), a request (REQ id, command, channel-layer, parameters),
// and the replies' text. Also the pieces that turn a command's parameters into what a page
// is given: the JavaScript of CG INVOKE, CasparCG template data, and a template's name into
// a URL. No sockets and no engine here: pure, any thread (amcp_server.h serves it, and the
// fuzz target in tests/fuzz/ reads lines through these same functions).
#ifndef PAGEREEL_LIVE_AMCP_PROTOCOL_H_
#define PAGEREEL_LIVE_AMCP_PROTOCOL_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace pagereel::live::amcp {

// The longest line a client may send (CG ADD carries its template data on one line).
constexpr size_t kMaxLineBytes = 256 * 1024;

// Cuts a byte stream into lines ending in CR LF (a bare LF is taken too). Not thread-safe.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes = kMaxLineBytes) : max_(max_line_bytes) {}
  void Feed(std::string_view bytes) { pending_.append(bytes); }
  // The next whole line without its end, or nullopt when none is complete yet.
  std::optional<std::string> Next();
  // Whether the unfinished line already holds more than the limit (the client should be
  // answered and disconnected: there is no telling where its next line starts).
  bool overflowed() const;
  size_t pending_bytes() const { return pending_.size(); }

 private:
  size_t max_;
  std::string pending_;
};

// A line's tokens, as CasparCG's tokenizer makes them: split at spaces (and tabs) outside
// quotes and parentheses; quotes outside parentheses delimit a token and are dropped (""
// is an empty token); "\\" "\"" and "\n" are a backslash, a quote and a line feed, and a
// backslash before any other character keeps that character ("\$" is "$").
std::vector<std::string> Tokenize(std::string_view line);

// AMCP's reply codes.
enum class Code {
  kInfoMany = 200,    // Several lines of data follow, then an empty line.
  kInfoOne = 201,     // One line of data follows.
  kOk = 202,
  kError = 400,       // Not understood; the line is echoed.
  kBadChannel = 401,  // No such video channel.
  kMissing = 402,     // A parameter is missing.
  kIllegal = 403,     // A parameter is wrong, or the template failed the call.
  kNotFound = 404,    // No such template, media or data.
  kFailed = 501,      // It could not be done (the browser did not answer ...).
  kAccess = 503,      // The channel is locked: LOCK ACQUIRE the show's token first.
};

struct Request {
  std::string request_id;  // From "REQ ID ..."; the reply then starts "RES ID ".
  std::string command;     // Upper case, with its subcommand: "CG ADD", "PLAY", "INFO PATHS".
  std::optional<int> channel;
  std::optional<int> layer;
  std::vector<std::string> params;  // What follows, as tokens.
};

// A failed parse: the code and the command name to answer with (empty for 400).
struct ParseError {
  Code code = Code::kError;
  std::string request_id;
  std::string command;
  std::string why;  // For the show's log, never sent.
};

// The request a line holds, or what to answer. An empty line (or one of only spaces) has
// no request and no error: it is ignored.
struct Parsed {
  std::optional<Request> request;
  std::optional<ParseError> error;
};
Parsed Parse(std::string_view line);

// Whether a line is the start of an HTTP request or a header ("POST / HTTP/1.1", "Host:
// ..."), which a web page in a browser can send to any port: such a connection is closed
// at once, before any line of its body could be taken for a command.
bool LooksLikeHttp(std::string_view line);

// Reply text, CR LF ended, with "RES ID " first when the request had an id.
std::string Reply(const std::string& request_id, Code code, const std::string& command,
                  const std::vector<std::string>& data = {});
// "400 ERROR" and the line (cut, and made printable UTF-8), as CasparCG answers it.
std::string ErrorReply(const std::string& request_id, std::string_view line);

// CG INVOKE's method as a call a page may run: "next", "next()", or a name with arguments
// that are JSON values ("setScore(3, \"home\")"); never other text. kInvalidArgument names
// what is wrong.
Result<std::string> InvokeExpression(std::string_view method);

// Template data (CG ADD, CG UPDATE) as the page's update() is given it: CasparCG trims
// spaces and quotes at both ends and passes the rest, XML (<templateData>...) or JSON, as
// one string. kNotFound for a name of a stored data set (pagereel keeps none);
// kInvalidArgument for text that is not UTF-8.
Result<std::string> TemplateData(std::string_view data);

// A CG ADD template: a URL (http, https, file, data) as it is, or a name found in
// `templates` (a folder): "name", "name.html", "name.htm" or "name/index.html", matched
// without regard to case as CasparCG does, never outside the folder. kNotFound naming
// where it looked; kInvalidArgument for a name that climbs out or a URL of another kind.
Result<std::string> TemplateUrl(std::string_view name, const std::string& templates);

// Names of the templates in `templates` (the .html files, without .html, and folders with
// an index.html), sorted, at most `limit`.
std::vector<std::string> ListTemplates(const std::string& templates, size_t limit = 1000);

// A channel's video format as CasparCG names it: "720p2500", "1080p5994", "1080p3000".
std::string FormatName(int width, int height, double fps);

// Text for XML attribute values and elements.
std::string XmlEscape(std::string_view text);

}  // namespace pagereel::live::amcp

#endif  // PAGEREEL_LIVE_AMCP_PROTOCOL_H_
