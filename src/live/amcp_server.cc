#include "live/amcp_server.h"

#include <fcntl.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/thread.h"
#include "base/utf8.h"
#include "http/session.h"
#include "http/token.h"
#include "live/amcp_protocol.h"
#include "live/json_parse.h"
#include "live/template_call.h"

namespace pagereel::live {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using amcp::Code;
using amcp::Request;
using json = nlohmann::ordered_json;

namespace {

// How long CG ADD and PLAY [HTML] wait for the new page's load event.
constexpr std::chrono::seconds kLoadTimeout{15};
// The layer CG commands address when they name none, as in CasparCG.
constexpr int kDefaultCgLayer = 9999;
// Wrong LOCK secrets a connection may send before it is closed.
constexpr int kMaxWrongSecrets = 3;
// What a connection being closed may still send (and have dropped) before it is reset.
constexpr size_t kMaxDrainBytes = 4 << 20;
// And for how long.
constexpr std::chrono::seconds kLinger{2};

// Marks the document a source shows before it is sent elsewhere, so the wait below can tell
// the new document from the old one (Page.navigate may answer before the new one commits).
constexpr char kMarkOld[] = "window.__pagereelAmcpOld=true";
// Settles, once the document has loaded, with whether it is the new one.
constexpr char kLoaded[] =
    "new Promise(r=>{const d=()=>r(window.__pagereelAmcpOld!==true);"
    "if(document.readyState==='complete')d();else addEventListener('load',d,{once:true})})";

bool SameNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// What a command did: the reply's text, and for a refusal why (for the show's log).
struct Outcome {
  std::string reply;
  std::string why;
};

Code CodeOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return Code::kNotFound;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:  // The page threw.
      return Code::kIllegal;
    default:
      return Code::kFailed;
  }
}

// "CG ADD" answers "202 CG OK"; "PLAY" answers "202 PLAY OK".
std::string OkName(const std::string& command) {
  return command.starts_with("CG ") ? "CG" : command;
}

std::optional<int> Integer(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int v = 0;
  size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return std::nullopt;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return text[0] == '-' ? -v : v;
}

// A CasparCG transition among a PLAY's parameters as a fade: "MIX 25" (or PUSH, WIPE,
// SLIDE: drawn as a fade) is 25 frames, "CUT" or none is 0.
int FadeFrames(const std::vector<std::string>& params, size_t from) {
  for (size_t i = from; i < params.size(); ++i) {
    for (const char* kind : {"MIX", "PUSH", "WIPE", "SLIDE"}) {
      if (SameNoCase(params[i], kind) && i + 1 < params.size()) {
        if (std::optional<int> n = Integer(params[i + 1]); n && *n > 0) {
          return std::min(*n, 100'000);
        }
      }
    }
  }
  return 0;
}

}  // namespace

class AmcpSession;

struct AmcpServer::Impl {
  // Constant after Listen().
  AmcpOptions options;
  std::string host;
  uint16_t port = 0;
  bool loopback = false;

  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::io_context calls{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> calls_work;
  std::thread io_thread;
  std::thread calls_thread;
  std::promise<void> io_ended;

  Engine* engine = nullptr;  // Set by Serve(); constant afterwards.
  std::atomic<bool> stopping{false};
  bool served = false;   // The owner's thread only.
  bool stopped = false;  // The owner's thread only.

  // The I/O thread only.
  std::vector<std::weak_ptr<AmcpSession>> sessions;

  // The calls thread only: the page each mapped source was last sent to.
  std::map<std::string, std::string> urls;

  void Accept();
  void Log(std::string_view text) const {
    if (options.log) options.log(text);
  }
  // Runs a request (on the calls thread).
  Outcome Execute(const Request& r);

 private:
  Outcome Done(const Request& r, Code code, std::vector<std::string> data = {}) const {
    return {amcp::Reply(r.request_id, code, OkName(r.command), data), ""};
  }
  Outcome Refuse(const Request& r, Code code, std::string why) const {
    return {amcp::Reply(r.request_id, code, r.command), std::move(why)};
  }
  Outcome Refuse(const Request& r, const Status& status) const {
    return Refuse(r, CodeOf(status), std::string(status.message()));
  }
  std::optional<std::string> SourceAt(int layer) const {
    auto it = options.layers.find(layer);
    if (it == options.layers.end()) return std::nullopt;
    return it->second;
  }
  Status Call(const std::string& source, const std::string& expression, std::string* result);
  Status Load(const std::string& source, const std::string& url);
  Outcome Info(const Request& r);
  Outcome Cg(const Request& r, const std::string& source);
  std::string LayerXml(int layer, const std::string& source, const ShowStatus& status);
};

Status AmcpServer::Impl::Call(const std::string& source, const std::string& expression,
                              std::string* result) {
  Result<std::string> value = engine->CallSource(source, expression);
  if (!value.ok()) return value.status();
  if (result != nullptr) *result = std::move(value).value();
  return Status::Ok();
}

// Sends `source` to `url` and waits until the new document has loaded, so that the
// update() and play() that follow reach the template, not the page before it.
Status AmcpServer::Impl::Load(const std::string& source, const std::string& url) {
  (void)engine->CallSource(source, kMarkOld);  // A hung page is replaced by the navigation.
  if (Status navigated = engine->Navigate(source, url); !navigated.ok()) {
    return navigated.code() == StatusCode::kFailedPrecondition
               ? NotFoundError(std::string(navigated.message()))
               : navigated;
  }
  urls[source] = url;
  const auto deadline = std::chrono::steady_clock::now() + kLoadTimeout;
  for (;;) {
    Result<std::string> loaded = engine->CallSource(source, kLoaded);
    if (loaded.ok() && *loaded == "true") return Status::Ok();
    if (!loaded.ok() && loaded.status().code() != StatusCode::kDeadlineExceeded &&
        loaded.status().code() != StatusCode::kFailedPrecondition) {
      return loaded.status();
    }
    if (std::chrono::steady_clock::now() >= deadline || stopping) {
      return DeadlineExceededError("the template " + url + " did not finish loading in " +
                                   std::to_string(kLoadTimeout.count()) + " s");
    }
    // The old document still (or its context was being torn down): again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string AmcpServer::Impl::LayerXml(int layer, const std::string& source,
                                       const ShowStatus& status) {
  std::string xml = "<layer index=\"" + std::to_string(layer) + "\"><source>" +
                    amcp::XmlEscape(source) + "</source>";
  for (const SourceStatus& s : status.sources) {
    if (s.id != source) continue;
    xml += std::string("<visible>") + (s.visible ? "true" : "false") + "</visible><opacity>" +
           std::to_string(s.opacity) + "</opacity>";
  }
  auto url = urls.find(source);
  if (url != urls.end()) xml += "<url>" + amcp::XmlEscape(url->second) + "</url>";
  return xml + "</layer>";
}

Outcome AmcpServer::Impl::Info(const Request& r) {
  const std::string format = amcp::FormatName(options.width, options.height, options.fps);
  if (r.command == "INFO PATHS") {
    return Done(r, Code::kInfoOne,
                {"<paths><template-path>" + amcp::XmlEscape(options.templates) +
                 "</template-path></paths>"});
  }
  if (!r.channel) {
    return Done(r, Code::kInfoMany, {std::to_string(options.channel) + " " + format + " PLAYING"});
  }
  const ShowStatus status = engine->CurrentStatus();
  if (r.layer) {
    std::optional<std::string> source = SourceAt(*r.layer);
    return Done(r, Code::kInfoOne,
                {source ? LayerXml(*r.layer, *source, status)
                        : "<layer index=\"" + std::to_string(*r.layer) + "\"/>"});
  }
  std::string xml = "<channel><format>" + format + "</format><framerate>" +
                    std::to_string(options.fps) + "</framerate><layers>";
  for (const auto& [layer, source] : options.layers) xml += LayerXml(layer, source, status);
  return Done(r, Code::kInfoOne, {xml + "</layers></channel>"});
}

namespace {

// A call of the page's `function` with these arguments (each written as JSON).
std::string Calling(const char* function, const json& args = json::array()) {
  std::string expression = function;
  expression += "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) expression += ",";
    expression += args[i].dump(-1, ' ', true, json::error_handler_t::replace);
  }
  return expression + ")";
}

}  // namespace

Outcome AmcpServer::Impl::Cg(const Request& r, const std::string& source) {
  const std::vector<std::string>& p = r.params;
  if (r.command == "CG CLEAR") {
    Status hidden = engine->SetVisible(source, false, 0);
    return hidden.ok() ? Done(r, Code::kOk) : Refuse(r, hidden);
  }
  if (!Integer(p.at(0))) {
    return Refuse(r, Code::kIllegal, "the CG layer '" + p[0] + "' is not a whole number");
  }
  if (r.command == "CG ADD") {
    // CG c-l ADD cglayer template [label] play-on-load [data]: a parameter of more than
    // one character where the flag goes is a start label (CasparCG's rule), and the flag
    // follows it.
    size_t flag = 2;
    if (p[2].size() > 1) {
      flag = 3;
      if (p.size() <= flag) {
        return Refuse(r, Code::kMissing, "CG ADD with a start label needs the play-on-load flag");
      }
    }
    const bool play = !p[flag].empty() && p[flag][0] == '1';
    Result<std::string> url = amcp::TemplateUrl(p[1], options.templates);
    if (!url.ok()) return Refuse(r, url.status());
    std::string data;
    if (p.size() > flag + 1) {
      Result<std::string> d = amcp::TemplateData(p[flag + 1]);
      if (!d.ok()) return Refuse(r, d.status());
      data = std::move(d).value();
    }
    if (Status loaded = Load(source, *url); !loaded.ok()) return Refuse(r, loaded);
    // CasparCG calls update() on every ADD, with "" when there is no data; a template
    // without an update() is fine then.
    const std::string update = Calling("update", json::array({data}));
    if (Status updated =
            Call(source, data.empty() ? "typeof update==='function'&&" + update : update, nullptr);
        !updated.ok()) {
      return Refuse(r, updated);
    }
    if (Status shown = engine->SetVisible(source, true, 0); !shown.ok()) return Refuse(r, shown);
    if (play) {
      if (Status played = Call(source, Calling("play"), nullptr); !played.ok()) {
        return Refuse(r, played);
      }
    }
    return Done(r, Code::kOk);
  }
  if (r.command == "CG UPDATE") {
    Result<std::string> data = amcp::TemplateData(p[1]);
    if (!data.ok()) return Refuse(r, data.status());
    Status updated = Call(source, Calling("update", json::array({*data})), nullptr);
    return updated.ok() ? Done(r, Code::kOk) : Refuse(r, updated);
  }
  if (r.command == "CG INVOKE") {
    Result<std::string> expression = amcp::InvokeExpression(p[1]);
    if (!expression.ok()) return Refuse(r, expression.status());
    std::string result;
    if (Status called = Call(source, *expression, &result); !called.ok()) return Refuse(r, called);
    // The value on one line: a string as its text, anything else as JSON.
    json value = json::parse(result, nullptr, false);
    std::string line = value.is_string() ? value.get<std::string>()
                       : value.is_discarded() || value.is_null() ? std::string()
                                                                 : value.dump();
    for (char& c : line) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    return Done(r, Code::kInfoOne, {std::string(Utf8Prefix(line, 64 * 1024))});
  }
  if (r.command == "CG REMOVE") {
    // The template's own remove() if it has one; else what CasparCG's does: the layer is
    // cleared (here: the source is hidden).
    std::string had;
    if (Status called = Call(source, "typeof remove==='function'?(remove(),true):false", &had);
        !called.ok()) {
      return Refuse(r, called);
    }
    if (had != "true") {
      if (Status hidden = engine->SetVisible(source, false, 0); !hidden.ok()) {
        return Refuse(r, hidden);
      }
    }
    return Done(r, Code::kOk);
  }
  const char* function = r.command == "CG PLAY"   ? "play"
                         : r.command == "CG STOP" ? "stop"
                                                  : "next";
  Status called = Call(source, Calling(function), nullptr);
  return called.ok() ? Done(r, Code::kOk) : Refuse(r, called);
}

Outcome AmcpServer::Impl::Execute(const Request& r) {
  if (r.command == "VERSION") return Done(r, Code::kInfoOne, {"2.3.0 pagereel"});
  if (r.command == "TLS") {
    std::vector<std::string> lines;
    for (const std::string& name : amcp::ListTemplates(options.templates)) {
      lines.push_back("\"" + name + "\"");
    }
    return Done(r, Code::kInfoMany, std::move(lines));
  }
  if (r.command == "CLS" || r.command == "FLS") return Done(r, Code::kInfoMany);
  if (r.channel && *r.channel != options.channel) {
    return Refuse(r, Code::kBadChannel,
                  "this show is channel " + std::to_string(options.channel) + ", not " +
                      std::to_string(*r.channel));
  }
  if (r.command.starts_with("INFO")) return Info(r);

  const int layer = r.layer.value_or(r.command.starts_with("CG ") ? kDefaultCgLayer : 0);
  const std::optional<std::string> source = SourceAt(layer);
  const std::string where = std::to_string(options.channel) + "-" + std::to_string(layer);
  if (r.command == "CLEAR" && !r.layer) {
    for (const auto& [l, id] : options.layers) {
      if (Status hidden = engine->SetVisible(id, false, 0); !hidden.ok()) return Refuse(r, hidden);
    }
    return Done(r, Code::kOk);
  }
  if (!source) {
    // Like an empty layer in CasparCG: stopping or clearing it does nothing; anything else
    // has nothing to act on.
    if (r.command == "CLEAR" || r.command == "STOP" || r.command == "CG CLEAR") {
      return Done(r, Code::kOk);
    }
    return Refuse(r, Code::kIllegal, "no source is on layer " + where + " (amcp_layer in the show file)");
  }
  if (r.command.starts_with("CG ")) return Cg(r, *source);
  if (r.command == "STOP" || r.command == "CLEAR") {
    Status hidden = engine->SetVisible(*source, false, 0);
    return hidden.ok() ? Done(r, Code::kOk) : Refuse(r, hidden);
  }
  // PLAY c-l [[HTML] url | EMPTY] [transition].
  const std::vector<std::string>& p = r.params;
  if (!p.empty() && SameNoCase(p[0], "EMPTY")) {
    Status hidden = engine->SetVisible(*source, false, FadeFrames(p, 1));
    return hidden.ok() ? Done(r, Code::kOk) : Refuse(r, hidden);
  }
  size_t transition = 0;
  if (!p.empty() && SameNoCase(p[0], "[HTML]")) {
    if (p.size() < 2) return Refuse(r, Code::kMissing, "PLAY [HTML] needs a URL");
    Result<std::string> url = amcp::TemplateUrl(p[1], options.templates);
    if (!url.ok()) return Refuse(r, url.status());
    if (Status loaded = Load(*source, *url); !loaded.ok()) return Refuse(r, loaded);
    transition = 2;
  } else if (!p.empty() && !SameNoCase(p[0], "MIX") && !SameNoCase(p[0], "CUT") &&
             !SameNoCase(p[0], "PUSH") && !SameNoCase(p[0], "WIPE") && !SameNoCase(p[0], "SLIDE")) {
    return Refuse(r, Code::kNotFound,
                  "'" + p[0] + "' is a media clip, and pagereel plays pages only: PLAY " + where +
                      " [HTML] URL, or CG ADD a template");
  }
  Status shown = engine->SetVisible(*source, true, FadeFrames(p, transition));
  return shown.ok() ? Done(r, Code::kOk) : Refuse(r, shown);
}

// One controller's connection: lines in, one command at a time, replies out in order.
class AmcpSession : public std::enable_shared_from_this<AmcpSession> {
 public:
  AmcpSession(tcp::socket socket, AmcpServer::Impl& server)
      : socket_(std::move(socket)), server_(server), linger_(server.io) {
    boost::system::error_code ec;
    const tcp::endpoint peer = socket_.remote_endpoint(ec);
    peer_ = ec ? "?" : peer.address().to_string() + ":" + std::to_string(peer.port());
  }

  void Start() { Pump(); }

  void Close() {
    if (closed_) return;
    closed_ = true;
    linger_.cancel();
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  // Handles the lines already read, one at a time; reads more once none is left.
  void Pump() {
    while (!busy_ && !closed_ && !closing_) {
      std::optional<std::string> line = splitter_.Next();
      if (!line) {
        if (splitter_.overflowed()) {
          Refused("a line over " + std::to_string(amcp::kMaxLineBytes) + " bytes");
          return Respond(amcp::Reply("", Code::kError, "", {"the line is longer than 256 KiB"}),
                         /*close_after=*/true);
        }
        return Read();
      }
      Handle(*line);
    }
  }

  void Handle(const std::string& line) {
    if (amcp::LooksLikeHttp(line)) {
      // A web page in a browser can send a POST to any port; its body must never run.
      Refused("HTTP, not AMCP: the connection is closed");
      return Linger();
    }
    if (!IsUtf8(line)) {
      Refused("a line that is not UTF-8");
      return Respond(amcp::ErrorReply("", line));
    }
    amcp::Parsed parsed = amcp::Parse(line);
    if (parsed.error) {
      const amcp::ParseError& e = *parsed.error;
      Refused("'" + Shown(line) + "': " + e.why);
      return Respond(e.code == Code::kError
                         ? amcp::ErrorReply(e.request_id, line)
                         : amcp::Reply(e.request_id, e.code, e.command));
    }
    if (!parsed.request) return;  // An empty line.
    const Request& r = *parsed.request;
    if (r.command == "PING") {
      std::string pong = "PONG";
      for (const std::string& p : r.params) pong += " " + p;
      return Respond(pong + "\r\n");
    }
    if (r.command == "BYE") return Close();
    if (r.command == "LOCK") return Lock(r);
    if (!Allowed(r)) {
      Refused("'" + Shown(line) + "': the channel is locked: LOCK " +
              std::to_string(server_.options.channel) + " ACQUIRE the show's token first");
      return Respond(amcp::Reply(r.request_id, Code::kAccess, r.command));
    }
    busy_ = true;
    asio::post(server_.calls, [self = shared_from_this(), r, line] {
      Outcome outcome = self->server_.stopping
                            ? Outcome{amcp::Reply(r.request_id, Code::kFailed, r.command),
                                      "the show is ending"}
                            : self->server_.Execute(r);
      asio::post(self->server_.io, [self, outcome = std::move(outcome), line] {
        self->busy_ = false;
        if (!outcome.why.empty()) self->Refused("'" + Shown(line) + "': " + outcome.why);
        self->Respond(outcome.reply);
      });
    });
  }

  // Queries are open to all; what changes the show needs the token when there is one.
  bool Allowed(const Request& r) const {
    if (server_.options.token.empty() || authorized_) return true;
    return r.command.starts_with("INFO") || r.command == "VERSION" || r.command == "TLS" ||
           r.command == "CLS" || r.command == "FLS";
  }

  // LOCK channel ACQUIRE secret | RELEASE | CLEAR secret: CasparCG's channel lock, taken
  // here as the show's token.
  void Lock(const Request& r) {
    const std::string action = r.params.size() > 1 ? Upper(r.params[1]) : "";
    const std::string name = "LOCK " + action;
    if (action == "RELEASE") {
      authorized_ = false;
      return Respond(amcp::Reply(r.request_id, Code::kOk, name));
    }
    if (action != "ACQUIRE" && action != "CLEAR") {
      return Respond(amcp::Reply(r.request_id, Code::kIllegal, "LOCK"));
    }
    const std::string secret = r.params.size() > 2 ? r.params[2] : "";
    if (!http::IsAuthorized("Bearer " + secret, server_.options.token) || secret.empty()) {
      if (!server_.options.token.empty()) {
        Refused("a wrong LOCK secret");
        const bool enough = ++wrong_secrets_ >= kMaxWrongSecrets;
        return Respond(amcp::Reply(r.request_id, Code::kAccess, name), enough);
      }
    }
    authorized_ = true;
    Respond(amcp::Reply(r.request_id, Code::kOk, name));
  }

  void Respond(std::string text, bool close_after = false) {
    busy_ = true;
    reply_ = std::move(text);
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this(), close_after](boost::system::error_code ec, size_t) {
                        self->busy_ = false;
                        if (ec) return self->Close();
                        if (close_after) return self->Linger();
                        self->Pump();
                      });
  }

  // Ends the connection without resetting it: no more is sent, and what the client still
  // sends is read and dropped (up to a bound), so the reply before it is not lost.
  void Linger() {
    closing_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    linger_.expires_after(kLinger);
    linger_.async_wait([self = shared_from_this()](boost::system::error_code) { self->Close(); });
    Drain();
  }
  void Drain() {
    socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](
                                                       boost::system::error_code ec, size_t n) {
      self->drained_ += n;
      if (ec || self->server_.stopping || self->drained_ > kMaxDrainBytes) return self->Close();
      self->Drain();
    });
  }

  void Read() {
    if (closing_) return;
    socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](
                                                       boost::system::error_code ec, size_t n) {
      if (ec || self->server_.stopping) return self->Close();
      self->splitter_.Feed(std::string_view(self->buffer_.data(), n));
      self->Pump();
    });
  }

  void Refused(const std::string& what) const {
    server_.Log("amcp " + peer_ + ": " + what);
  }

  static std::string Shown(const std::string& line) {
    std::string out(Utf8Prefix(line, 120));
    for (char& c : out) {
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    }
    return line.size() > out.size() ? out + "..." : out;
  }

  static std::string Upper(std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
  }

  tcp::socket socket_;
  AmcpServer::Impl& server_;
  std::string peer_;
  asio::steady_timer linger_;
  amcp::LineSplitter splitter_;
  std::array<char, 16 * 1024> buffer_{};
  std::string reply_;
  bool busy_ = false;
  bool closing_ = false;  // Lingering: nothing more is read as commands.
  bool closed_ = false;
  size_t drained_ = 0;
  bool authorized_ = false;
  int wrong_secrets_ = 0;
};

void AmcpServer::Impl::Accept() {
  acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    } else if (!stopping) {
      // Close-on-exec, so a browser started later does not hold the connection open.
      ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
      std::erase_if(sessions, [](const auto& s) { return s.expired(); });
      if (static_cast<int>(sessions.size()) >= options.max_connections) {
        Log("amcp: a connection over the limit of " + std::to_string(options.max_connections) +
            " was closed");
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        auto session = std::make_shared<AmcpSession>(std::move(socket), *this);
        sessions.push_back(session);
        session->Start();
      }
    }
    Accept();
  });
}

AmcpServer::AmcpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AmcpServer::~AmcpServer() { Stop(); }

Result<std::unique_ptr<AmcpServer>> AmcpServer::Listen(const AmcpOptions& options) {
  const std::optional<tcp::endpoint> endpoint =
      http::ParseListenAddress(options.listen, http::HostNames::kLocalhost);
  if (!endpoint) {
    return InvalidArgumentError("the AMCP address '" + options.listen.substr(0, 80) +
                                "' is not HOST:PORT with a numeric address or localhost "
                                "(127.0.0.1:5250, [::1]:5250, 0.0.0.0:5250; port 0 picks a "
                                "free one)");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.max_connections < 1) impl->options.max_connections = 1;
  for (const auto& [layer, source] : options.layers) {
    auto url = options.urls.find(source);
    if (url != options.urls.end()) impl->urls[source] = url->second;
  }
  PR_RETURN_IF_ERROR(http::Listen(impl->acceptor, *endpoint, options.listen));
  impl->host = endpoint->address().to_string();
  impl->port = impl->acceptor.local_endpoint().port();
  impl->loopback = endpoint->address().is_loopback();
  return std::unique_ptr<AmcpServer>(new AmcpServer(std::move(impl)));
}

void AmcpServer::Serve(Engine& engine) {
  Impl& s = *impl_;
  if (s.served || s.stopped) return;
  s.served = true;
  s.engine = &engine;
  s.Accept();
  s.calls_work.emplace(s.calls.get_executor());
  s.io_thread = std::thread([&s] {
    SetCurrentThreadName("live-amcp");
    http::RunIo(s.io, [&s](std::string_view what) {
      s.Log("amcp: a connection was dropped: its handler threw: " + std::string(what));
    });
    s.io_ended.set_value();
  });
  s.calls_thread = std::thread([&s] {
    SetCurrentThreadName("live-amcp-calls");
    s.calls.run();
  });
}

void AmcpServer::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  s.stopping = true;
  if (!s.served) {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    return;
  }
  std::promise<void> closed;
  asio::post(s.io, [&s, &closed] {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    for (const auto& weak : s.sessions) {
      if (std::shared_ptr<AmcpSession> session = weak.lock()) session->Close();
    }
    closed.set_value();
  });
  closed.get_future().wait();
  s.calls_work.reset();
  s.calls.stop();  // A command in progress finishes (the engine bounds it); queued ones are dropped.
  s.calls_thread.join();
  if (s.io_ended.get_future().wait_for(std::chrono::seconds(1)) != std::future_status::ready) {
    s.io.stop();
  }
  s.io_thread.join();
}

uint16_t AmcpServer::port() const { return impl_->port; }
const std::string& AmcpServer::host() const { return impl_->host; }
bool AmcpServer::loopback() const { return impl_->loopback; }

}  // namespace pagereel::live
