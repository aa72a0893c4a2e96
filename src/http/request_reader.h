// RequestReader: HTTP/1.1 requests read from the bytes of one connection, one after another,
// without the connection: http::Session reads its socket into it, the fuzz target
// (fuzz/serve_request_fuzz.cc) feeds it bytes. It is Boost.Beast's parser with pagereel's
// limits: the body limit the server sets, and 16 KiB for the headers, for each chunk's size
// line (with its extensions) and for the last chunk with the trailer. The bytes it holds
// between reads are bounded by that 16 KiB (Beast's own parser buffers a chunk's size line and
// the trailer without limit, and throws std::length_error for a field of 64 KiB). It also
// refuses (400) what RFC 9112 says a server must, or may, and Beast leaves to its users: a
// Transfer-Encoding that does not end in chunked, an HTTP/1.1 request without one Host, a
// field folded onto a second line (obs-fold). Nothing a
// client sends makes it throw: what Beast throws becomes a refusal like any other.
//
// Not thread-safe: one connection's reads, in turn.
#ifndef PAGEREEL_HTTP_REQUEST_READER_H_
#define PAGEREEL_HTTP_REQUEST_READER_H_

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <optional>
#include <string>

namespace pagereel::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;

// The most bytes of a request's headers, of one chunk's size line with its extensions, and
// of the last chunk with the trailer fields.
inline constexpr size_t kMaxHeaderBytes = 16 * 1024;

// Why a request could not be read, for the client.
struct ReadRefusal {
  // 400 (not HTTP/1.1), 413 (a body over the limit, or a chunk's extensions too long), 431
  // (headers or trailer too large); 0 when the client left between requests, with nothing
  // to answer.
  int status = 0;
  std::string detail;
};

class RequestReader {
 public:
  enum class Step {
    kNeedMore,  // Put the client's next bytes in Room(), then Received(); or call Ended().
    kHeader,    // header() is read, its body not yet; Next() reads on.
    kRequest,   // TakeRequest() gives the whole request.
    kRefused,   // refusal() says why; nothing more is read on this connection.
  };

  // `body_too_large`: the detail of the 413 for a body over `max_body_bytes`, in the server's
  // words.
  RequestReader(size_t max_body_bytes, std::string body_too_large);

  // Begins the next request. Bytes of it received with the one before are kept.
  void Start();

  // Where the client's next bytes go: never empty when Next() said kNeedMore.
  boost::asio::mutable_buffer Room();
  // `n` bytes were put in Room().
  void Received(size_t n);
  // The client sends nothing more (its side of the connection is closed).
  void Ended();

  // Reads what has been received, and says what to do next. kHeader comes once per request,
  // before any of its body is read (also when it has none).
  Step Next();

  // REQUIRES: Next() said kHeader (valid until it is called again).
  const Request& header() const { return parser_->get(); }
  // Whether the request's body (if it has one) has been read whole, so a connection may go
  // on to the next request after answering this one without reading on.
  bool done() const { return parser_ && parser_->is_done(); }
  // REQUIRES: Next() said kRequest.
  Request TakeRequest() { return parser_->release(); }
  // REQUIRES: Next() said kRefused.
  const ReadRefusal& refusal() const { return refusal_; }

 private:
  Step Refuse(int status, std::string detail);
  // Why a header that Beast read must still be refused (400): a Transfer-Encoding that does
  // not end in chunked, an HTTP/1.1 request without exactly one Host. nullopt when neither.
  std::optional<std::string> FramingRefusal() const;
  // Whether the header received so far continues a field on a line of its own (obs-fold).
  bool HasFoldedLine() const;
  // When the buffer is full and the parser wants more: which limit was passed.
  Step Overflowed();

  const size_t max_body_bytes_;
  const std::string body_too_large_;
  boost::beast::flat_buffer buffer_{kMaxHeaderBytes};
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  bool header_told_ = false;
  bool ended_ = false;
  bool refused_ = false;
  ReadRefusal refusal_;
};

}  // namespace pagereel::http

#endif  // PAGEREEL_HTTP_REQUEST_READER_H_
