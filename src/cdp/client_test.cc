#include "cdp/client.h"

#include <atomic>
#include <future>
#include <thread>
#include <memory>

#include <gtest/gtest.h>

#include "cdp/json_util.h"
#include "testing/fake_transport.h"

namespace pagereel::cdp {
namespace {

using std::chrono::milliseconds;

class ClientTest : public ::testing::Test {
 protected:
  ClientTest() {
    auto transport = std::make_unique<testing::FakeTransport>();
    fake_ = transport.get();
    client_ = std::make_unique<Client>(std::move(transport));
  }

  testing::FakeTransport* fake_;
  std::unique_ptr<Client> client_;
};

TEST_F(ClientTest, SendsFramedCommandsWithSessions) {
  auto call = std::async(std::launch::async, [&] {
    return client_->Call("Page.navigate", R"({"url":"about:blank"})", "S1");
  });
  auto sent = fake_->NextSent();
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(*sent,
            R"({"id":1,"method":"Page.navigate","params":{"url":"about:blank"},"sessionId":"S1"})");
  fake_->Deliver(R"({"id":1,"result":{"frameId":"F"},"sessionId":"S1"})");
  Result<Message> reply = call.get();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(*GetString(*reply, {"result", "frameId"}), "F");
}

TEST_F(ClientTest, RepliesFindTheirCallersOutOfOrder) {
  auto first = std::async(std::launch::async, [&] { return client_->Call("A.one"); });
  ASSERT_TRUE(fake_->NextSent());
  auto second = std::async(std::launch::async, [&] { return client_->Call("A.two"); });
  ASSERT_TRUE(fake_->NextSent());
  fake_->Deliver(R"({"id":2,"result":{"v":2}})");
  fake_->Deliver(R"({"id":1,"result":{"v":1}})");
  EXPECT_EQ(*GetNumber(*first.get(), {"result", "v"}), 1);
  EXPECT_EQ(*GetNumber(*second.get(), {"result", "v"}), 2);
}

TEST_F(ClientTest, CallAllSendsEveryCommandBeforeTheFirstReply) {
  auto calls = std::async(std::launch::async, [&] {
    return client_->CallAll({{"Page.enable"}, {"Runtime.addBinding", R"({"name":"b"})"},
                             {"Page.getFrameTree"}},
                            "S1");
  });
  // All three are on their way before the browser answers any: one round trip.
  auto first = fake_->NextSent();
  auto second = fake_->NextSent();
  auto third = fake_->NextSent();
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(*first, R"({"id":1,"method":"Page.enable","params":{},"sessionId":"S1"})");
  EXPECT_EQ(*second,
            R"({"id":2,"method":"Runtime.addBinding","params":{"name":"b"},"sessionId":"S1"})");
  fake_->Deliver(R"({"id":1,"result":{},"sessionId":"S1"})");
  fake_->Deliver(R"({"id":2,"error":{"code":-32000,"message":"No"},"sessionId":"S1"})");
  fake_->Deliver(R"({"id":3,"result":{"v":3},"sessionId":"S1"})");
  std::vector<Result<Message>> replies = calls.get();
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_TRUE(replies[0].ok());
  ASSERT_FALSE(replies[1].ok());
  EXPECT_EQ(replies[1].status().message(), "DevTools call Runtime.addBinding failed: No");
  ASSERT_TRUE(replies[2].ok());
  EXPECT_EQ(*GetNumber(*replies[2], {"result", "v"}), 3);
}

TEST_F(ClientTest, CallAllGivesUpOnWhatDidNotComeInTime) {
  auto calls = std::async(std::launch::async, [&] {
    return client_->CallAll({{"A.one"}, {"A.two"}}, "", milliseconds(2000));
  });
  ASSERT_TRUE(fake_->NextSent());
  ASSERT_TRUE(fake_->NextSent());
  fake_->Deliver(R"({"id":1,"result":{}})");
  std::vector<Result<Message>> replies = calls.get();
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_TRUE(replies[0].ok());
  EXPECT_EQ(replies[1].status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(replies[1].status().message().find("A.two"), std::string_view::npos);
  // Its reply, when it comes, finds nobody and is dropped.
  fake_->Deliver(R"({"id":2,"result":{}})");
}

TEST_F(ClientTest, ProtocolErrorNamesTheMethod) {
  auto call = std::async(std::launch::async, [&] { return client_->Call("Target.createTarget"); });
  ASSERT_TRUE(fake_->NextSent());
  fake_->Deliver(R"({"id":1,"error":{"code":-32000,"message":"Not allowed"}})");
  Result<Message> reply = call.get();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().message(), "DevTools call Target.createTarget failed: Not allowed");
}

TEST_F(ClientTest, EventsReachTheirSessionOnly) {
  EventWaiter other = client_->Expect("Page.loadEventFired", "S2");
  EventWaiter mine = client_->Expect("Page.loadEventFired", "S1");
  fake_->Deliver(R"({"method":"Page.loadEventFired","params":{"timestamp":5},"sessionId":"S1"})");
  Result<Event> event = mine.Wait(milliseconds(5000));
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->session_id, "S1");
  EXPECT_EQ(*GetNumber(*event->message, {"params", "timestamp"}), 5);
  EXPECT_EQ(other.Wait(milliseconds(50)).status().code(), StatusCode::kDeadlineExceeded);
}

TEST_F(ClientTest, SubscriptionSeesEveryEventUntilRemoved) {
  std::atomic<int> seen{0};
  uint64_t id = client_->Subscribe("Log.entryAdded", "", [&](const Event&) { ++seen; });
  EventWaiter marker = client_->Expect("Marker", "");
  fake_->Deliver(R"({"method":"Log.entryAdded","params":{}})");
  fake_->Deliver(R"({"method":"Log.entryAdded","params":{}})");
  fake_->Deliver(R"({"method":"Marker","params":{}})");
  ASSERT_TRUE(marker.Wait(milliseconds(5000)).ok());
  EXPECT_EQ(seen.load(), 2);
  client_->Unsubscribe(id);
  EventWaiter marker2 = client_->Expect("Marker", "");
  fake_->Deliver(R"({"method":"Log.entryAdded","params":{}})");
  fake_->Deliver(R"({"method":"Marker","params":{}})");
  ASSERT_TRUE(marker2.Wait(milliseconds(5000)).ok());
  EXPECT_EQ(seen.load(), 2);
}

TEST_F(ClientTest, UnsubscribeWaitsForTheRunningHandler) {
  // The handler blocks until released; Unsubscribe from another thread must not return
  // while it runs (the handler's state could be destroyed under it).
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> handler_running{false};
  uint64_t id = client_->Subscribe("Slow.event", "", [&](const Event&) {
    handler_running = true;
    entered.set_value();
    released.wait();
    handler_running = false;
  });
  fake_->Deliver(R"({"method":"Slow.event","params":{}})");
  entered.get_future().wait();
  std::atomic<bool> unsubscribed{false};
  std::thread unsubscriber([&] {
    client_->Unsubscribe(id);
    EXPECT_FALSE(handler_running.load());
    unsubscribed = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(unsubscribed.load());
  release.set_value();
  unsubscriber.join();
  EXPECT_TRUE(unsubscribed.load());
}

TEST_F(ClientTest, HandlerMayUnsubscribeItselfAndOthers) {
  std::atomic<int> first_calls{0};
  std::atomic<int> second_calls{0};
  uint64_t second = 0;
  uint64_t first = 0;
  first = client_->Subscribe("E", "", [&](const Event&) {
    ++first_calls;
    client_->Unsubscribe(first);   // Itself: must not wait for itself.
    client_->Unsubscribe(second);  // A later handler of the same event: must not run.
  });
  second = client_->Subscribe("E", "", [&](const Event&) { ++second_calls; });
  EventWaiter marker = client_->Expect("Marker", "");
  fake_->Deliver(R"({"method":"E","params":{}})");
  fake_->Deliver(R"({"method":"E","params":{}})");
  fake_->Deliver(R"({"method":"Marker","params":{}})");
  ASSERT_TRUE(marker.Wait(milliseconds(5000)).ok());
  EXPECT_EQ(first_calls.load(), 1);
  EXPECT_EQ(second_calls.load(), 0);
}

TEST_F(ClientTest, BrowserGoneFailsPendingCallsAndWaiters) {
  EventWaiter waiter = client_->Expect("Page.loadEventFired", "S1");
  auto call = std::async(std::launch::async, [&] { return client_->Call("Page.navigate"); });
  ASSERT_TRUE(fake_->NextSent());
  fake_->Disconnect();
  Result<Message> reply = call.get();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("Page.navigate"), std::string_view::npos);
  EXPECT_EQ(waiter.Wait(milliseconds(5000)).status().code(), StatusCode::kUnavailable);
  // Later calls fail at once with the same reason.
  EXPECT_EQ(client_->Call("Page.reload").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(client_->connection_status().code(), StatusCode::kUnavailable);
}

TEST_F(ClientTest, CallTimesOutNamingTheMethod) {
  Result<Message> reply = client_->Call("Runtime.evaluate", "{}", "", milliseconds(20));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(reply.status().message().find("Runtime.evaluate"), std::string_view::npos);
  // A reply that arrives after the caller gave up is dropped quietly.
  fake_->Deliver(R"({"id":1,"result":{}})");
}

TEST_F(ClientTest, LargeStringIsViewedInPlace) {
  std::string payload(3 << 20, 'A');
  auto call = std::async(std::launch::async, [&] { return client_->Call("HeadlessExperimental.beginFrame"); });
  ASSERT_TRUE(fake_->NextSent());
  std::string reply_text = R"({"id":1,"result":{"hasDamage":true,"screenshotData":")";
  reply_text.append(payload).append("\"}}");
  fake_->Deliver(std::move(reply_text));
  Result<Message> reply = call.get();
  ASSERT_TRUE(reply.ok());
  Result<std::string_view> data = GetRawStringView(*reply, {"result", "screenshotData"});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size(), payload.size());
  EXPECT_GE(data->data(), reply->json.data());
  EXPECT_LT(data->data(), reply->json.data() + reply->json.size());
  EXPECT_TRUE(*GetBool(*reply, {"result", "hasDamage"}));

  // A copy has no spare capacity for the parser; the view still points into the copy.
  Message copy;
  copy.json = std::string(reply->json.data(), reply->json.size());
  copy.json.shrink_to_fit();
  Result<std::string_view> copied = GetRawStringView(copy, {"result", "screenshotData"});
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->size(), payload.size());
  EXPECT_GE(copied->data(), copy.json.data());
  EXPECT_LT(copied->data(), copy.json.data() + copy.json.size());
}

TEST(JsonUtilTest, QuotesControlCharacters) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), R"("a\"b\\c\n\u0001")");
}

}  // namespace
}  // namespace pagereel::cdp
