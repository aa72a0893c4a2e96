// What a page can reach under file:, with the real browser behind the egress proxy.
//
// A secret text file and a PNG lie in a scratch folder. Documents of four kinds try to read
// or show them (fetch, XHR, img, iframe, top-level navigation): a page served over http,
// a data: URL, about:blank filled with Page.setDocumentContent (how an HTML body may be
// shown), and a page loaded from file: itself. The secret is then looked for in every
// frame's DOM (DOM.getDocument pierces frames) and in what the script could read.
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

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

constexpr const char* kSecret = "pagereel-secret-7f3a";

// A 1x1 PNG.
constexpr unsigned char kPng[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
    0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
    0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60,
    0x60, 0x60, 0xf8, 0x0f, 0x00, 0x01, 0x04, 0x01, 0x00, 0x5f, 0xe5, 0xc3, 0x4b, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

class FileSchemeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pagereel-egress-file-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "secret.txt") << kSecret << "\n";
    std::ofstream(dir_ / "dot.png", std::ios::binary)
        .write(reinterpret_cast<const char*>(kPng), sizeof kPng);
    std::ofstream(dir_ / "page.html") << Html();
    site_ = std::make_unique<HttpServer>([this](const HttpServer::Request& r) {
      if (r.target == "/redirect-to-file") {
        return HttpServer::Response{302, "text/plain", "", {{"Location", FileUrl("secret.txt")}}};
      }
      return HttpServer::Response{200, "text/html", Html(), {}};
    });
    Result<Policy> policy = Policy::Parse({site_->Origin()});
    ASSERT_TRUE(policy.ok());
    Result<std::unique_ptr<Proxy>> proxy = Proxy::Start(*policy, nullptr);
    ASSERT_TRUE(proxy.ok());
    proxy_ = std::move(proxy).value();
    browser::LaunchOptions options;
    options.frame_control = browser::FrameControl::kPerTarget;
    options.extra_args = proxy_->BrowserArgs();
    Result<std::unique_ptr<browser::Browser>> b = browser::Browser::Launch(options);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    browser_ = std::move(b).value();
  }

  void TearDown() override {
    browser_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string FileUrl(const char* name) const { return "file://" + (dir_ / name).string(); }

  // The document every kind of page is made of: it tries each way and records what it got.
  std::string Html() const {
    std::string script = R"JS(
const SECRET = 'SECRET_URL', PNG = 'PNG_URL';
const settle = (p, ms) => Promise.race([
  p.then(v => 'ok: ' + String(v).slice(0, 60), e => 'error: ' + String(e && e.message || e)),
  new Promise(r => setTimeout(() => r('timeout'), ms || 2000))]);
window.fileDone = (async () => {
  const r = {};
  r.fetch = await settle(fetch(SECRET).then(x => x.text()));
  r.xhr = await settle(new Promise((res, rej) => {
    const x = new XMLHttpRequest(); x.open('GET', SECRET);
    x.onload = () => res(x.responseText); x.onerror = () => rej(new Error('xhr error')); x.send();
  }));
  r.img = await settle(new Promise((res, rej) => {
    const i = new Image(); i.onload = () => res(i.naturalWidth + 'x' + i.naturalHeight);
    i.onerror = () => rej(new Error('img error')); i.src = PNG; document.body.appendChild(i);
  }));
  const f = document.createElement('iframe'); f.src = SECRET; document.body.appendChild(f);
  await new Promise(res => setTimeout(res, 700));
  try { r.iframe_script_read = f.contentDocument ? f.contentDocument.body.innerText : 'no access'; }
  catch (e) { r.iframe_script_read = 'error: ' + e.message; }
  return r;
})();
)JS";
    auto replace = [&](const std::string& from, const std::string& to) {
      for (size_t at; (at = script.find(from)) != std::string::npos;) script.replace(at, from.size(), to);
    };
    replace("SECRET_URL", FileUrl("secret.txt"));
    replace("PNG_URL", FileUrl("dot.png"));
    return "<!doctype html><html><body><script>" + script + "</script></body></html>";
  }

  struct Seen {
    json script;           // What the page's script got.
    bool secret_in_dom;    // The secret is shown in some frame (and so in a screenshot).
    std::string frames;    // Every frame's URL.
    std::string location;  // After trying a top-level navigation to the secret.
  };

  Seen Run(Tab& tab) {
    Seen seen;
    Result<json> script = tab.Evaluate(
        "new Promise(r => { const t = () => window.fileDone ? r(window.fileDone) : "
        "setTimeout(t, 20); t(); })");
    EXPECT_TRUE(script.ok()) << script.status().ToString();
    if (script.ok()) seen.script = *script;
    Result<json> dom = tab.Call("DOM.getDocument", {{"depth", -1}, {"pierce", true}});
    EXPECT_TRUE(dom.ok()) << dom.status().ToString();
    seen.secret_in_dom = dom.ok() && dom->dump().find(kSecret) != std::string::npos;
    Result<json> tree = tab.Call("Page.getFrameTree");
    if (tree.ok()) {
      std::function<void(const json&)> walk = [&](const json& node) {
        seen.frames += " " + node["frame"].value("url", std::string()).substr(0, 60);
        for (const json& child : node.value("childFrames", json::array())) walk(child);
      };
      walk((*tree)["frameTree"]);
    }
    tab.Evaluate("location.href = '" + FileUrl("secret.txt") + "'; 0").status().IgnoreError();
    tab.Evaluate("new Promise(r => setTimeout(r, 500))").status().IgnoreError();
    Result<json> where = tab.Evaluate("location.href");
    seen.location = where.ok() ? where->dump() : "(navigated: " + where.status().ToString() + ")";
    return seen;
  }

  Result<std::unique_ptr<Tab>> NewTab() { return Tab::Open(*browser_); }

  void Print(const char* kind, const Seen& s) {
    std::cout << kind << ": script " << s.script.dump() << "\n  secret in DOM: " << s.secret_in_dom
              << "\n  frames:" << s.frames
              << "\n  after location=file: " << s.location.substr(0, 60) << "\n";
  }

  void ExpectNothingLocal(const Seen& s) {
    EXPECT_FALSE(s.secret_in_dom);
    EXPECT_TRUE(s.script.value("fetch", "").starts_with("error")) << s.script.dump();
    EXPECT_TRUE(s.script.value("xhr", "").starts_with("error")) << s.script.dump();
    EXPECT_TRUE(s.script.value("img", "").starts_with("error")) << s.script.dump();
    EXPECT_EQ(s.location.find("file:"), std::string::npos) << s.location;
  }

  std::filesystem::path dir_;
  std::unique_ptr<HttpServer> site_;
  std::unique_ptr<Proxy> proxy_;
  std::unique_ptr<browser::Browser> browser_;
};

TEST_F(FileSchemeTest, AnHttpPageReachesNoLocalFile) {
  auto tab = NewTab();
  ASSERT_TRUE(tab.ok()) << tab.status().ToString();
  ASSERT_TRUE((*tab)->Navigate(site_->Origin() + "/").ok());
  Seen s = Run(**tab);
  Print("http page", s);
  ExpectNothingLocal(s);
  // A redirect from http to file: is not followed either.
  Result<json> nav = (*tab)->Navigate(site_->Origin() + "/redirect-to-file");
  ASSERT_TRUE(nav.ok());
  std::cout << "  redirect to file: " << nav->dump() << "\n";
  EXPECT_EQ(nav->value("errorText", ""), "net::ERR_UNSAFE_REDIRECT");
  Result<json> dom = (*tab)->Call("DOM.getDocument", {{"depth", -1}, {"pierce", true}});
  ASSERT_TRUE(dom.ok());
  EXPECT_EQ(dom->dump().find(kSecret), std::string::npos);
}

TEST_F(FileSchemeTest, ADataUrlDocumentReachesNoLocalFile) {
  auto tab = NewTab();
  ASSERT_TRUE(tab.ok()) << tab.status().ToString();
  std::string html = Html();
  std::string encoded;
  for (unsigned char c : html) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%%%02X", c);
    encoded += std::isalnum(c) ? std::string(1, static_cast<char>(c)) : std::string(buf);
  }
  ASSERT_TRUE((*tab)->Navigate("data:text/html," + encoded).ok());
  Seen s = Run(**tab);
  Print("data: document", s);
  ExpectNothingLocal(s);
}

TEST_F(FileSchemeTest, AboutBlankWithSetDocumentContentReachesNoLocalFile) {
  auto tab = NewTab();
  ASSERT_TRUE(tab.ok()) << tab.status().ToString();
  Result<json> tree = (*tab)->Call("Page.getFrameTree");
  ASSERT_TRUE(tree.ok());
  std::string frame = (*tree)["frameTree"]["frame"]["id"];
  ASSERT_TRUE((*tab)->Call("Page.setDocumentContent", {{"frameId", frame}, {"html", Html()}}).ok());
  Seen s = Run(**tab);
  Print("about:blank + setDocumentContent", s);
  ExpectNothingLocal(s);
}

// What the service must never do: load a page from file: (a url=file:... or an HTML body
// written to disk). Such a page shows other local files in frames, and so in screenshots.
TEST_F(FileSchemeTest, AFilePageShowsLocalFilesWhichIsWhyFileUrlsAreRefused) {
  auto tab = NewTab();
  ASSERT_TRUE(tab.ok()) << tab.status().ToString();
  ASSERT_TRUE((*tab)->Navigate(FileUrl("page.html")).ok());
  Seen s = Run(**tab);
  Print("file: page", s);
  EXPECT_TRUE(s.secret_in_dom) << "a file: page no longer shows local files in frames";
  EXPECT_FALSE(CheckUrl(Policy(), FileUrl("page.html")).ok());
}

}  // namespace
}  // namespace pagereel::serve::egress
