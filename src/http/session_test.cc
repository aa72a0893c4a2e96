#include "http/session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace pagereel::http {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Answers every request with its method, target and body, as text. A target under /private
// is refused from its header (401); /throw throws from the handler.
class EchoSession : public Session {
 public:
  using Session::Session;

 private:
  std::optional<Response> CheckHeader(const Request& header) override {
    if (!header.target().starts_with("/private")) return std::nullopt;
    Response r{boost::beast::http::status::unauthorized, 11};
    r.body() = "refused from the header";
    return r;
  }
  void HandleRequest() override {
    if (request().target() == "/throw") throw std::length_error("a library gave up");
    Response r{boost::beast::http::status::ok, 11};
    r.set(boost::beast::http::field::content_type, "text/plain");
    r.body() = std::string(request().method_string()) + " " + std::string(request().target()) +
               " " + request().body();
    Write(std::move(r));
  }
  Response ReadError(int status, const std::string& detail) override {
    Response r{static_cast<boost::beast::http::status>(status), 11};
    r.body() = "refused: " + detail;
    return r;
  }
};

// EchoSessions on an ephemeral port of 127.0.0.1, on one I/O thread.
class Server {
 public:
  explicit Server(SessionOptions options) : options_(std::move(options)) {
    std::optional<tcp::endpoint> endpoint =
        ParseListenAddress("127.0.0.1:0", HostNames::kNumericOnly);
    Status listening = Listen(acceptor_, *endpoint, "127.0.0.1:0");
    EXPECT_TRUE(listening.ok()) << listening.ToString();
    Accept();
    thread_ = std::thread([this] { RunIo(io_, [](std::string_view) {}); });
  }
  ~Server() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Accept() {
    acceptor_.async_accept([this](boost::beast::error_code ec, tcp::socket socket) {
      if (ec) return;
      std::make_shared<EchoSession>(std::move(socket), options_)->Read();
      Accept();
    });
  }

  const SessionOptions options_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
};

// What a client does once it has sent its request.
enum class AfterSending {
  kWait,      // Waits for the answer with its side of the connection open.
  kShutDown,  // Closes its side: it sends nothing more.
};

// Sends `request` on a new connection and returns everything read until the server closes.
std::string Exchange(uint16_t port, const std::string& request,
                     AfterSending after = AfterSending::kWait) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  std::thread writer([&] {
    boost::system::error_code ignored;
    asio::write(socket, asio::buffer(request), ignored);
    if (after == AfterSending::kShutDown) socket.shutdown(tcp::socket::shutdown_send, ignored);
  });
  std::string reply;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(reply), ec);
  writer.join();
  return reply;
}

// As serve sets it: a refused client still sending can read why.
SessionOptions Lingering() {
  SessionOptions options;
  options.close = CloseMode::kLinger;
  return options;
}

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(SessionTest, RequestsOnOneConnectionAreAnsweredInTurnWithTheServersHeaders) {
  SessionOptions options;
  options.no_store = true;
  Server server(options);
  std::string reply = Exchange(server.port(),
                               "GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
                               "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                               "Connection: close\r\n\r\nabc");
  EXPECT_EQ(Count(reply, "HTTP/1.1 200 OK\r\n"), 2) << reply;
  EXPECT_EQ(Count(reply, "Server: pagereel\r\n"), 2) << reply;
  EXPECT_EQ(Count(reply, "Cache-Control: no-store\r\n"), 2) << reply;
  EXPECT_LT(reply.find("GET /one "), reply.find("POST /two abc")) << reply;
  EXPECT_EQ(Count(reply, "Connection: close\r\n"), 1) << reply;
}

TEST(SessionTest, WithoutNoStoreAnswersMayBeCached) {
  Server server(SessionOptions{});
  std::string reply =
      Exchange(server.port(), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(reply.find("HTTP/1.1 200 OK"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("Cache-Control"), std::string::npos) << reply;
}

TEST(SessionTest, ABodyOverTheLimitIsAnswered413InTheServersWordsAndTheClientReadsIt) {
  SessionOptions options;
  options.max_body_bytes = 10;
  options.body_too_large = "the body is larger than 10 bytes";
  options.close = CloseMode::kLinger;
  Server server(options);
  // A client still sending 4 MiB when it is refused: a lingering close lets it read why.
  const std::string body(4 << 20, 'a');
  std::string reply = Exchange(server.port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                                  std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(reply.find("HTTP/1.1 413 Payload Too Large\r\n"), 0u) << reply.substr(0, 200);
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(reply.find("refused: the body is larger than 10 bytes"), std::string::npos);
}

TEST(SessionTest, HeadersOverSixteenKiBAreAnswered431) {
  Server server(SessionOptions{});
  std::string reply =
      Exchange(server.port(),
               "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(17 * 1024, 'h') + "\r\n\r\n");
  EXPECT_EQ(reply.find("HTTP/1.1 431 "), 0u) << reply.substr(0, 200);
  EXPECT_NE(reply.find("refused: the request's headers are larger than 16 KiB"), std::string::npos);
}

TEST(SessionTest, WhatIsNotHttpIsAnswered400OnceNamingTheProblem) {
  Server server(SessionOptions{});
  std::string reply =
      Exchange(server.port(), "HELLO THERE\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(reply.find("HTTP/1.1 400 Bad Request\r\n"), 0u) << reply;
  EXPECT_NE(reply.find("refused: the request is not valid HTTP/1.1: "), std::string::npos);
  EXPECT_EQ(Count(reply, "HTTP/1.1 "), 1) << reply;
}

TEST(SessionTest, WhileTheServerStopsAnswersCloseTheConnection) {
  std::atomic<bool> stopping{true};
  SessionOptions options;
  options.stopping = &stopping;
  Server server(options);
  std::string reply = Exchange(
      server.port(), "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Count(reply, "HTTP/1.1 200 OK\r\n"), 1) << reply;
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
}

// Issue 20: Beast threw std::length_error for a trailer field of 64 KiB, which nothing caught.
TEST(SessionTest, ATrailerOver16KiBIsAnswered431AndTheServerAnswersOn) {
  Server server(Lingering());
  const std::string request =
      "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: " +
      std::string(65536, 'a') + "\r\n\r\n";
  std::string reply = Exchange(server.port(), request, AfterSending::kShutDown);
  EXPECT_EQ(reply.find("HTTP/1.1 431 "), 0u) << reply.substr(0, 200);
  EXPECT_NE(reply.find("refused: the trailer of the request's chunked body is larger than 16 KiB"),
            std::string::npos)
      << reply;
  EXPECT_NE(Exchange(server.port(), "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .find("HTTP/1.1 200 OK"),
            std::string::npos);
}

TEST(SessionTest, AChunkedBodyWithATrailerUnderTheLimitIsRead) {
  Server server(SessionOptions{});
  std::string reply = Exchange(server.port(),
                               "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                               "Connection: close\r\n\r\n3;name=value\r\nabc\r\n2\r\nde\r\n"
                               "0\r\nX-Sum: " +
                                   std::string(8000, 's') + "\r\n\r\n");
  EXPECT_EQ(reply.find("HTTP/1.1 200 OK"), 0u) << reply.substr(0, 200);
  EXPECT_NE(reply.find("POST /t abcde"), std::string::npos) << reply.substr(0, 400);
}

// Issue 20: a chunk's extensions were buffered without limit (256 MiB took 260 MB).
TEST(SessionTest, AChunkExtensionOver16KiBIsAnswered413) {
  Server server(Lingering());
  std::string reply =
      Exchange(server.port(),
               "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;e=" +
                   std::string(1 << 20, 'e') + "\r\nx\r\n0\r\n\r\n",
               AfterSending::kShutDown);
  EXPECT_EQ(reply.find("HTTP/1.1 413 "), 0u) << reply.substr(0, 200);
  EXPECT_NE(reply.find("refused: a chunk's size line in the request's chunked body (the size and "
                       "its extensions) is longer than 16 KiB"),
            std::string::npos)
      << reply;
}

// Issue 20: a Transfer-Encoding that did not end in chunked was read as no body, and its
// body's bytes as the next request (RFC 9112, section 6.3: 400, and close).
TEST(SessionTest, ATransferEncodingThatDoesNotEndInChunkedIsAnswered400AndClosed) {
  Server server(Lingering());
  for (const char* coding : {"gzip", "chunked, gzip", "identity"}) {
    std::string reply = Exchange(server.port(),
                                 std::string("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ") +
                                     coding + "\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
                                 AfterSending::kShutDown);
    EXPECT_EQ(reply.find("HTTP/1.1 400 "), 0u) << coding << "\n" << reply;
    EXPECT_NE(reply.find("refused: the request's Transfer-Encoding does not end in chunked"),
              std::string::npos)
        << reply;
    EXPECT_EQ(reply.find("/smuggled"), std::string::npos) << coding << "\n" << reply;
    EXPECT_EQ(Count(reply, "HTTP/1.1 "), 1) << coding << "\n" << reply;
  }
}

// Issue 20: HTTP/1.1 without Host was answered (RFC 9112, section 3.2: 400).
TEST(SessionTest, AnHttp11RequestWithoutOneHostIsAnswered400) {
  Server server(SessionOptions{});
  std::string reply = Exchange(server.port(), "GET /a HTTP/1.1\r\n\r\n");
  EXPECT_EQ(reply.find("HTTP/1.1 400 "), 0u) << reply;
  EXPECT_NE(reply.find("refused: an HTTP/1.1 request needs a Host header"), std::string::npos)
      << reply;
  reply = Exchange(server.port(), "GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n");
  EXPECT_EQ(reply.find("HTTP/1.1 400 "), 0u) << reply;
  // HTTP/1.0 has no Host to require.
  reply = Exchange(server.port(), "GET /old HTTP/1.0\r\n\r\n");
  EXPECT_NE(reply.find(" 200 OK\r\n"), std::string::npos) << reply;
}

// Issue 20: a field continued on a second line (obs-fold) was accepted, joined as Beast
// joins it (RFC 9112, section 5.2, lets a server refuse it with 400).
TEST(SessionTest, AFieldFoldedOntoASecondLineIsAnswered400) {
  Server server(SessionOptions{});
  for (const char* fold : {" ", "\t"}) {
    std::string reply =
        Exchange(server.port(), std::string("GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n") + fold +
                                    "2\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(reply.find("HTTP/1.1 400 "), 0u) << reply;
    EXPECT_NE(reply.find("refused: the request's headers continue a field on a line of its own"),
              std::string::npos)
        << reply;
  }
}

// Issue 20: "Expect: 100-continue" was never answered, so a client waited (curl: 1 s) before
// it sent its body anyway.
TEST(SessionTest, AClientThatExpectsContinueIsToldToSendItsBody) {
  Server server(SessionOptions{});
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()));
  asio::write(socket,
              asio::buffer(std::string("POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                                       "Expect: 100-continue\r\nConnection: close\r\n\r\n")));
  // Nothing of the body is sent until the server says so.
  std::string interim(25, '\0');
  asio::read(socket, asio::buffer(interim));
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  asio::write(socket, asio::buffer(std::string("hello")));
  std::string reply;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(reply), ec);
  EXPECT_EQ(reply.find("HTTP/1.1 200 OK"), 0u) << reply;
  EXPECT_NE(reply.find("POST /c hello"), std::string::npos) << reply;
  // A request refused from its header gets its refusal, not a 100.
  reply = Exchange(
      server.port(),
      "POST /private HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
      AfterSending::kShutDown);
  EXPECT_EQ(reply.find("HTTP/1.1 401 "), 0u) << reply;
}

TEST(SessionTest, ARequestRefusedFromItsHeaderIsAnsweredWithoutWaitingForItsBody) {
  Server server(SessionOptions{});
  // The body announced never comes; the answer must not wait for it.
  std::string reply = Exchange(
      server.port(), "POST /private HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
      AfterSending::kShutDown);
  EXPECT_EQ(reply.find("HTTP/1.1 401 Unauthorized\r\n"), 0u) << reply;
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("refused from the header"), std::string::npos) << reply;
  // Without a body, the connection goes on to the next request.
  reply = Exchange(server.port(),
                   "GET /private HTTP/1.1\r\nHost: x\r\n\r\nGET /open HTTP/1.1\r\nHost: "
                   "x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(Count(reply, "HTTP/1.1 401 "), 1) << reply;
  EXPECT_NE(reply.find("GET /open "), std::string::npos) << reply;
}

TEST(SessionTest, AHandlerThatThrowsIsAnswered500AndOnlyItsConnectionCloses) {
  Server server(Lingering());
  std::string reply =
      Exchange(server.port(),
               "GET /throw HTTP/1.1\r\nHost: x\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(reply.find("HTTP/1.1 500 Internal Server Error\r\n"), 0u) << reply;
  EXPECT_NE(reply.find("refused: the server failed on this request: a library gave up"),
            std::string::npos)
      << reply;
  EXPECT_EQ(Count(reply, "HTTP/1.1 "), 1) << reply;
  EXPECT_NE(Exchange(server.port(), "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .find("HTTP/1.1 200 OK"),
            std::string::npos);
}

TEST(RunIoTest, AHandlerThatThrowsIsReportedAndTheOthersStillRun) {
  asio::io_context io;
  std::vector<std::string> reports;
  bool later_ran = false;
  asio::post(io, [] { throw std::runtime_error("handler failed"); });
  asio::post(io, [&] { later_ran = true; });
  RunIo(io, [&](std::string_view what) { reports.emplace_back(what); });
  EXPECT_EQ(reports, std::vector<std::string>{"handler failed"});
  EXPECT_TRUE(later_ran);
}

TEST(ListenAddressTest, IsANumericHostAndAPort) {
  struct Good {
    const char* text;
    const char* address;
    uint16_t port;
  };
  for (const Good& g : {Good{"127.0.0.1:8080", "127.0.0.1", 8080}, Good{"[::1]:0", "::1", 0},
                        Good{"::1:80", "::1", 80}, Good{"0.0.0.0:65535", "0.0.0.0", 65535},
                        Good{"127.0.0.1:00080", "127.0.0.1", 80}}) {
    std::optional<tcp::endpoint> e = ParseListenAddress(g.text, HostNames::kNumericOnly);
    ASSERT_TRUE(e.has_value()) << g.text;
    EXPECT_EQ(e->address().to_string(), g.address) << g.text;
    EXPECT_EQ(e->port(), g.port) << g.text;
  }
  for (const char* bad :
       {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:99999999999", "127.0.0.1:8a",
        "127.0.0.1:+80", "127.0.0.1:-1", "example.com:80", "localhost:80", ":80", "[::1:80"}) {
    EXPECT_EQ(ParseListenAddress(bad, HostNames::kNumericOnly), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseListenAddress("LocalHost:90", HostNames::kLocalhost)->address().to_string(),
            "127.0.0.1");
}

TEST(ListenAddressTest, ATakenPortIsRefusedNamingTheAddress) {
  asio::io_context io;
  tcp::acceptor first(io);
  tcp::endpoint any(asio::ip::make_address("127.0.0.1"), 0);
  ASSERT_TRUE(Listen(first, any, "127.0.0.1:0").ok());
  const std::string taken = "127.0.0.1:" + std::to_string(first.local_endpoint().port());
  tcp::acceptor second(io);
  Status status = Listen(second, first.local_endpoint(), taken);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(status.message().starts_with("cannot listen on " + taken + ": ")) << status.message();
}

}  // namespace
}  // namespace pagereel::http
