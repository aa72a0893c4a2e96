// The proxy against raw HTTP over loopback (no browser): forms, refusals, limits and
// malformed input. Every socket here is on 127.0.0.1.
#include "serve/egress/proxy.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "testing/http_server.h"

namespace pagereel::serve::egress {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using pagereel::testing::HttpServer;

// A blocking client connection to the proxy, with a receive timeout so that no test hangs.
class Client {
 public:
  explicit Client(uint16_t port) : socket_(io_) {
    socket_.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port));
    timeval tv{5, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  void Send(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // Everything until the peer closes (or the timeout).
  std::string ReadAll() {
    std::string out;
    boost::system::error_code ec;
    char buf[4096];
    while (true) {
      size_t n = socket_.read_some(asio::buffer(buf), ec);
      if (ec) break;
      out.append(buf, n);
    }
    peer_closed_ = ec == asio::error::eof || ec == asio::error::connection_reset;
    return out;
  }
  // Whether the last ReadAll ended because the peer closed (not the receive timeout).
  bool peer_closed() const { return peer_closed_; }
  // Reads until `marker` has arrived.
  std::string ReadUntil(std::string_view marker) {
    std::string out;
    boost::system::error_code ec;
    char buf[4096];
    while (out.find(marker) == std::string::npos) {
      size_t n = socket_.read_some(asio::buffer(buf), ec);
      if (ec) break;
      out.append(buf, n);
    }
    return out;
  }
  tcp::socket& socket() { return socket_; }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  bool peer_closed_ = false;
};

struct Recorded {
  std::mutex mu;
  std::vector<Refusal> refusals;
};

std::unique_ptr<Proxy> StartProxy(Policy policy, Recorded* recorded, ProxyOptions options = {}) {
  Result<std::unique_ptr<Proxy>> proxy = Proxy::Start(
      std::move(policy),
      [recorded](const Refusal& r) {
        std::lock_guard lock(recorded->mu);
        recorded->refusals.push_back(r);
      },
      options);
  EXPECT_TRUE(proxy.ok()) << proxy.status().ToString();
  return std::move(proxy).value();
}

HttpServer::Response Ok(const HttpServer::Request&) { return {200, "text/plain", "hello", {}}; }

TEST(ProxyTest, RefusesLoopbackByDefaultAndTheVictimSeesNothing) {
  HttpServer victim(Ok);
  Recorded recorded;
  auto proxy = StartProxy(Policy(), &recorded);
  std::string port = std::to_string(victim.port());
  {
    Client c(proxy->port());
    c.Send("CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n");
    std::string reply = c.ReadAll();
    EXPECT_TRUE(reply.starts_with("HTTP/1.1 403 Forbidden\r\n")) << reply;
    // The details go to the handler, not to the page.
    EXPECT_NE(reply.find("egress policy refused this request"), std::string::npos) << reply;
    EXPECT_EQ(reply.find("127.0.0.1"), std::string::npos) << reply;
  }
  {
    Client c(proxy->port());
    c.Send("GET http://localhost:" + port + "/secret HTTP/1.1\r\nHost: localhost:" + port +
           "\r\n\r\n");
    std::string reply = c.ReadAll();
    EXPECT_TRUE(reply.starts_with("HTTP/1.1 403 Forbidden\r\n")) << reply;
  }
  EXPECT_EQ(victim.connections(), 0);
  std::lock_guard lock(recorded.mu);
  ASSERT_EQ(recorded.refusals.size(), 2u);
  EXPECT_EQ(recorded.refusals[0].host, "127.0.0.1");
  EXPECT_EQ(recorded.refusals[0].port, victim.port());
  EXPECT_EQ(recorded.refusals[0].address, "127.0.0.1");
  EXPECT_EQ(recorded.refusals[0].request, "CONNECT 127.0.0.1:" + port);
  EXPECT_EQ(recorded.refusals[1].host, "localhost");
  EXPECT_EQ(recorded.refusals[1].request, "GET http://localhost:" + port + "/secret");
  EXPECT_EQ(proxy->stats().refused, 2u);
}

// Issue 20: a refused name and a name that does not resolve got different answers, which a
// page can show in a frame: it told which internal names exist.
TEST(ProxyTest, ANameThatDoesNotResolveIsAnsweredAsARefusedOneIs) {
  Recorded recorded;
  auto proxy = StartProxy(Policy(), &recorded);
  auto ask = [&](const std::string& host) {
    Client c(proxy->port());
    c.Send("GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
    return c.ReadAll();
  };
  const std::string refused = ask("localhost:80");
  const std::string unknown = ask("no-such-host.invalid:80");
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 403 Forbidden\r\n")) << refused;
  EXPECT_EQ(unknown, refused);
}

TEST(ProxyTest, ANameMappedToLoopbackIsRefusedOnItsAddress) {
  HttpServer victim(Ok);
  std::string port = std::to_string(victim.port());
  Recorded recorded;
  auto proxy = StartProxy(*Policy::Parse({}, {"evil.test:*:127.0.0.1"}), &recorded);
  Client c(proxy->port());
  c.Send("GET http://evil.test:" + port + "/ HTTP/1.1\r\nHost: evil.test:" + port + "\r\n\r\n");
  std::string reply = c.ReadAll();
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 403")) << reply;
  EXPECT_EQ(victim.connections(), 0);
  std::lock_guard lock(recorded.mu);
  ASSERT_EQ(recorded.refusals.size(), 1u);
  EXPECT_EQ(recorded.refusals[0].host, "evil.test");
  EXPECT_EQ(recorded.refusals[0].address, "127.0.0.1");
  EXPECT_EQ(recorded.refusals[0].reason, "loopback address 127.0.0.1");
}

TEST(ProxyTest, RelaysAllowedPlainHttpOneRequestPerConnection) {
  HttpServer origin(Ok);
  std::string port = std::to_string(origin.port());
  Recorded recorded;
  auto proxy = StartProxy(*Policy::Parse({origin.Origin()}), &recorded);
  Client c(proxy->port());
  c.Send("POST http://127.0.0.1:" + port + "/a?b=c HTTP/1.1\r\nHost: 127.0.0.1:" + port +
         "\r\nProxy-Connection: keep-alive\r\nContent-Length: 4\r\n\r\nbody");
  std::string reply = c.ReadAll();
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200 OK\r\n")) << reply;
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
  EXPECT_TRUE(reply.ends_with("\r\n\r\nhello")) << reply;
  std::vector<HttpServer::Request> seen = origin.ReceivedRequests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/a?b=c");
  EXPECT_EQ(seen[0].host, "127.0.0.1:" + port);
  EXPECT_EQ(seen[0].connection, "close");
  EXPECT_FALSE(seen[0].proxy_headers);
  EXPECT_EQ(seen[0].body, "body");
  EXPECT_EQ(proxy->stats().allowed, 1u);
  EXPECT_TRUE(recorded.refusals.empty());
}

TEST(ProxyTest, TunnelsAllowedConnect) {
  HttpServer origin(Ok);
  std::string port = std::to_string(origin.port());
  Recorded recorded;
  auto proxy = StartProxy(*Policy::Parse({"127.0.0.0/8"}), &recorded);
  Client c(proxy->port());
  c.Send("CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n");
  std::string established = c.ReadUntil("\r\n\r\n");
  EXPECT_EQ(established, "HTTP/1.1 200 Connection established\r\n\r\n");
  // Two requests down one tunnel: the tunnel is opaque, keep-alive is the origin's.
  c.Send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(c.ReadUntil("hello").ends_with("hello"));
  c.Send("GET /two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(c.ReadAll().ends_with("hello"));
  ASSERT_EQ(origin.ReceivedRequests().size(), 2u);
  EXPECT_EQ(origin.ReceivedRequests()[1].target, "/two");
  EXPECT_EQ(origin.connections(), 1);
}

TEST(ProxyTest, MalformedAndUnsupportedRequestsGetAnAnswerNotACrash) {
  Recorded recorded;
  ProxyOptions options;
  options.max_header_bytes = 4096;
  auto proxy = StartProxy(Policy(), &recorded, options);
  struct Case {
    std::string bytes;
    std::string status;
  };
  std::vector<Case> cases = {
      {"garbage\r\n\r\n", "400"},
      {"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "400"},  // Not a proxy request.
      {"CONNECT nohost HTTP/1.1\r\n\r\n", "400"},
      {"CONNECT [::1 HTTP/1.1\r\n\r\n", "400"},
      {"CONNECT a:99999 HTTP/1.1\r\n\r\n", "400"},
      {"CONNECT a:1/x HTTP/1.1\r\n\r\n", "400"},
      {"GET http://x\\y/ HTTP/1.1\r\n\r\n", "400"},
      {"GET https://93.184.215.14/ HTTP/1.1\r\n\r\n", "403"},  // https must use CONNECT.
      {"GET ftp://93.184.215.14/ HTTP/1.1\r\n\r\n", "403"},
      {"GET gopher://127.0.0.1:70/ HTTP/1.1\r\n\r\n", "403"},
      {"GET http://a/ HTTP/1.1\r\nX: " + std::string(8000, 'x') + "\r\n\r\n", "431"},
      {std::string("\0\x01\x02\xff\r\n\r\n", 8), "400"},
  };
  for (const Case& c : cases) {
    Client client(proxy->port());
    client.Send(c.bytes);
    std::string reply = client.ReadAll();
    EXPECT_TRUE(reply.starts_with("HTTP/1.1 " + c.status)) << c.bytes.substr(0, 60) << " -> "
                                                           << reply;
  }
  // Still serving.
  Client client(proxy->port());
  client.Send("CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(client.ReadAll().starts_with("HTTP/1.1 403"));
}

// Mutated request heads and random bytes: each gets an answer or a close, never a crash
// (run under the asan and tsan presets too). The request line is never mutated, so no
// mutation can name a public host or a name to look up: every packet stays on loopback.
TEST(ProxyTest, SurvivesRandomInput) {
  Recorded recorded;
  ProxyOptions options;
  options.header_timeout = std::chrono::milliseconds(300);
  auto proxy = StartProxy(Policy(), &recorded, options);
  std::mt19937 random(7);
  const std::vector<std::string> seeds = {
      "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n",
      "GET http://127.0.0.1:1/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc",
      "POST http://[::1]:80/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
  };
  for (int i = 0; i < 300; ++i) {
    std::string bytes = seeds[static_cast<size_t>(i) % seeds.size()];
    int edits = 1 + static_cast<int>(random() % 8);
    size_t line_end = bytes.find("\r\n") + 2;
    for (int e = 0; e < edits && bytes.size() > line_end; ++e) {
      size_t at = line_end + random() % (bytes.size() - line_end);
      switch (random() % 3) {
        case 0: bytes[at] = static_cast<char>(random() % 256); break;
        case 1: bytes.erase(at, 1 + random() % 4); break;
        default: bytes.insert(at, std::string(1 + random() % 4, static_cast<char>(random() % 256)));
      }
    }
    if (i % 10 == 0) {  // Bytes that are no request line at all (no space can occur).
      bytes.resize(random() % 200);
      for (char& c : bytes) c = static_cast<char>(0x80 + random() % 128);
    }
    Client c(proxy->port());
    boost::system::error_code ec;
    asio::write(c.socket(), asio::buffer(bytes), ec);
    std::string reply = c.ReadAll();
    EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 ")) << reply.substr(0, 80);
  }
  // Still serving, and nothing was let through.
  Client c(proxy->port());
  c.Send("CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(c.ReadAll().starts_with("HTTP/1.1 403"));
  EXPECT_EQ(proxy->stats().allowed, 0u);
}

TEST(ProxyTest, UnreachableAllowedDestinationIs502) {
  uint16_t closed_port;
  {
    HttpServer gone(Ok);
    closed_port = gone.port();
  }
  Recorded recorded;
  auto proxy = StartProxy(*Policy::Parse({"127.0.0.1"}), &recorded);
  Client c(proxy->port());
  c.Send("CONNECT 127.0.0.1:" + std::to_string(closed_port) + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(c.ReadAll().starts_with("HTTP/1.1 502")) ;
  EXPECT_EQ(proxy->stats().failed, 1u);
}

TEST(ProxyTest, SilentClientsAreClosedAfterTheHeaderTimeout) {
  Recorded recorded;
  ProxyOptions options;
  options.header_timeout = std::chrono::milliseconds(200);
  auto proxy = StartProxy(Policy(), &recorded, options);
  Client c(proxy->port());
  c.Send("CONNECT 1.2.3.4:443 HTTP/1.1\r\n");  // Never finished.
  EXPECT_EQ(c.ReadAll(), "");
  EXPECT_TRUE(c.peer_closed()) << "the proxy did not close the connection before the client's 5 s timeout";
  // The proxy forgets the connection just after closing it, on its own thread.
  for (int i = 0; i < 400 && proxy->stats().active != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(proxy->stats().active, 0u);
}

TEST(ProxyTest, ConnectionsBeyondTheBoundAreAnswered503) {
  Recorded recorded;
  ProxyOptions options;
  options.max_connections = 2;
  auto proxy = StartProxy(Policy(), &recorded, options);
  Client a(proxy->port());
  Client b(proxy->port());
  for (int i = 0; i < 100 && proxy->stats().active < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Client c(proxy->port());
  EXPECT_TRUE(c.ReadAll().starts_with("HTTP/1.1 503"));
}

TEST(ProxyTest, StopsWithConnectionsOpen) {
  Recorded recorded;
  auto proxy = StartProxy(Policy(), &recorded);
  Client a(proxy->port());
  a.Send("CONNECT 1.2.3.4");
  proxy.reset();
  EXPECT_EQ(a.ReadAll(), "");
}

TEST(ProxyTest, ChannelsReportTheirOwnRefusals) {
  Recorded all;
  auto proxy = StartProxy(Policy(), &all);
  Recorded mine;
  Result<std::unique_ptr<ProxyChannel>> channel = proxy->OpenChannel([&](const Refusal& r) {
    std::lock_guard lock(mine.mu);
    mine.refusals.push_back(r);
  });
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  EXPECT_NE((*channel)->port(), proxy->port());
  {
    Client c((*channel)->port());
    c.Send("CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(c.ReadAll().starts_with("HTTP/1.1 403"));
  }
  {
    Client c(proxy->port());
    c.Send("CONNECT 10.1.1.1:80 HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(c.ReadAll().starts_with("HTTP/1.1 403"));
  }
  EXPECT_EQ((*channel)->refused(), 1u);
  {
    std::lock_guard lock(mine.mu);
    ASSERT_EQ(mine.refusals.size(), 1u);
    EXPECT_EQ(mine.refusals[0].reason, "cloud metadata address 169.254.169.254");
  }
  {
    std::lock_guard lock(all.mu);
    EXPECT_EQ(all.refusals.size(), 2u);
  }
  uint16_t port = (*channel)->port();
  channel->reset();
  // The channel's port closes (on the I/O thread, soon after).
  bool closed = false;
  for (int i = 0; i < 100 && !closed; ++i) {
    asio::io_context io;
    tcp::socket s(io);
    boost::system::error_code ec;
    s.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port), ec);
    closed = static_cast<bool>(ec);
    if (!closed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(closed);
}

TEST(ProxyTest, BrowserArgsNameTheProxyAndDropTheLoopbackBypass) {
  Recorded recorded;
  auto proxy = StartProxy(Policy(), &recorded);
  std::vector<std::string> args = proxy->BrowserArgs();
  EXPECT_EQ(args[0], "--proxy-server=http://127.0.0.1:" + std::to_string(proxy->port()));
  EXPECT_EQ(args[1], "--proxy-bypass-list=<-loopback>");
}

}  // namespace
}  // namespace pagereel::serve::egress
