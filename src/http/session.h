// Session: one connection of an HTTP/1.1 server on Boost.Beast, the part that pagereel's
// two servers share (serve/server.cc, live/control_server.cc). It reads requests one after
// another (keep-alive) with a RequestReader (request_reader.h: a body limit, 16 KiB of
// headers, of a chunk's size line and of the trailer) within a 60 s idle timeout; lets the
// server refuse a request from its header, before its body is read (CheckHeader: a token,
// a route), and tells a client that asked for it to send the body once the header passed
// (100 Continue); answers a request it cannot read (413, 431, 400, in the server's own error
// format) and hangs up; and writes every answer with "Server: pagereel" (and
// "Cache-Control: no-store" when asked), keeping the connection while the client asks for
// it and the server is not stopping. A server derives from it and answers each request
// in HandleRequest(), at once or later. Nothing a client sends, and nothing thrown while a
// request is read or handled, ends more than that client's connection: an exception from
// HandleRequest() or CheckHeader() is answered 500 and the connection closed.
//
// Also here, because they need Asio too: the listening socket both servers open
// (ParseListenAddress, Listen), and RunIo, which runs a server's I/O thread so that an
// exception from any handler ends only that handler's connection.
//
// Threads: all calls and callbacks of one session run on the executor of its socket (the
// server's I/O thread, or a strand of it); none may be made from another thread.
#ifndef PAGEREEL_HTTP_SESSION_H_
#define PAGEREEL_HTTP_SESSION_H_

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/request_reader.h"

namespace pagereel::http {

using Response = boost::beast::http::response<boost::beast::http::string_body>;

// How a session ends its connection.
enum class CloseMode {
  // Shut it both ways and close the socket.
  kAtOnce,
  // Stop sending, then read and drop what the client still sends (a body refused as too
  // large, say) for up to 5 s and 64 MiB before closing: closing at once would reset the
  // connection under a client still writing, and it would never read the answer it was sent.
  kLinger,
};

struct SessionOptions {
  size_t max_body_bytes = 1 << 20;
  // The detail of the 413 for a larger body, in the server's words ("the body is larger
  // than 1 MiB, the most a command may be").
  std::string body_too_large = "the body is too large";
  CloseMode close = CloseMode::kAtOnce;
  bool no_store = false;  // "Cache-Control: no-store" on every answer.
  // While it reads true, answers close their connection: the server is stopping.
  const std::atomic<bool>* stopping = nullptr;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // REQUIRES: `options` outlives the session.
  Session(boost::asio::ip::tcp::socket socket, const SessionOptions& options);
  virtual ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Reads the next request's header, asks CheckHeader(), reads its body into request(), then
  // calls HandleRequest().
  void Read();

  // Writes `response` (adding Server, Cache-Control, Connection and Content-Length), then
  // reads the next request, or closes when the request or the server asked for that.
  // Cancels whatever else waits on the socket first. Nothing is written once it is closed.
  void Write(Response response);

  // Ends the connection as SessionOptions::close says.
  void Close();

 protected:
  // Called when a request's header has been read, before any of its body: an answer refuses
  // the request (its body is never read; unless it had none, the connection closes after the
  // answer). nullopt: the body is read and HandleRequest() called. By default every header
  // passes.
  virtual std::optional<Response> CheckHeader(const Request& header);

  // Answers request(): calls Write() once, now or later, or takes the socket over.
  // request() is valid until Write() (which lets go of its body).
  virtual void HandleRequest() = 0;

  // The answer to a request that could not be read: 413 (too large a body, or a chunk's
  // extensions), 431 (too large headers or trailer), 400 (not HTTP), or 500 (CheckHeader or
  // HandleRequest threw), with `detail` for the client. The connection closes after it.
  virtual Response ReadError(int status, const std::string& detail) = 0;

  Request& request() { return request_; }
  boost::beast::tcp_stream& stream() { return stream_; }

 private:
  // Parses what has been read, and reads more, checks the header or hands the request over.
  void Parse();
  void ReadSome();
  // Tells the client to send its body ("100 Continue"), then reads on.
  void WriteContinue();
  // Answers a request that could not be read, or that threw, and closes the connection.
  void Refuse(int status, const std::string& detail);

  using Scratch = std::array<char, 64 * 1024>;
  void Drain(std::shared_ptr<Scratch> scratch, size_t drained);

  const SessionOptions& options_;
  boost::beast::tcp_stream stream_;
  RequestReader reader_;
  Request request_;
  bool keep_alive_ = true;  // What the request asked; false after a read error.
  int writes_ = 0;          // Answers written, so a handler that threw after answering is seen.
  bool failed_ = false;     // A handler threw: close once its answer is written.
};

// Which host names ParseListenAddress accepts besides numeric addresses.
enum class HostNames {
  kNumericOnly,
  kLocalhost,  // "localhost" (any case), as 127.0.0.1.
};

// HOST:PORT as pagereel's servers take it: a numeric IPv4 or IPv6 address (IPv6 with or
// without brackets: [::1]:8080) and a decimal port up to 65535, 0 picking a free one.
// nullopt when `text` is not that.
std::optional<boost::asio::ip::tcp::endpoint> ParseListenAddress(std::string_view text,
                                                                 HostNames names);

// Opens `acceptor` on `endpoint` (close-on-exec, reusing the address), binds and listens.
// kUnavailable "cannot listen on SHOWN: why" when it cannot; `shown` is the address as the user
// wrote it.
Status Listen(boost::asio::ip::tcp::acceptor& acceptor,
              const boost::asio::ip::tcp::endpoint& endpoint, std::string_view shown);

// Runs `io` on the calling thread until it stops, as io.run() does; but an exception that a
// handler throws is given to `report` (its what()) and the loop runs on. The handler's
// connection goes with it (nothing holds the session any more); the others carry on.
void RunIo(boost::asio::io_context& io, const std::function<void(std::string_view)>& report);

}  // namespace pagereel::http

#endif  // PAGEREEL_HTTP_SESSION_H_
