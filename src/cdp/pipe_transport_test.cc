#include "cdp/pipe_transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace pagereel::cdp {
namespace {

// Real pipes: the test writes what a browser would write on its fd 4.
struct Pipes {
  Pipes() {
    int a[2];
    int b[2];
    EXPECT_EQ(::pipe2(a, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(b, O_CLOEXEC), 0);
    browser_reads.reset(a[0]);
    browser_writes.reset(b[1]);
    transport = std::make_unique<PipeTransport>(UniqueFd(a[1]), UniqueFd(b[0]));
  }
  void Write(std::string_view bytes) {
    ASSERT_EQ(::write(browser_writes.get(), bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  UniqueFd browser_reads;
  UniqueFd browser_writes;
  std::unique_ptr<PipeTransport> transport;
};

TEST(PipeTransportTest, SplitsNulFramedMessages) {
  Pipes p;
  p.Write(std::string("{\"a\":1}\0{\"b\":", 13));
  Result<std::string> first = p.transport->Receive();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "{\"a\":1}");
  EXPECT_GE(first->capacity(), first->size() + kJsonPadding);
  p.Write(std::string("2}\0", 3));
  EXPECT_EQ(*p.transport->Receive(), "{\"b\":2}");
}

TEST(PipeTransportTest, LargeMessageArrivesWhole) {
  Pipes p;
  std::string big = "{\"data\":\"" + std::string(5 << 20, 'x') + "\"}";
  std::thread writer([&] {
    p.Write(big);
    p.Write(std::string_view("\0", 1));
  });
  Result<std::string> got = p.transport->Receive();
  writer.join();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), big.size());
  EXPECT_EQ(*got, big);
}

TEST(PipeTransportTest, SendAppendsTerminator) {
  Pipes p;
  ASSERT_TRUE(p.transport->Send("{\"id\":1}").ok());
  char buf[16];
  ssize_t n = ::read(p.browser_reads.get(), buf, sizeof buf);
  ASSERT_EQ(n, 9);
  EXPECT_EQ(std::string(buf, 9), std::string("{\"id\":1}\0", 9));
}

TEST(PipeTransportTest, EndOfFileIsUnavailable) {
  Pipes p;
  p.browser_writes.reset();
  EXPECT_EQ(p.transport->Receive().status().code(), StatusCode::kUnavailable);
}

TEST(PipeTransportTest, CloseUnblocksReceive) {
  Pipes p;
  auto receive = std::async(std::launch::async, [&] { return p.transport->Receive(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.transport->Close();
  EXPECT_EQ(receive.get().status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(p.transport->Send("{}").ok());
}

}  // namespace
}  // namespace pagereel::cdp
