#include "http/request_reader.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <exception>
#include <string_view>
#include <utility>

namespace pagereel::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

RequestReader::RequestReader(size_t max_body_bytes, std::string body_too_large)
    : max_body_bytes_(max_body_bytes), body_too_large_(std::move(body_too_large)) {}

void RequestReader::Start() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(kMaxHeaderBytes));
  parser_->body_limit(max_body_bytes_);
  header_told_ = false;
}

boost::asio::mutable_buffer RequestReader::Room() {
  return buffer_.prepare(buffer_.max_size() - buffer_.size());
}

void RequestReader::Received(size_t n) { buffer_.commit(n); }

void RequestReader::Ended() { ended_ = true; }

RequestReader::Step RequestReader::Next() {
  if (refused_) return Step::kRefused;
  int stalls = 0;
  for (;;) {
    if (parser_->is_header_done() && !header_told_) {
      header_told_ = true;
      if (std::optional<std::string> bad = FramingRefusal()) return Refuse(400, std::move(*bad));
      parser_->eager(true);  // Past the header, read as much of the body as has come.
      return Step::kHeader;
    }
    if (parser_->is_done()) return Step::kRequest;
    beast::error_code ec = bhttp::error::need_more;
    size_t used = 0;
    if (!parser_->is_header_done() && HasFoldedLine()) {
      return Refuse(400,
                    "the request's headers continue a field on a line of its own "
                    "(obs-fold, RFC 9112 section 5.2): send each field on one line");
    }
    if (buffer_.size() > 0) {
      try {
        used = parser_->put(buffer_.data(), ec);
      } catch (const std::exception& e) {
        return Refuse(400, std::string("the request could not be read: ") + e.what());
      } catch (...) {
        return Refuse(400, "the request could not be read");
      }
      buffer_.consume(used);
    }
    if (ec == bhttp::error::need_more) {
      if (ended_) {
        if (!parser_->got_some()) return Refuse(0, "");  // Nothing of a next request came.
        ec = {};
        parser_->put_eof(ec);
        if (!ec && !parser_->is_done()) ec = bhttp::error::partial_message;
      } else if (buffer_.size() >= buffer_.max_size()) {
        return Overflowed();
      } else {
        return Step::kNeedMore;
      }
    }
    if (ec == bhttp::error::header_limit) {
      return Refuse(431, "the request's headers are larger than 16 KiB");
    }
    if (ec == bhttp::error::body_limit) return Refuse(413, body_too_large_);
    if (ec) return Refuse(400, "the request is not valid HTTP/1.1: " + ec.message());
    // Beast's parser moves on with every call that returns no error; should it ever not,
    // the request is refused rather than parsed forever.
    stalls = used == 0 ? stalls + 1 : 0;
    if (stalls > 4) return Refuse(400, "the request could not be read");
  }
}

bool RequestReader::HasFoldedLine() const {
  // Beast reads a field continued on the next line (obs-fold) as one value, joined; RFC 9112
  // lets a server refuse it, and two readers of the same bytes (a proxy in front, say) may
  // join it differently. The whole header is in the buffer before Beast reads any of it.
  const std::string_view held(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  const std::string_view head = held.substr(0, held.find("\r\n\r\n"));
  return head.find("\r\n ") != std::string_view::npos ||
         head.find("\r\n\t") != std::string_view::npos;
}

std::optional<std::string> RequestReader::FramingRefusal() const {
  const Request& header = parser_->get();
  // RFC 9112, section 6.3: a request whose Transfer-Encoding does not end in chunked has a
  // body of unknown length, which a server must refuse (400) and close. Beast reads such a
  // request as one without a body, and its body's bytes as the next request (smuggling).
  if (header.count(bhttp::field::transfer_encoding) > 0 && !parser_->chunked()) {
    return "the request's Transfer-Encoding does not end in chunked, so its body has no "
           "known length; send chunked last, or a Content-Length";
  }
  // RFC 9112, section 3.2: an HTTP/1.1 request without a Host header, or with more than
  // one, is answered 400.
  if (header.version() == 11 && header.count(bhttp::field::host) != 1) {
    return header.count(bhttp::field::host) == 0 ? "an HTTP/1.1 request needs a Host header"
                                                 : "the request has more than one Host header";
  }
  return std::nullopt;
}

RequestReader::Step RequestReader::Overflowed() {
  if (!parser_->is_header_done()) {
    return Refuse(431, "the request's headers are larger than 16 KiB");
  }
  // Only a chunked body's framing stays in the buffer (body bytes are taken as they come):
  // one chunk's size line, or the last chunk ("0", maybe extensions) with the trailer.
  std::string_view held(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  if (held.starts_with("\r\n")) held.remove_prefix(2);  // The end of the chunk before.
  const size_t eol = held.find("\r\n");
  const std::string_view size = held.substr(0, std::min(eol, held.find_first_of("; \t")));
  if (eol != std::string_view::npos && !size.empty() &&
      size.find_first_not_of('0') == std::string_view::npos) {
    return Refuse(431, "the trailer of the request's chunked body is larger than 16 KiB");
  }
  return Refuse(413, "a chunk's size line in the request's chunked body (the size and its "
                     "extensions) is longer than 16 KiB");
}

RequestReader::Step RequestReader::Refuse(int status, std::string detail) {
  refused_ = true;
  refusal_ = {status, std::move(detail)};
  return Step::kRefused;
}

}  // namespace pagereel::http
