// The SSRF suite: the real chrome-headless-shell, a page from an allowed loopback origin
// that tries to reach a loopback "victim" server in every way a page can, and the egress
// proxy in front. Every packet here goes to 127.0.0.1.
//
// Each attack also runs once without the proxy (the control), which must reach the victim
// in each of those ways: otherwise a quiet victim would prove nothing.
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "browser/browser.h"
#include "cdp/json_util.h"
#include "serve/egress/policy.h"
#include "serve/egress/proxy.h"
#include "testing/http_server.h"
#include "testing/tab.h"

namespace pagereel::serve::egress {
namespace {

using json = nlohmann::json;
using pagereel::testing::Tab;
using pagereel::testing::HttpServer;

// Counts UDP datagrams sent to it (a STUN server that never answers).
class UdpVictim {
 public:
  UdpVictim() {
    namespace ip = boost::asio::ip;
    socket_.open(ip::udp::v4());
    socket_.bind(ip::udp::endpoint(ip::address_v4::loopback(), 0));
    timeval tv{0, 100'000};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    port_ = socket_.local_endpoint().port();
    thread_ = std::jthread([this](std::stop_token stop) {
      char buf[2048];
      while (!stop.stop_requested()) {
        // Plain recv: Asio's blocking receive polls and would ignore SO_RCVTIMEO.
        if (::recv(socket_.native_handle(), buf, sizeof buf, 0) >= 0) ++packets_;
      }
    });
  }
  uint16_t port() const { return port_; }
  int packets() const { return packets_.load(); }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::udp::socket socket_{io_};
  uint16_t port_ = 0;
  std::atomic<int> packets_{0};
  std::jthread thread_;
};

// The attacking page. V is the victim; the page's own origin is allowed.
std::string AttackPage(uint16_t victim, uint16_t udp) {
  std::string v = std::to_string(victim);
  std::string script = R"JS(
const V = 'http://127.0.0.1:VPORT', E = 'http://evil.test:VPORT', S = 'https://127.0.0.1:VPORT';
const WS = 'ws://127.0.0.1:VPORT', WSS = 'wss://127.0.0.1:VPORT', O = location.origin;
const settle = (p, ms) => Promise.race([
  p.then(v => 'ok' + (v === undefined ? '' : ': ' + String(v).slice(0, 80)),
         e => 'error: ' + String(e && e.message || e)),
  new Promise(r => setTimeout(() => r('timeout'), ms || 4000))]);
const element = (tag, props) => new Promise((res, rej) => {
  const el = document.createElement(tag);
  el.onload = () => res(); el.onerror = () => rej(new Error(tag + ' error'));
  Object.assign(el, props); document.body.appendChild(el);
});
const redirect = to => O + '/redirect?to=' + encodeURIComponent(to);
const message = target => new Promise((res, rej) => {
  target.onmessage = e => String(e.data).startsWith('ok') ? res(e.data) : rej(new Error(e.data));
});
const tries = {
  image: () => element('img', {src: V + '/image'}),
  stylesheet: () => element('link', {rel: 'stylesheet', href: V + '/stylesheet'}),
  script: () => element('script', {src: V + '/script'}),
  iframe: () => element('iframe', {src: V + '/iframe'}),
  redirect_image: () => element('img', {src: redirect(V + '/redirect-image')}),
  redirect_iframe: () => element('iframe', {src: redirect(V + '/redirect-iframe')}),
  fetch: () => fetch(V + '/fetch', {mode: 'no-cors'}),
  redirect_fetch: () => fetch(redirect(V + '/redirect-fetch'), {mode: 'no-cors'}),
  xhr: () => new Promise((res, rej) => {
    const x = new XMLHttpRequest(); x.open('GET', V + '/xhr');
    x.onload = () => res(x.status); x.onerror = () => rej(new Error('xhr error')); x.send();
  }),
  websocket: () => new Promise((res, rej) => {
    const w = new WebSocket(WS + '/websocket'); w.onopen = res; w.onerror = () => rej(new Error('ws error'));
  }),
  websocket_tls: () => new Promise((res, rej) => {
    const w = new WebSocket(WSS + '/websocket-tls'); w.onopen = res; w.onerror = () => rej(new Error('wss error'));
  }),
  https_fetch: () => fetch(S + '/https-fetch', {mode: 'no-cors'}),
  beacon: () => Promise.resolve(navigator.sendBeacon(V + '/beacon', 'x')),
  eventsource: () => new Promise((res, rej) => {
    const s = new EventSource(V + '/eventsource');
    s.onopen = res; s.onerror = () => { s.close(); rej(new Error('eventsource error')); };
  }),
  worker: () => {
    const w = new Worker('/worker.js?v=' + encodeURIComponent(V));
    return message(w);
  },
  service_worker: async () => {
    const reg = await navigator.serviceWorker.register('/sw.js?v=' + encodeURIComponent(V));
    await navigator.serviceWorker.ready;
    const answer = message(navigator.serviceWorker);
    (reg.active || reg.waiting || reg.installing).postMessage('go');
    return answer;
  },
  name_mapped_to_loopback_image: () => element('img', {src: E + '/evil-image'}),
  name_mapped_to_loopback_fetch: () => fetch(E + '/evil-fetch', {mode: 'no-cors'}),
  webrtc_stun: async () => {
    const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:UPORT'}]});
    pc.createDataChannel('x');
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise(r => {
      pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && r();
      setTimeout(r, 3000);
    });
    return (pc.localDescription.sdp.match(/a=candidate/g) || []).length + ' candidates';
  },
  same_origin: () => fetch(O + '/same-origin').then(r => r.text()),
};
window.attackDone = (async () => {
  const results = {};
  await Promise.all(Object.entries(tries).map(async ([k, f]) => {
    results[k] = await settle(Promise.resolve().then(f));
  }));
  return results;
})();
)JS";
  for (size_t at; (at = script.find("VPORT")) != std::string::npos;) script.replace(at, 5, v);
  for (size_t at; (at = script.find("UPORT")) != std::string::npos;) {
    script.replace(at, 5, std::to_string(udp));
  }
  return "<!doctype html><html><head><title>attack</title></head><body><script>" + script +
         "</script></body></html>";
}

constexpr const char* kWorker = R"JS(
const V = new URL(location).searchParams.get('v');
try { importScripts(V + '/worker-import'); } catch (e) {}
fetch(V + '/worker-fetch', {mode: 'no-cors'}).then(() => postMessage('ok'),
                                                    e => postMessage('error: ' + e));
)JS";

constexpr const char* kServiceWorker = R"JS(
const V = new URL(location).searchParams.get('v');
self.addEventListener('install', e => e.waitUntil(
    fetch(V + '/service-worker-install', {mode: 'no-cors'}).catch(() => {})));
self.addEventListener('activate', e => e.waitUntil(clients.claim()));
self.addEventListener('message', e => {
  fetch(V + '/service-worker-fetch', {mode: 'no-cors'}).then(
      () => e.source.postMessage('ok'), err => e.source.postMessage('error: ' + err));
});
)JS";

HttpServer::Response ServeSite(const HttpServer::Request& r, uint16_t victim, uint16_t udp) {
  std::string path = r.target.substr(0, r.target.find('?'));
  if (path == "/attack.html") return {200, "text/html", AttackPage(victim, udp), {}};
  if (path == "/worker.js") return {200, "text/javascript", kWorker, {}};
  if (path == "/sw.js") return {200, "text/javascript", kServiceWorker, {}};
  if (path == "/same-origin") return {200, "text/plain", "same-origin body", {}};
  if (path == "/redirect") {
    std::string to = r.target.substr(r.target.find("to=") + 3);
    std::string decoded;
    for (size_t i = 0; i < to.size(); ++i) {
      if (to[i] == '%' && i + 2 < to.size()) {
        decoded += static_cast<char>(std::stoi(to.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        decoded += to[i];
      }
    }
    return {302, "text/plain", "", {{"Location", decoded}}};
  }
  return {404, "text/plain", "not here", {}};
}

// Fetch-domain interception as a service without the proxy might do it: Fetch.enable on
// the page's session, every paused request outside `allowed_origin` failed. Events arrive on
// the client's reader thread, which must not call back, so a thread of its own answers.
class FetchGate {
 public:
  FetchGate(cdp::Client& client, Tab& tab, std::string allowed_origin)
      : client_(client), tab_(tab), allowed_(std::move(allowed_origin)) {
    subscription_ = client_.Subscribe("Fetch.requestPaused", tab_.session(), [this](const cdp::Event& e) {
      json params = json::parse(e.message->json)["params"];
      MutexLock lock(&mu_);
      paused_.push_back({params.value("requestId", ""), params["request"].value("url", "")});
      cv_.Signal();
    });
    EXPECT_TRUE(tab_.Call("Fetch.enable", {{"patterns", {{{"urlPattern", "*"}}}}}).ok());
    thread_ = std::jthread([this](std::stop_token stop) {
      while (true) {
        std::pair<std::string, std::string> next;
        {
          MutexLock lock(&mu_);
          while (!stop.stop_requested() && paused_.empty()) cv_.Wait(&mu_);
          if (stop.stop_requested()) return;
          next = paused_.front();
          paused_.erase(paused_.begin());
        }
        if (next.second.starts_with(allowed_ + "/")) {
          tab_.Call("Fetch.continueRequest", {{"requestId", next.first}}).status().IgnoreError();
        } else {
          tab_.Call("Fetch.failRequest", {{"requestId", next.first}, {"errorReason", "BlockedByClient"}})
              .status()
              .IgnoreError();
        }
      }
    });
  }
  ~FetchGate() {
    {
      MutexLock lock(&mu_);
      thread_.request_stop();
      cv_.Signal();
    }
    thread_.join();
    client_.Unsubscribe(subscription_);
  }

 private:
  cdp::Client& client_;
  Tab& tab_;
  std::string allowed_;
  uint64_t subscription_ = 0;
  Mutex mu_;
  CondVar cv_;
  std::vector<std::pair<std::string, std::string>> paused_ GUARDED_BY(mu_);
  std::jthread thread_;
};

enum class Route {
  kDirect,         // No proxy: the control.
  kBrowserProxy,   // Proxy::BrowserArgs() on the browser's command line.
  kFetchInterception,  // No proxy; Fetch.enable on the page's session refuses the victim.
  kContextProxy,   // The context names a channel of the proxy; the browser has only the
                   // WebRTC switch.
};

struct Outcome {
  std::set<std::string> victim_paths;
  int victim_connections = 0;
  int udp_packets = 0;
  json page_results;
  std::vector<Refusal> refusals;
  std::vector<HttpServer::Request> site_requests;
  uint64_t channel_refused = 0;
  json navigate_direct;
  json navigate_redirect;
};

Outcome RunAttack(Route route) {
  Outcome out;
  HttpServer victim([](const HttpServer::Request&) {
    return HttpServer::Response{200, "text/html", "<p>victim</p>", {}};
  });
  UdpVictim udp;
  uint16_t victim_port = victim.port();
  uint16_t udp_port = udp.port();
  HttpServer site(
      [&](const HttpServer::Request& r) { return ServeSite(r, victim_port, udp_port); });

  std::mutex mu;
  Result<Policy> policy = Policy::Parse({site.Origin()}, {"evil.test:*:127.0.0.1"});
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  Result<std::unique_ptr<Proxy>> proxy = Proxy::Start(*policy, [&](const Refusal& r) {
    std::lock_guard lock(mu);
    out.refusals.push_back(r);
  });
  EXPECT_TRUE(proxy.ok()) << proxy.status().ToString();

  browser::LaunchOptions options;
  options.frame_control = browser::FrameControl::kPerTarget;
  // The browser itself maps evil.test to loopback too, so the control run reaches the
  // victim by that name; behind the proxy the browser resolves nothing.
  options.extra_args.push_back("--host-resolver-rules=MAP evil.test 127.0.0.1");
  browser::ContextOptions context_options;
  std::unique_ptr<ProxyChannel> channel;
  if (route == Route::kBrowserProxy) {
    for (const std::string& arg : (*proxy)->BrowserArgs()) options.extra_args.push_back(arg);
  } else if (route == Route::kContextProxy) {
    // No proxy can carry WebRTC's UDP; without this switch the control's STUN packets are
    // sent from a proxied context too (measured: 4 packets).
    options.extra_args.push_back("--force-webrtc-ip-handling-policy=disable_non_proxied_udp");
    channel = std::move((*proxy)->OpenChannel(nullptr)).value();
    context_options.proxy_server = channel->Url();
    context_options.proxy_bypass_list = "<-loopback>";
  }
  Result<std::unique_ptr<browser::Browser>> browser = browser::Browser::Launch(options);
  EXPECT_TRUE(browser.ok()) << browser.status().ToString();
  if (!browser.ok()) return out;
  {
    Result<std::unique_ptr<Tab>> tab = Tab::Open(**browser, context_options);
    EXPECT_TRUE(tab.ok()) << tab.status().ToString();
    if (!tab.ok()) return out;
    std::unique_ptr<FetchGate> gate;
    if (route == Route::kFetchInterception) {
      gate = std::make_unique<FetchGate>((*browser)->client(), **tab, site.Origin());
    }
    Result<json> nav = (*tab)->Navigate(site.Origin() + "/attack.html");
    EXPECT_TRUE(nav.ok()) << nav.status().ToString();
    Result<json> results = (*tab)->Evaluate(
        "new Promise(r => { const t = () => window.attackDone ? r(window.attackDone) : "
        "setTimeout(t, 20); t(); })");
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    if (results.ok()) out.page_results = *results;
    // Top-level navigations: straight to the victim, and through a redirect.
    Result<json> direct = (*tab)->Navigate("http://127.0.0.1:" + std::to_string(victim_port) +
                                           "/navigate");
    if (direct.ok()) out.navigate_direct = *direct;
    Result<json> redirected = (*tab)->Navigate(
        site.Origin() + "/redirect?to=http://127.0.0.1:" + std::to_string(victim_port) +
        "/redirect-navigate");
    if (redirected.ok()) out.navigate_redirect = *redirected;
    (*tab)->Evaluate("new Promise(r => setTimeout(r, 300))").status().IgnoreError();
  }
  browser->reset();
  for (const HttpServer::Request& r : victim.ReceivedRequests()) out.victim_paths.insert(r.target);
  out.victim_connections = victim.connections();
  out.udp_packets = udp.packets();
  out.site_requests = site.ReceivedRequests();
  if (channel) out.channel_refused = channel->refused();
  std::lock_guard lock(mu);
  return out;
}

void Print(const char* what, const Outcome& o) {
  std::string paths;
  for (const auto& p : o.victim_paths) paths += " " + p;
  std::string refused;
  for (const auto& r : o.refusals) refused += "\n    " + r.request + " -> " + r.reason;
  std::cout << what << ":\n  victim connections " << o.victim_connections << ", paths:" << paths
            << "\n  UDP packets to the STUN victim: " << o.udp_packets
            << "\n  page saw: " << o.page_results.dump()
            << "\n  navigate: " << o.navigate_direct.dump() << " / " << o.navigate_redirect.dump()
            << "\n  refusals:" << refused << "\n";
}

// Each way of reaching the victim, as the victim sees it (path of the request).
const std::vector<std::string> kVictimPaths = {
    "/image", "/stylesheet", "/script", "/iframe", "/redirect-image", "/redirect-iframe",
    "/fetch", "/redirect-fetch", "/xhr", "/websocket", "/beacon", "/eventsource",
    "/worker-import", "/worker-fetch", "/service-worker-install", "/service-worker-fetch",
    "/evil-image", "/evil-fetch", "/navigate", "/redirect-navigate"};

TEST(SsrfTest, WithoutTheProxyThePageReachesTheVictimInEveryWay) {
  Outcome o = RunAttack(Route::kDirect);
  Print("direct (control)", o);
  for (const std::string& path : kVictimPaths) {
    EXPECT_TRUE(o.victim_paths.count(path)) << path << " did not reach the victim directly";
  }
  EXPECT_GT(o.udp_packets, 0) << "WebRTC sent no STUN packet even without the policy";
}

void ExpectNothingReachesTheVictim(const Outcome& o) {
  EXPECT_EQ(o.victim_connections, 0);
  EXPECT_TRUE(o.victim_paths.empty());
  EXPECT_EQ(o.udp_packets, 0) << "WebRTC sent UDP around the proxy";
  // The allowed origin did load, through the proxy: requests relayed by it carry
  // "Connection: close"; the browser's own say keep-alive.
  EXPECT_EQ(o.page_results.value("same_origin", ""), "ok: same-origin body");
  ASSERT_FALSE(o.site_requests.empty());
  for (const HttpServer::Request& r : o.site_requests) {
    EXPECT_EQ(r.connection, "close") << r.target << " reached the site without the proxy";
  }
  std::set<std::string> refused;
  for (const Refusal& r : o.refusals) refused.insert(r.request);
  // Plain http requests name their path at the proxy; every one was refused there.
  for (std::string_view path : {"/image", "/stylesheet", "/script", "/iframe", "/fetch",
                                  "/xhr", "/beacon", "/eventsource", "/worker-fetch",
                                  "/service-worker-fetch", "/redirect-image", "/navigate",
                                  "/redirect-navigate", "/evil-fetch"}) {
    bool found = false;
    for (const Refusal& r : o.refusals) found = found || r.request.ends_with(path);
    EXPECT_TRUE(found) << path << " was not refused at the proxy";
  }
  for (const Refusal& r : o.refusals) {
    EXPECT_EQ(r.reason, "loopback address 127.0.0.1") << r.request;
  }
}

// Why the proxy and not Fetch interception: measured, not assumed. If this starts failing,
// Chromium's interception got wider; the README's comparison should be revisited.
TEST(SsrfTest, FetchInterceptionOnThePageSessionLetsSomeKindsThrough) {
  Outcome o = RunAttack(Route::kFetchInterception);
  Print("Fetch interception on the page session", o);
  EXPECT_FALSE(o.victim_paths.empty());
}

TEST(SsrfTest, BehindTheProxyNothingReachesTheVictim) {
  Outcome o = RunAttack(Route::kBrowserProxy);
  Print("browser --proxy-server", o);
  ExpectNothingReachesTheVictim(o);
}

TEST(SsrfTest, AContextWithAChannelAsItsProxyServerIsCoveredToo) {
  Outcome o = RunAttack(Route::kContextProxy);
  Print("context proxyServer", o);
  ExpectNothingReachesTheVictim(o);
  // Every refusal came through the context's own channel, so it can be told apart.
  EXPECT_EQ(o.channel_refused, o.refusals.size());
}

}  // namespace
}  // namespace pagereel::serve::egress
