#include "cdp/client.h"

#include <simdjson.h>

#include <utility>

#include "base/thread.h"

namespace pagereel::cdp {

struct Client::Pending {
  std::string method;
  std::string session_id;
  Mutex mu;
  CondVar cv;
  std::optional<Result<Message>> reply GUARDED_BY(mu);
};

struct EventWaiter::State {
  Mutex mu;
  CondVar cv;
  std::optional<Result<Event>> event GUARDED_BY(mu);
  std::string method;
};

namespace {

// One command as the browser reads it.
std::string CommandText(int64_t id, std::string_view method, std::string_view params_json,
                        std::string_view session_id) {
  std::string text = "{\"id\":" + std::to_string(id) + ",\"method\":\"";
  text += method;
  text += "\",\"params\":";
  text += params_json.empty() ? std::string_view("{}") : params_json;
  if (!session_id.empty()) {
    text += ",\"sessionId\":\"";
    text += session_id;
    text += "\"";
  }
  text += "}";
  return text;
}

// A protocol error reply {"error":{"code":..,"message":..}} as a Status naming the method.
Status ProtocolError(std::string_view method, const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string message = "unreadable error";
  int64_t code = 0;
  if (parser.parse(json).get(doc) == simdjson::SUCCESS) {
    std::string_view text;
    if (doc["error"]["message"].get(text) == simdjson::SUCCESS) message = std::string(text);
    std::string_view data;
    if (doc["error"]["data"].get(data) == simdjson::SUCCESS) {
      message += " (";
      message += data;
      message += ")";
    }
    [[maybe_unused]] auto e = doc["error"]["code"].get(code);
  }
  std::string text = "DevTools call " + std::string(method) + " failed: " + message;
  if (code == -32601) return NotFoundError(std::move(text));
  return FailedPreconditionError(std::move(text));
}

}  // namespace

EventWaiter::EventWaiter(Client* client, uint64_t subscription, std::shared_ptr<State> state)
    : client_(client), subscription_(subscription), state_(std::move(state)) {}

EventWaiter::EventWaiter(EventWaiter&& other) noexcept
    : client_(std::exchange(other.client_, nullptr)),
      subscription_(std::exchange(other.subscription_, 0)),
      state_(std::move(other.state_)) {}

EventWaiter& EventWaiter::operator=(EventWaiter&& other) noexcept {
  if (this != &other) {
    if (client_ != nullptr) client_->Unsubscribe(subscription_);
    client_ = std::exchange(other.client_, nullptr);
    subscription_ = std::exchange(other.subscription_, 0);
    state_ = std::move(other.state_);
  }
  return *this;
}

EventWaiter::~EventWaiter() {
  if (client_ != nullptr) client_->Unsubscribe(subscription_);
}

Result<Event> EventWaiter::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  State& state = *state_;
  MutexLock lock(&state.mu);
  while (!state.event.has_value()) {
    if (!state.cv.WaitUntil(&state.mu, deadline) && !state.event.has_value()) {
      return DeadlineExceededError("no " + state.method + " event within " +
                                   std::to_string(timeout.count()) + " ms");
    }
  }
  Result<Event> out = std::move(*state.event);
  state.event.reset();
  return out;
}

Client::Client(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {
  reader_ = std::jthread([this] {
    SetCurrentThreadName("cdp-reader");
    ReadLoop();
  });
}

Client::~Client() {
  Close();
  // reader_ joins on destruction; Close() has unblocked it.
}

void Client::Close() {
  transport_->Close();
  FailAll(CancelledError("DevTools connection closed"));
}

Status Client::connection_status() const {
  MutexLock lock(&mu_);
  return closed_;
}

Status Client::Send(std::string_view method, std::string_view params_json,
                    std::string_view session_id) {
  int64_t id = 0;
  {
    MutexLock lock(&mu_);
    if (is_closed_) return closed_.WithContext(std::string(method));
    id = next_id_++;  // No pending entry: Dispatch drops a reply nobody waits for.
  }
  return transport_->Send(CommandText(id, method, params_json, session_id))
      .WithContext("sending " + std::string(method));
}

Result<Message> Client::Call(std::string_view method, std::string_view params_json,
                             std::string_view session_id, std::chrono::milliseconds timeout) {
  std::vector<Result<Message>> replies =
      CallAll({Command{std::string(method), std::string(params_json)}}, session_id, timeout);
  return std::move(replies.front());
}

std::vector<Result<Message>> Client::CallAll(const std::vector<Command>& commands,
                                             std::string_view session_id,
                                             std::chrono::milliseconds timeout) {
  std::vector<Result<Message>> replies;
  std::vector<std::pair<int64_t, std::shared_ptr<Pending>>> sent;
  for (const Command& command : commands) {
    auto pending = std::make_shared<Pending>();
    pending->method = command.method;
    pending->session_id = std::string(session_id);
    int64_t id = 0;
    {
      MutexLock lock(&mu_);
      if (is_closed_) {
        replies.emplace_back(closed_.WithContext(command.method));
        continue;
      }
      id = next_id_++;
      pending_[id] = pending;
    }
    Status started = Start(id, pending, command.params_json);
    if (!started.ok()) {
      replies.emplace_back(started);
      continue;
    }
    replies.emplace_back(Message{});  // Filled in below.
    sent.emplace_back(id, std::move(pending));
  }
  // Replies come in the order sent: one deadline for all of them.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t next = 0;
  for (Result<Message>& reply : replies) {
    if (!reply.ok()) continue;
    auto& [id, pending] = sent[next++];
    reply = Await(id, pending, deadline, timeout);
  }
  return replies;
}

Status Client::Start(int64_t id, const std::shared_ptr<Pending>& pending,
                     std::string_view params_json) {
  const std::string text = CommandText(id, pending->method, params_json, pending->session_id);
  if (Status sent = transport_->Send(text); !sent.ok()) {
    MutexLock lock(&mu_);
    pending_.erase(id);
    return sent.WithContext("sending " + pending->method);
  }
  return Status::Ok();
}

Result<Message> Client::Await(int64_t id, const std::shared_ptr<Pending>& pending,
                              std::chrono::steady_clock::time_point deadline,
                              std::chrono::milliseconds timeout) {
  {
    MutexLock lock(&pending->mu);
    while (!pending->reply.has_value()) {
      if (!pending->cv.WaitUntil(&pending->mu, deadline) && !pending->reply.has_value()) break;
    }
    if (pending->reply.has_value()) return std::move(*pending->reply);
  }
  MutexLock map_lock(&mu_);
  pending_.erase(id);
  return DeadlineExceededError("DevTools call " + pending->method + " got no reply within " +
                               std::to_string(timeout.count()) + " ms");
}

EventWaiter Client::Expect(std::string method, std::string session_id) {
  auto state = std::make_shared<EventWaiter::State>();
  state->method = method;
  std::weak_ptr<EventWaiter::State> weak = state;
  uint64_t id = Subscribe(std::move(method), std::move(session_id), [weak](const Event& event) {
    if (auto s = weak.lock()) {
      MutexLock lock(&s->mu);
      if (!s->event.has_value()) s->event = event;
      s->cv.SignalAll();
    }
  });
  {
    // If the connection is already gone, the waiter fails at once rather than timing out.
    MutexLock lock(&mu_);
    waiters_[id] = state;
    if (is_closed_) {
      MutexLock state_lock(&state->mu);
      state->event = Result<Event>(closed_);
    }
  }
  return EventWaiter(this, id, std::move(state));
}

uint64_t Client::Subscribe(std::string method, std::string session_id, EventHandler handler) {
  MutexLock lock(&mu_);
  uint64_t id = next_subscription_++;
  subscriptions_[id] = std::make_shared<const Subscription>(
      Subscription{std::move(method), std::move(session_id), std::move(handler)});
  return id;
}

void Client::Unsubscribe(uint64_t id) {
  MutexLock lock(&mu_);
  subscriptions_.erase(id);
  waiters_.erase(id);
  if (std::this_thread::get_id() == reader_.get_id()) return;  // A handler unsubscribing.
  while (running_subscription_ == id) handler_done_.Wait(&mu_);
}

void Client::ReadLoop() {
  for (;;) {
    Result<std::string> message = transport_->Receive();
    if (!message.ok()) {
      FailAll(message.status());
      return;
    }
    Dispatch(std::move(message).value());
  }
}

void Client::Dispatch(std::string json) {
  // Only the routing fields are read here; the rest of the message (a screenshot's
  // megabytes of base64, say) is skipped by the parser and handed over untouched.
  static thread_local simdjson::ondemand::parser parser;
  int64_t id = -1;
  std::string method;
  std::string session_id;
  bool is_error = false;
  {
    simdjson::padded_string_view view(json.data(), json.size(), json.capacity());
    simdjson::ondemand::document doc;
    simdjson::ondemand::object object;
    if (parser.iterate(view).get(doc) != simdjson::SUCCESS ||
        doc.get_object().get(object) != simdjson::SUCCESS) {
      return;  // Not a JSON object: nothing to route it to.
    }
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) return;
      if (key == "id") {
        if (field.value().get_int64().get(id) != simdjson::SUCCESS) return;
      } else if (key == "method") {
        std::string_view text;
        if (field.value().get_string().get(text) != simdjson::SUCCESS) return;
        method = std::string(text);
      } else if (key == "sessionId") {
        std::string_view text;
        if (field.value().get_string().get(text) != simdjson::SUCCESS) return;
        session_id = std::string(text);
      } else if (key == "error") {
        is_error = true;
      }
    }
  }

  if (id >= 0) {
    std::shared_ptr<Pending> pending;
    {
      MutexLock lock(&mu_);
      auto it = pending_.find(id);
      if (it == pending_.end()) return;  // The caller gave up waiting.
      pending = std::move(it->second);
      pending_.erase(it);  // Erased before the waiter runs, so it cannot be found twice.
    }
    MutexLock lock(&pending->mu);
    if (is_error) {
      pending->reply = Result<Message>(ProtocolError(pending->method, json));
    } else {
      pending->reply = Message{std::move(json)};
    }
    pending->cv.SignalAll();
    return;
  }
  if (method.empty()) return;

  Event event{std::move(method), std::move(session_id),
              std::make_shared<const Message>(Message{std::move(json)})};
  // Collect the matching handlers first: a handler may subscribe or unsubscribe.
  std::vector<std::pair<uint64_t, std::shared_ptr<const Subscription>>> targets;
  {
    MutexLock lock(&mu_);
    for (const auto& [sid, sub] : subscriptions_) {
      if (sub->session_id == event.session_id &&
          (sub->method.empty() || sub->method == event.method)) {
        targets.emplace_back(sid, sub);
      }
    }
  }
  for (const auto& [sid, sub] : targets) {
    {
      // Unsubscribed since it was collected (by another thread, or an earlier handler):
      // it must not run any more.
      MutexLock lock(&mu_);
      if (!subscriptions_.contains(sid)) continue;
      running_subscription_ = sid;
    }
    sub->handler(event);
    {
      MutexLock lock(&mu_);
      running_subscription_ = 0;
    }
    handler_done_.SignalAll();
  }
}

void Client::FailCalls(std::string_view session_id, const Status& status) {
  std::vector<std::shared_ptr<Pending>> failed;
  {
    MutexLock lock(&mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second->session_id == session_id) {
        failed.push_back(std::move(it->second));
        it = pending_.erase(it);  // A reply that still comes finds no one and is dropped.
      } else {
        ++it;
      }
    }
  }
  for (const std::shared_ptr<Pending>& p : failed) {
    MutexLock lock(&p->mu);
    p->reply = Result<Message>(status.WithContext(p->method));
    p->cv.SignalAll();
  }
}

void Client::FailAll(const Status& status) {
  std::map<int64_t, std::shared_ptr<Pending>> pending;
  std::vector<std::weak_ptr<EventWaiter::State>> waiters;
  {
    MutexLock lock(&mu_);
    if (is_closed_) return;
    is_closed_ = true;
    closed_ = status;
    pending.swap(pending_);
    for (const auto& [id, state] : waiters_) waiters.push_back(state);
  }
  for (auto& [id, p] : pending) {
    MutexLock lock(&p->mu);
    p->reply = Result<Message>(status.WithContext(p->method));
    p->cv.SignalAll();
  }
  // Event waiters fail at once instead of running into their timeouts.
  for (const auto& weak : waiters) {
    if (auto state = weak.lock()) {
      MutexLock lock(&state->mu);
      if (!state->event.has_value()) state->event = Result<Event>(status);
      state->cv.SignalAll();
    }
  }
}

}  // namespace pagereel::cdp
