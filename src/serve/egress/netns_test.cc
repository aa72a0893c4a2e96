// Private, link-local, CGNAT and metadata destinations, asked for by a real page: each must
// reach the proxy (and be refused there), none may go direct. Measured with Chromium 156:
// with --proxy-server alone, 169.254.0.0/16 (so 169.254.169.254) and fe80::/10 go direct,
// around the proxy, like loopback; "<-loopback>" in the bypass list sends them to it.
//
// No packet may go to these addresses, so the test runs itself again inside a network
// namespace of its own (unshare -rn) that has nothing but loopback: a direct attempt by the
// browser fails there with "network unreachable" before any packet exists, and shows up as
// a missing refusal. Without user namespaces the test is skipped.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "browser/browser.h"
#include "serve/egress/proxy.h"
#include "testing/http_server.h"
#include "testing/tab.h"

namespace pagereel::serve::egress {
namespace {

using json = nlohmann::json;
using pagereel::testing::HttpServer;
using pagereel::testing::Tab;

constexpr const char* kInsideEnv = "PAGEREEL_EGRESS_INSIDE_NETNS";

// Each destination and the request line the proxy must see for it.
struct Destination {
  const char* url;
  const char* at_proxy;
};
const std::vector<Destination> kDestinations = {
    {"http://169.254.169.254/latest/meta-data/", "GET http://169.254.169.254/latest/meta-data/"},
    {"http://169.254.170.2/v2/credentials", "GET http://169.254.170.2/v2/credentials"},
    {"http://169.254.1.1/", "GET http://169.254.1.1/"},
    {"http://[fe80::1]/", "GET http://[fe80::1]/"},
    {"http://[fd00:ec2::254]/latest/", "GET http://[fd00:ec2::254]/latest/"},
    {"http://10.0.0.1/", "GET http://10.0.0.1/"},
    {"http://172.16.0.1/", "GET http://172.16.0.1/"},
    {"http://192.168.1.1/", "GET http://192.168.1.1/"},
    {"http://100.64.0.1/", "GET http://100.64.0.1/"},
    {"http://100.100.100.200/", "GET http://100.100.100.200/"},
    {"http://[fc00::1]/", "GET http://[fc00::1]/"},
    {"https://10.0.0.2/", "CONNECT 10.0.0.2:443"},
    {"ws://10.0.0.3/", "CONNECT 10.0.0.3:80"},
};

// /proc/net/dev lists the interfaces of the calling process's network namespace
// (/sys/class/net would show the namespace that mounted sysfs).
bool OnlyLoopbackExists() {
  std::ifstream dev("/proc/net/dev");
  std::string line;
  int interfaces = 0;
  for (int n = 0; std::getline(dev, line); ++n) {
    if (n < 2) continue;  // Two header lines.
    std::string name = line.substr(0, line.find(':'));
    name.erase(0, name.find_first_not_of(' '));
    if (name != "lo") return false;
    ++interfaces;
  }
  return interfaces == 1;
}

TEST(PrivateDestinationsTest, EveryOneGoesToTheProxyNoneDirect) {
  if (std::getenv(kInsideEnv) == nullptr) {
    if (std::system("unshare -rn true >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "no user and network namespaces here (unshare -rn failed)";
    }
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string command = "unshare -rn sh -c 'ip link set lo up && " + std::string(kInsideEnv) +
                          "=1 exec \"" + self +
                          "\" --gtest_filter=PrivateDestinationsTest.EveryOneGoesToTheProxyNoneDirect'";
    EXPECT_EQ(std::system(command.c_str()), 0) << "the run inside the namespace failed";
    return;
  }
  // Never run the attack where these addresses could be reached.
  ASSERT_TRUE(OnlyLoopbackExists()) << "not inside a loopback-only network namespace";

  std::string script = "const urls = " + [] {
    json urls = json::array();
    for (const Destination& d : kDestinations) urls.push_back(d.url);
    return urls.dump();
  }() + R"JS(;
window.done = Promise.all(urls.map(u => new Promise(r => {
  if (u.startsWith('ws')) {
    const w = new WebSocket(u); w.onerror = w.onopen = () => r(); setTimeout(r, 3000); return;
  }
  fetch(u, {mode: 'no-cors'}).then(r, r);
  const i = new Image(); i.src = u + '?img'; document.body.appendChild(i);
}))).then(() => new Promise(r => setTimeout(r, 300)));
)JS";
  HttpServer site([&](const HttpServer::Request&) {
    return HttpServer::Response{200, "text/html", "<body><script>" + script + "</script></body>",
                                {}};
  });
  // Twice: the proxy on the browser's command line, and a channel as a context's proxy.
  for (bool per_context : {false, true}) {
    SCOPED_TRACE(per_context ? "context proxyServer" : "browser --proxy-server");
    std::mutex mu;
    std::set<std::string> refused;
    Result<Policy> policy = Policy::Parse({site.Origin()});
    ASSERT_TRUE(policy.ok());
    Result<std::unique_ptr<Proxy>> proxy = Proxy::Start(*policy, [&](const Refusal& r) {
      std::lock_guard lock(mu);
      refused.insert(r.request);
    });
    ASSERT_TRUE(proxy.ok());
    std::unique_ptr<ProxyChannel> channel;
    browser::LaunchOptions options;
    options.frame_control = browser::FrameControl::kPerTarget;
    browser::ContextOptions context;
    if (per_context) {
      channel = std::move((*proxy)->OpenChannel(nullptr)).value();
      context.proxy_server = channel->Url();
      context.proxy_bypass_list = "<-loopback>";
      options.extra_args = {"--force-webrtc-ip-handling-policy=disable_non_proxied_udp"};
    } else {
      options.extra_args = (*proxy)->BrowserArgs();
    }
    Result<std::unique_ptr<browser::Browser>> browser = browser::Browser::Launch(options);
    ASSERT_TRUE(browser.ok()) << browser.status().ToString();
    {
      Result<std::unique_ptr<Tab>> tab = Tab::Open(**browser, context);
      ASSERT_TRUE(tab.ok()) << tab.status().ToString();
      ASSERT_TRUE((*tab)->Navigate(site.Origin() + "/").ok());
      Result<json> done = (*tab)->Evaluate(
          "new Promise(r => { const t = () => window.done ? r(window.done) : setTimeout(t, 20); "
          "t(); })");
      EXPECT_TRUE(done.ok()) << done.status().ToString();
      // Top-level navigation to the metadata address, too.
      (*tab)->Navigate("http://169.254.169.254/latest/user-data").status().IgnoreError();
    }
    browser->reset();
    channel.reset();
    std::lock_guard lock(mu);
    for (const Destination& d : kDestinations) {
      EXPECT_TRUE(refused.count(d.at_proxy)) << d.url << " did not come to the proxy";
    }
    EXPECT_TRUE(refused.count("GET http://169.254.169.254/latest/user-data"));
  }
}

}  // namespace
}  // namespace pagereel::serve::egress
