// egress_bench: what the egress proxy costs, measured against going direct in the same run.
//
//   egress_bench [captures] [raw_requests]
//
// 1. Raw: `raw_requests` sequential GETs to a loopback server, each on a new connection
//    (as the browser's requests through the proxy are), direct and through the proxy.
// 2. Captures: two browsers, one direct and one behind the proxy, take turns capturing
//    (fresh context, navigate, load event, PNG screenshot, close) a page with 30
//    subresources (15 images, 10 stylesheets, 5 scripts) served with no-store, so each
//    capture fetches them all. Prints the median and p90 of each and their ratio.
// Run it alone: it measures wall time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "browser/browser.h"
#include "serve/egress/proxy.h"
#include "testing/http_server.h"
#include "testing/tab.h"

namespace egress = pagereel::serve::egress;
using pagereel::testing::HttpServer;
using pagereel::testing::Tab;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

std::string Page() {
  std::string html = "<!doctype html><html><head>";
  for (int i = 0; i < 10; ++i) html += "<link rel=stylesheet href=/s" + std::to_string(i) + ".css>";
  for (int i = 0; i < 5; ++i) html += "<script src=/j" + std::to_string(i) + ".js></script>";
  html += "</head><body><h1>thirty subresources</h1>";
  for (int i = 0; i < 15; ++i) html += "<img src=/i" + std::to_string(i) + ".svg width=40>";
  return html + "</body></html>";
}

HttpServer::Response Serve(const HttpServer::Request& r) {
  std::vector<std::pair<std::string, std::string>> no_store = {{"Cache-Control", "no-store"}};
  if (r.target == "/page.html") return {200, "text/html", Page(), no_store};
  if (r.target.ends_with(".css")) return {200, "text/css", "h1 { color: #333; }", no_store};
  if (r.target.ends_with(".js")) return {200, "text/javascript", "window.x = 1;", no_store};
  if (r.target.ends_with(".svg")) {
    return {200, "image/svg+xml",
            "<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'><rect width='8' "
            "height='8' fill='teal'/></svg>",
            no_store};
  }
  return {404, "text/plain", "", no_store};
}

// One GET on a new connection; `via_proxy` sends the absolute form to the proxy.
void RawGet(uint16_t connect_port, const std::string& request) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  s.connect({boost::asio::ip::address_v4::loopback(), connect_port});
  s.set_option(boost::asio::ip::tcp::no_delay(true));
  boost::asio::write(s, boost::asio::buffer(request));
  boost::system::error_code ec;
  std::string got;
  char buf[4096];
  while (!ec) {
    size_t n = s.read_some(boost::asio::buffer(buf), ec);
    got.append(buf, n);
  }
  if (got.find(" 200 ") == std::string::npos) {
    std::cerr << "unexpected answer: " << got.substr(0, 200) << "\n";
    std::exit(1);
  }
}

pagereel::Result<double> Capture(pagereel::browser::Browser& browser, const std::string& url) {
  auto start = Clock::now();
  PR_ASSIGN_OR_RETURN(auto tab, Tab::Open(browser));
  PR_RETURN_IF_ERROR(tab->Call("Page.enable").status());
  // The page's script sets window.loaded on the load event; poll it (no event plumbing).
  PR_RETURN_IF_ERROR(tab->Navigate(url).status());
  PR_ASSIGN_OR_RETURN(json loaded,
                      tab->Evaluate("new Promise(r => document.readyState === 'complete' ? r(1) "
                                    ": addEventListener('load', () => r(1)))"));
  PR_ASSIGN_OR_RETURN(json shot, tab->Call("Page.captureScreenshot", {{"format", "png"}}));
  if (!shot.contains("data")) return pagereel::InternalError("no screenshot");
  tab.reset();
  return Ms(Clock::now() - start);
}

}  // namespace

int main(int argc, char** argv) {
  int captures = argc > 1 ? std::atoi(argv[1]) : 40;
  int raw = argc > 2 ? std::atoi(argv[2]) : 2000;
  HttpServer site(Serve);
  std::string origin = site.Origin();
  auto policy = egress::Policy::Parse({origin});
  auto proxy = egress::Proxy::Start(*policy, nullptr);
  if (!policy.ok() || !proxy.ok()) {
    std::cerr << "could not start the proxy\n";
    return 1;
  }

  // 1. Raw requests, alternating direct and proxied in blocks of 100.
  std::string direct_req = "GET /s0.css HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  std::string proxied_req = "GET " + origin + "/s0.css HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            "Proxy-Connection: keep-alive\r\n\r\n";
  Clock::duration direct_time{}, proxied_time{};
  for (int done = 0; done < raw; done += 100) {
    auto t0 = Clock::now();
    for (int i = 0; i < 100; ++i) RawGet(site.port(), direct_req);
    auto t1 = Clock::now();
    for (int i = 0; i < 100; ++i) RawGet((*proxy)->port(), proxied_req);
    auto t2 = Clock::now();
    direct_time += t1 - t0;
    proxied_time += t2 - t1;
  }
  double direct_us = Ms(direct_time) * 1000.0 / raw;
  double proxied_us = Ms(proxied_time) * 1000.0 / raw;
  std::printf("raw GET, new connection each, %d of each: direct %.0f us, proxied %.0f us "
              "(+%.0f us per request)\n",
              raw, direct_us, proxied_us, proxied_us - direct_us);

  // 2. Captures.
  pagereel::browser::LaunchOptions direct_options;
  direct_options.frame_control = pagereel::browser::FrameControl::kPerTarget;
  pagereel::browser::LaunchOptions proxied_options = direct_options;
  proxied_options.extra_args = (*proxy)->BrowserArgs();
  auto direct = pagereel::browser::Browser::Launch(direct_options);
  auto proxied = pagereel::browser::Browser::Launch(proxied_options);
  if (!direct.ok() || !proxied.ok()) {
    std::cerr << "could not launch the browsers\n";
    return 1;
  }
  std::string url = origin + "/page.html";
  std::vector<double> d, p;
  for (int i = 0; i < captures + 3; ++i) {
    auto a = Capture(**direct, url);
    auto b = Capture(**proxied, url);
    if (!a.ok() || !b.ok()) {
      std::cerr << "capture failed: " << (a.ok() ? b.status() : a.status()).ToString() << "\n";
      return 1;
    }
    if (i < 3) continue;  // Warm-up.
    d.push_back(*a);
    p.push_back(*b);
  }
  double dm = Quantile(d, 0.5), pm = Quantile(p, 0.5);
  std::printf("captures of a page with 30 subresources, %d of each (after 3 warm-up):\n"
              "  direct  median %.1f ms, p90 %.1f ms\n  proxied median %.1f ms, p90 %.1f ms\n"
              "  ratio of medians %.3f\n",
              captures, dm, Quantile(d, 0.9), pm, Quantile(p, 0.9), pm / dm);
  egress::ProxyStats s = (*proxy)->stats();
  std::printf("proxy: %llu connections, %llu allowed, %llu refused, %llu failed\n",
              static_cast<unsigned long long>(s.connections),
              static_cast<unsigned long long>(s.allowed),
              static_cast<unsigned long long>(s.refused),
              static_cast<unsigned long long>(s.failed));
  return 0;
}
