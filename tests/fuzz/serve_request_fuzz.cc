// libFuzzer target: bytes as a client would send them to `pagereel serve`, read the way the
// service reads them. The first byte says how many bytes arrive at a time (0: all at once);
// the rest is the connection. http::RequestReader reads requests off it with the service's
// limits; each header is checked for a token (http::IsAuthorized) and named in a 404 as the
// service would; each request is parsed as every capture route (serve/request.h: the query,
// JSON, form and HTML bodies, the url= check through http::ParseUrl). What it checks:
// nothing throws; every error answer is JSON that parses and holds only UTF-8; whatever a
// parsed request sends to the browser can be written as the DevTools protocol's JSON; the
// reader never offers more room than its limit.
//
// tests/fuzz/CMakeLists.txt builds it (clang, PAGEREEL_FUZZ) and runs it on the seeds in
// serve_request/ (the inputs that once ended the service among them).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <boost/beast/http/field.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "base/utf8.h"
#include "http/request_reader.h"
#include "http/token.h"
#include "serve/answer.h"
#include "serve/request.h"

namespace {

using nlohmann::json;
using pagereel::http::RequestReader;
namespace serve = pagereel::serve;

void Require(bool ok) {
  if (!ok) std::abort();
}

// An answer the service would write: JSON with an "error" and a "detail", in UTF-8.
void CheckAnswer(const serve::Answer& answer) {
  Require(pagereel::IsUtf8(answer.body));
  json body = json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  Require(body.is_object() && body.contains("error") && body["detail"].is_string());
}

// What a parsed request would put in the DevTools protocol's messages (Page.navigate,
// Runtime.evaluate with the selector, Page.printToPDF): the JSON must be writable strictly.
void CheckForBrowser(const serve::CaptureRequest& request) {
  json messages = {{"url", request.page.url},
                   {"selector", request.screenshot.selector},
                   {"headerTemplate", request.pdf.header_template},
                   {"footerTemplate", request.pdf.footer_template},
                   {"pageRanges", request.pdf.page_ranges}};
  (void)messages.dump();
  Require(pagereel::IsUtf8(request.what));
}

void ParseAsEveryRoute(const pagereel::http::Request& request) {
  static const serve::Limits limits;
  const std::string_view target = request.target();
  const std::string_view content_type = request[boost::beast::http::field::content_type];
  for (serve::Route route : {serve::Route::kScreenshot, serve::Route::kPdf, serve::Route::kGif,
                             serve::Route::kClip}) {
    pagereel::Result<serve::CaptureRequest> parsed =
        serve::ParseCaptureRequest(route, target, content_type, request.body(), limits);
    if (parsed.ok()) {
      CheckForBrowser(*parsed);
    } else {
      CheckAnswer(serve::ErrorAnswer(400, parsed.status().message()));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0] == 0 ? size : data[0];
  std::string_view connection(reinterpret_cast<const char*>(data) + 1, size - 1);
  const serve::Limits limits;
  RequestReader reader(limits.max_body_bytes, "the body is too large");
  reader.Start();
  for (int requests = 0; requests < 16;) {
    switch (reader.Next()) {
      case RequestReader::Step::kNeedMore: {
        if (connection.empty()) {
          reader.Ended();
          break;
        }
        boost::asio::mutable_buffer room = reader.Room();
        Require(room.size() > 0 && room.size() <= pagereel::http::kMaxHeaderBytes);
        const size_t n = std::min({room.size(), piece, connection.size()});
        std::memcpy(room.data(), connection.data(), n);
        reader.Received(n);
        connection.remove_prefix(n);
        break;
      }
      case RequestReader::Step::kHeader: {
        const pagereel::http::Request& header = reader.header();
        (void)pagereel::http::IsAuthorized(header[boost::beast::http::field::authorization],
                                           "s3cret");
        std::string_view target = header.target();
        CheckAnswer(serve::NoRouteAnswer(target.substr(0, target.find('?'))));
        break;
      }
      case RequestReader::Step::kRequest:
        ParseAsEveryRoute(reader.TakeRequest());
        reader.Start();
        ++requests;
        break;
      case RequestReader::Step::kRefused:
        if (reader.refusal().status != 0) {
          CheckAnswer(serve::ErrorAnswer(reader.refusal().status, reader.refusal().detail));
        }
        return 0;
    }
  }
  return 0;
}
