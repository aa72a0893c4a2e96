// Client: a DevTools protocol client over one Transport.
//
// Call() sends a command and waits for its reply; Expect() and Subscribe() deliver events.
// One reader thread (named "cdp-reader") receives every message and routes it: replies to
// the waiting call, events to their handlers. It only moves bytes: it finds the id, method
// and sessionId of a message and hands the whole message over without copying it, so a
// multi-megabyte screenshot is parsed and decoded by the thread that asked for it.
//
// All methods are thread-safe. Event handlers run on the reader thread, one at a time:
// while one runs, no other message is received, so a handler must be quick, must not
// block, and must never call Call() (its reply could only be read by the thread it
// blocks: a deadlock). A handler may Subscribe and Unsubscribe. Unsubscribe waits for a
// running call of that handler to finish, so state the handler uses may be destroyed as
// soon as Unsubscribe returns.
// When the connection ends (the browser exited or crashed), every pending and later call
// fails with the status that ended it.
#ifndef PAGEREEL_CDP_CLIENT_H_
#define PAGEREEL_CDP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "cdp/transport.h"

namespace pagereel::cdp {

// A whole received message (reply or event), kept as the raw JSON text with parser padding.
// Parse it with the helpers in cdp/json_util.h.
struct Message {
  std::string json;
};

struct Event {
  std::string method;
  std::string session_id;  // Empty for browser-level events.
  std::shared_ptr<const Message> message;
};

using EventHandler = std::function<void(const Event&)>;

// One command of a CallAll(): a method and its params (a JSON object).
struct Command {
  std::string method;
  std::string params_json = "{}";
};

class Client;

// A one-shot wait for an event, registered before the command that causes the event is
// sent, so the event cannot slip past. Move-only; stops listening when destroyed.
class EventWaiter {
 public:
  struct State;

  EventWaiter(EventWaiter&&) noexcept;
  EventWaiter& operator=(EventWaiter&&) noexcept;
  ~EventWaiter();

  // Blocks until the event arrives, the connection ends, or `timeout` passes.
  Result<Event> Wait(std::chrono::milliseconds timeout);

 private:
  friend class Client;
  EventWaiter(Client* client, uint64_t subscription, std::shared_ptr<State> state);

  Client* client_ = nullptr;
  uint64_t subscription_ = 0;
  std::shared_ptr<State> state_;
};

class Client {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{30'000};

  explicit Client(std::unique_ptr<Transport> transport);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `method` with `params_json` (a JSON object) to the browser, or to the target
  // attached as `session_id`, and waits for the reply. A protocol error becomes a Status
  // that names the method and carries the browser's message.
  Result<Message> Call(std::string_view method, std::string_view params_json = "{}",
                       std::string_view session_id = {},
                       std::chrono::milliseconds timeout = kDefaultTimeout);

  // Sends every command to `session_id` at once and then waits for all their replies, at
  // most `timeout` in all: one round trip instead of one per command. The browser runs the
  // commands of one session in the order they were sent and answers them in that order, so
  // use it for commands whose order matters only as sent (a page's setup), never for one
  // that needs an earlier reply's contents. One result per command, in order, each as
  // Call() would have returned it.
  std::vector<Result<Message>> CallAll(const std::vector<Command>& commands,
                                       std::string_view session_id = {},
                                       std::chrono::milliseconds timeout = kDefaultTimeout);

  // Sends `method` like Call() but does not wait: its reply is dropped when it comes.
  // Unlike Call(), safe from an event handler (answering a dialog, which blocks the page
  // until it is answered, from the handler that hears of it). Fails only when the
  // message could not be sent.
  Status Send(std::string_view method, std::string_view params_json = "{}",
              std::string_view session_id = {});

  // Starts listening for one `method` event on `session_id`; wait on the returned object.
  EventWaiter Expect(std::string method, std::string session_id);

  // Calls `handler` for every `method` event on `session_id` (an empty method matches
  // every event of that session) until Unsubscribe.
  uint64_t Subscribe(std::string method, std::string session_id, EventHandler handler);
  // After it returns the handler is not running and never runs again (called from a
  // handler on the reader thread, it does not wait, since that handler is the caller).
  void Unsubscribe(uint64_t id);

  // Fails every call still waiting for its reply from `session_id` with `status` (a reply
  // that comes later is dropped): the browser does not answer the calls a target was
  // running when its renderer crashed, and they would wait out their timeouts. Safe from
  // an event handler.
  void FailCalls(std::string_view session_id, const Status& status);

  // OK while connected; afterwards the reason the connection ended.
  Status connection_status() const;

  // Closes the transport and fails everything still waiting. Idempotent.
  void Close();

 private:
  struct Pending;
  struct Subscription {
    std::string method;
    std::string session_id;
    EventHandler handler;
  };

  // Registers a waiter for the reply to command `id`, then sends it; the waiter is gone
  // again when sending failed.
  Status Start(int64_t id, const std::shared_ptr<Pending>& pending, std::string_view params_json)
      EXCLUDES(mu_);
  // Waits until `deadline` for the reply to command `id`; gives up on it afterwards.
  Result<Message> Await(int64_t id, const std::shared_ptr<Pending>& pending,
                        std::chrono::steady_clock::time_point deadline,
                        std::chrono::milliseconds timeout) EXCLUDES(mu_);
  void ReadLoop();
  void Dispatch(std::string json) EXCLUDES(mu_);
  void FailAll(const Status& status) EXCLUDES(mu_);

  // Constant after construction.
  std::unique_ptr<Transport> transport_;

  mutable Mutex mu_;
  int64_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<int64_t, std::shared_ptr<Pending>> pending_ GUARDED_BY(mu_);
  uint64_t next_subscription_ GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<const Subscription>> subscriptions_ GUARDED_BY(mu_);
  std::map<uint64_t, std::weak_ptr<EventWaiter::State>> waiters_ GUARDED_BY(mu_);
  uint64_t running_subscription_ GUARDED_BY(mu_) = 0;  // The handler the reader is in.
  CondVar handler_done_;  // Signalled when running_subscription_ clears.
  Status closed_ GUARDED_BY(mu_);
  bool is_closed_ GUARDED_BY(mu_) = false;

  std::jthread reader_;  // Last: started after everything it uses exists.
};

}  // namespace pagereel::cdp

#endif  // PAGEREEL_CDP_CLIENT_H_
