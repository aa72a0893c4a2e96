// The AMCP server against a real show: the engine with a real chrome-headless-shell, a
// template page that records every call made of it, and a client of our own speaking AMCP
// over 127.0.0.1 as CasparCG clients and SPX do. Asserted on the page (what it was called
// with) and on the program picture (what went on air). One show per test process.
#include "live/amcp_server.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "live/control_server.h"
#include "testing/amcp_client.h"
#include "testing/http_client.h"

namespace pagereel::live {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using testing::AmcpClient;
using std::chrono::milliseconds;

constexpr char kToken[] = "amcp-s3cret";

// The template: records its calls in window.calls; a box that play() turns green, stop()
// red and setColor() any colour. No remove(): CG REMOVE then clears the layer.
constexpr char kRecorder[] = R"html(<!doctype html><body style="margin:0;background:transparent">
<div id=box style="position:absolute;left:100px;top:100px;width:200px;height:100px;background:rgb(200,0,0)"></div>
<script>
window.calls = [];
function update(d) { calls.push(['update', d]); }
function play() { calls.push(['play']); box.style.background = 'rgb(0,200,0)'; }
function stop() { calls.push(['stop']); box.style.background = 'rgb(200,0,0)'; }
function next() { calls.push(['next']); }
function setColor(c, n) { calls.push(['setColor', c, n]); box.style.background = c; return 'now ' + c; }
</script></body>)html";

bool WaitFor(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(40));
  }
  return done();
}

class AmcpServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("pagereel-amcp-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "templates");
    std::ofstream(dir_ / "templates" / "recorder.html") << kRecorder;
    ShowSpec show;
    show.width = 640;
    show.height = 360;
    show.fps = Rational{25, 1};
    show.sources.push_back(SourceSpec{
        .id = "backdrop",
        .url = "data:text/html,<body style='margin:0;background:rgb(0,0,200)'></body>"});
    show.sources.push_back(SourceSpec{
        .id = "gfx", .url = "data:text/html,<body></body>", .transparent = true});
    OutputSpec out;
    out.id = "recording";
    out.stream.container = encode::Container::kMatroska;
    out.stream.sink = {encode::Sink::Kind::kGrowingFile, (dir_ / "program.mkv").string(), nullptr};
    show.outputs.push_back(out);
    Result<std::unique_ptr<Engine>> engine = Engine::Start(show);
    if (!engine.ok()) {
      setup_error_ = engine.status().ToString();
      return;
    }
    engine_ = std::move(engine).value();
    AmcpOptions options = Options();
    Result<std::unique_ptr<AmcpServer>> server = AmcpServer::Listen(options);
    options.listen = "127.0.0.1:0";
    options.token = kToken;
    Result<std::unique_ptr<AmcpServer>> locked = AmcpServer::Listen(options);
    if (!server.ok() || !locked.ok()) {
      setup_error_ = (server.ok() ? locked : server).status().ToString();
      return;
    }
    server_ = std::move(server).value();
    locked_ = std::move(locked).value();
    server_->Serve(*engine_);
    locked_->Serve(*engine_);
    runner_ = std::thread([] { run_status_ = engine_->Run(0, &stop_); });
    WaitFor([] { return engine_->Program() && engine_->SourcePicture("backdrop"); },
            milliseconds(15'000));
  }

  static AmcpOptions Options() {
    AmcpOptions options;
    options.listen = "127.0.0.1:0";
    options.layers = {{20, "gfx"}};
    options.templates = (dir_ / "templates").string();
    options.width = 640;
    options.height = 360;
    options.fps = 25;
    options.max_connections = 8;
    return options;
  }

  static void TearDownTestSuite() {
    if (server_) server_->Stop();
    if (locked_) locked_->Stop();
    stop_ = true;
    if (runner_.joinable()) runner_.join();
    if (!run_status_.ok()) ADD_FAILURE() << "the show: " << run_status_.ToString();
    server_.reset();
    locked_.reset();
    engine_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  void SetUp() override { ASSERT_NE(server_, nullptr) << "the show did not start: " << setup_error_; }

  // The program's pixel in the middle of the template's box.
  static std::array<int, 3> BoxPixel() {
    std::shared_ptr<const Picture> program = engine_->Program();
    if (!program) return {-1, -1, -1};
    const uint8_t* p = program->Row(150) + 200 * 4;
    return {p[0], p[1], p[2]};
  }
  static bool BoxIs(int r, int g, int b) {
    return WaitFor(
        [&] {
          const std::array<int, 3> p = BoxPixel();
          return std::abs(p[0] - r) < 40 && std::abs(p[1] - g) < 40 && std::abs(p[2] - b) < 40;
        },
        milliseconds(10'000));
  }
  // What the template was called with, in order.
  static json Calls() {
    Result<std::string> calls = engine_->CallSource("gfx", "JSON.stringify(window.calls||null)");
    if (!calls.ok()) return nullptr;
    const json text = json::parse(*calls, nullptr, false);
    return text.is_string() ? json::parse(text.get<std::string>(), nullptr, false) : nullptr;
  }
  static bool Visible(const std::string& id) {
    for (const SourceStatus& s : engine_->CurrentStatus().sources) {
      if (s.id == id) return s.visible;
    }
    return false;
  }

  static inline fs::path dir_;
  static inline std::unique_ptr<Engine> engine_;
  static inline std::unique_ptr<AmcpServer> server_;
  static inline std::unique_ptr<AmcpServer> locked_;
  static inline std::thread runner_;
  static inline std::atomic<bool> stop_{false};
  static inline Status run_status_;
  static inline std::string setup_error_;
};

TEST_F(AmcpServerTest, AControllerRunsATemplateAsOnCasparCG) {
  AmcpClient client(server_->port());
  ASSERT_TRUE(client.connected());
  // What casparcg-connection asks first.
  EXPECT_EQ(client.Command("VERSION"), "201 VERSION OK\n2.3.0 pagereel");
  EXPECT_EQ(client.Command("INFO"), "200 INFO OK\n1 360p2500 PLAYING");

  // CasparCG's client: XML template data, play on load.
  const std::string xml =
      R"(<templateData><componentData id="f0"><data id="text" value="Ada &amp; Grace"/></componentData></templateData>)";
  std::string escaped;
  for (char c : xml) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
  EXPECT_EQ(client.Command("CG 1-20 ADD 1 \"recorder\" 1 \"" + escaped + "\""), "202 CG OK");
  EXPECT_EQ(Calls(), json::array({json::array({"update", xml}), json::array({"play"})}));
  EXPECT_TRUE(BoxIs(0, 200, 0)) << "play() did not reach the program";
  EXPECT_TRUE(Visible("gfx"));

  // SPX: JSON data as one string, with a request id as casparcg-connection sends them.
  EXPECT_EQ(client.Command(R"(REQ u1 CG 1-20 UPDATE 1 "{\"f0\":\"Lin\",\"f1\":\"5 \$\"}")"),
            "RES u1 202 CG OK");
  EXPECT_EQ(Calls().back(), json::array({"update", R"({"f0":"Lin","f1":"5 $"})"}));
  EXPECT_EQ(client.Command("CG 1-20 NEXT 0"), "202 CG OK");
  EXPECT_EQ(Calls().back(), json::array({"next"}));
  EXPECT_EQ(client.Command("CG 1-20 STOP 1"), "202 CG OK");
  EXPECT_EQ(Calls().back(), json::array({"stop"}));
  EXPECT_TRUE(BoxIs(200, 0, 0));
  EXPECT_EQ(client.Command(R"x(CG 1-20 INVOKE 1 "setColor(\"rgb(0,0,0)\", 2)")x"),
            "201 CG OK\nnow rgb(0,0,0)");
  EXPECT_EQ(Calls().back(), json::array({"setColor", "rgb(0,0,0)", 2}));
  EXPECT_TRUE(BoxIs(0, 0, 0));
  EXPECT_EQ(client.Command("CG 1-20 PLAY 1"), "202 CG OK");
  EXPECT_TRUE(BoxIs(0, 200, 0));

  // A layer: stop takes it off air, play puts it back (with a mix), clear takes every
  // mapped layer off, and leaves the sources no layer names alone.
  EXPECT_EQ(client.Command("STOP 1-20"), "202 STOP OK");
  EXPECT_FALSE(Visible("gfx"));
  EXPECT_TRUE(BoxIs(0, 0, 200)) << "the backdrop shows where the template was";
  EXPECT_EQ(client.Command("PLAY 1-20 MIX 5"), "202 PLAY OK");
  EXPECT_TRUE(BoxIs(0, 200, 0));
  EXPECT_EQ(client.Command("CLEAR 1"), "202 CLEAR OK");
  EXPECT_FALSE(Visible("gfx"));
  EXPECT_TRUE(Visible("backdrop"));
  EXPECT_EQ(client.Command("PLAY 1-20"), "202 PLAY OK");
  // CG REMOVE on a template without remove(): the layer is cleared, as CasparCG does.
  EXPECT_EQ(client.Command("CG 1-20 REMOVE 1"), "202 CG OK");
  EXPECT_FALSE(Visible("gfx"));

  // INFO of the channel and of the layer.
  const std::string info = client.Command("INFO 1-20");
  EXPECT_TRUE(info.starts_with("201 INFO OK\n<layer index=\"20\"><source>gfx</source>")) << info;
  EXPECT_NE(info.find("recorder.html"), std::string::npos) << info;
  EXPECT_NE(client.Command("TLS").find("\"recorder\""), std::string::npos);
  EXPECT_EQ(client.Command("PING abc"), "PONG abc");
  client.Send("BYE\r\n");
  EXPECT_TRUE(client.Closed());
}

TEST_F(AmcpServerTest, RefusalsAnswerWithAmcpCodesAndChangeNothing) {
  AmcpClient client(server_->port());
  ASSERT_EQ(client.Command("CG 1-20 ADD 1 recorder 0"), "202 CG OK");
  const json before = Calls();
  ASSERT_EQ(before, json::array({json::array({"update", ""})}));
  EXPECT_EQ(client.Command("FLY 1-20"), "400 ERROR\nFLY 1-20");
  EXPECT_EQ(client.Command("CG 2-20 PLAY 1"), "401 CG PLAY ERROR");
  EXPECT_EQ(client.Command("CG 1-20 ADD 1 \"recorder\""), "402 CG ADD ERROR");
  EXPECT_EQ(client.Command("CG 1-30 PLAY 1"), "403 CG PLAY FAILED");
  EXPECT_EQ(client.Command("CG 1-20 INVOKE 1 \"alert(1);play()\""), "403 CG INVOKE FAILED");
  EXPECT_EQ(client.Command("CG 1-20 INVOKE 1 \"missing()\""), "403 CG INVOKE FAILED");
  EXPECT_EQ(client.Command("CG 1-20 ADD 1 \"../amcp\" 1"), "403 CG ADD FAILED");
  EXPECT_EQ(client.Command("CG 1-20 ADD 1 \"nowhere\" 1"), "404 CG ADD FAILED");
  EXPECT_EQ(client.Command("CG 1-20 UPDATE 1 stored_data_set"), "404 CG UPDATE FAILED");
  EXPECT_EQ(client.Command("PLAY 1-20 AMB"), "404 PLAY FAILED");
  EXPECT_EQ(client.Command("REQ 9 CG 1-20 PLAY x"), "RES 9 403 CG PLAY FAILED");
  EXPECT_EQ(client.Command("STOP 1-30"), "202 STOP OK");  // An empty layer.
  EXPECT_EQ(Calls(), before) << "a refused command reached the template";
  EXPECT_TRUE(Visible("gfx"));
  // Still answering.
  EXPECT_EQ(client.Command("VERSION"), "201 VERSION OK\n2.3.0 pagereel");
}

TEST_F(AmcpServerTest, WithATokenCommandsWaitForTheLock) {
  ASSERT_EQ(AmcpClient(server_->port()).Command("PLAY 1-20"), "202 PLAY OK");
  AmcpClient client(locked_->port());
  EXPECT_EQ(client.Command("INFO"), "200 INFO OK\n1 360p2500 PLAYING");  // Queries are open.
  EXPECT_EQ(client.Command("CG 1-20 PLAY 1"), "503 CG PLAY FAILED");
  EXPECT_EQ(client.Command("STOP 1-20"), "503 STOP FAILED");
  EXPECT_TRUE(Visible("gfx"));
  EXPECT_EQ(client.Command("LOCK 1 ACQUIRE wrong"), "503 LOCK ACQUIRE FAILED");
  EXPECT_EQ(client.Command(std::string("LOCK 1 ACQUIRE ") + kToken), "202 LOCK ACQUIRE OK");
  EXPECT_EQ(client.Command("STOP 1-20"), "202 STOP OK");
  EXPECT_FALSE(Visible("gfx"));
  EXPECT_EQ(client.Command("PLAY 1-20"), "202 PLAY OK");
  EXPECT_EQ(client.Command("LOCK 1 RELEASE"), "202 LOCK RELEASE OK");
  EXPECT_EQ(client.Command("STOP 1-20"), "503 STOP FAILED");
  // Three wrong secrets and the connection is closed.
  AmcpClient guesser(locked_->port());
  EXPECT_EQ(guesser.Command("LOCK 1 ACQUIRE a"), "503 LOCK ACQUIRE FAILED");
  EXPECT_EQ(guesser.Command("LOCK 1 ACQUIRE b"), "503 LOCK ACQUIRE FAILED");
  EXPECT_EQ(guesser.Command("LOCK 1 ACQUIRE c"), "503 LOCK ACQUIRE FAILED");
  EXPECT_TRUE(guesser.Closed());
  EXPECT_TRUE(Visible("gfx"));
}

// Hostile and broken clients: long lines, bytes that are not UTF-8, a web page's POST, many
// connections, random bytes. The server stays up, bounded, and nothing they sent runs.
TEST_F(AmcpServerTest, HostileClientsAreBoundedAndRunNothing) {
  AmcpClient setup(server_->port());
  ASSERT_EQ(setup.Command("CG 1-20 ADD 1 recorder 0"), "202 CG OK");
  const json before = Calls();

  {  // A line over 256 KiB: answered and closed.
    AmcpClient client(server_->port());
    client.Send(std::string(300 * 1024, 'A'));
    EXPECT_EQ(client.Reply(), "400 ERROR\nthe line is longer than 256 KiB");
    EXPECT_TRUE(client.Closed());
  }
  {  // Not UTF-8: 400, the line echoed printable; the connection goes on.
    AmcpClient client(server_->port());
    EXPECT_EQ(client.Command("CG 1-20 PLAY \xff\xfe"), "400 ERROR\nCG 1-20 PLAY ??");
    EXPECT_EQ(client.Command("VERSION"), "201 VERSION OK\n2.3.0 pagereel");
  }
  {  // A web page's POST whose body is AMCP: closed before the body is read as commands.
    AmcpClient client(server_->port());
    client.Send(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\r\n"
        "CG 1-20 PLAY 1\r\nCLEAR 1\r\n");
    EXPECT_TRUE(client.Closed());
  }
  {  // Random bytes, in pieces.
    std::mt19937 random(19);
    for (int round = 0; round < 20; ++round) {
      AmcpClient client(server_->port());
      std::string bytes(1 + random() % 4000, '\0');
      for (char& c : bytes) c = static_cast<char>(random() % 256);
      for (size_t at = 0; at < bytes.size(); at += 97) client.Send(bytes.substr(at, 97));
    }
  }
  {  // More connections than allowed: the extra ones are closed, the first still answers.
    std::vector<std::unique_ptr<AmcpClient>> many;
    for (int i = 0; i < 12; ++i) many.push_back(std::make_unique<AmcpClient>(server_->port()));
    int closed = 0;
    AmcpClient* answering = nullptr;
    for (auto& c : many) {
      c->Send("VERSION\r\n");
      if (c->Reply() == "(closed)") {
        ++closed;
      } else if (answering == nullptr) {
        answering = c.get();
      }
    }
    EXPECT_GE(closed, 5) << "8 connections are allowed, setup's among them";
    ASSERT_NE(answering, nullptr);
    EXPECT_EQ(answering->Command("VERSION"), "201 VERSION OK\n2.3.0 pagereel");
  }
  EXPECT_EQ(setup.Command("INFO"), "200 INFO OK\n1 360p2500 PLAYING");
  json after = Calls();
  EXPECT_EQ(after, before) << "something a hostile client sent reached the template";
  EXPECT_TRUE(Visible("gfx"));
}

// Sockets of pagereel's servers (the listeners, and clients' connections) must not live on
// in the browsers it starts: a browser holding one kept the port taking connections after
// pagereel closed it. Checked on the browsers the show starts after the servers listen, and
// on one started again (after a crash) while a controller is connected.
std::set<std::string> SocketsOf(const std::string& pid) {
  std::set<std::string> sockets;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/" + pid + "/fd", ec)) {
    std::error_code link_ec;
    const std::string target = fs::read_symlink(fd.path(), link_ec).string();
    if (!link_ec && target.starts_with("socket:")) sockets.insert(target);
  }
  return sockets;
}

// The processes of the browser's tree (its own process group).
std::vector<std::string> GroupOf(int browser_pid) {
  std::vector<std::string> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    if (::getpgid(std::stoi(name)) == browser_pid) pids.push_back(name);
  }
  return pids;
}

TEST(LiveSocketsTest, BrowsersInheritNoListenerAndNoConnection) {
  ControlOptions control_options;
  control_options.listen = "127.0.0.1:0";
  Result<std::unique_ptr<ControlServer>> control = ControlServer::Listen(control_options);
  ASSERT_TRUE(control.ok()) << control.status().ToString();
  AmcpOptions amcp_options;
  amcp_options.listen = "127.0.0.1:0";
  amcp_options.layers = {{1, "page"}};
  Result<std::unique_ptr<AmcpServer>> amcp = AmcpServer::Listen(amcp_options);
  ASSERT_TRUE(amcp.ok()) << amcp.status().ToString();

  ShowSpec show;
  show.width = 320;
  show.height = 180;
  show.sources.push_back(SourceSpec{.id = "page", .url = "data:text/html,<p>x</p>"});
  OutputSpec out;
  out.id = "file";
  out.stream.container = encode::Container::kMatroska;
  const fs::path file = fs::temp_directory_path() / ("pagereel-sockets-" + std::to_string(::getpid()) + ".mkv");
  out.stream.sink = {encode::Sink::Kind::kGrowingFile, file.string(), nullptr};
  show.outputs.push_back(out);
  Result<std::unique_ptr<Engine>> engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  (*control)->Serve(**engine);
  (*amcp)->Serve(**engine);
  std::atomic<bool> stop{false};
  std::thread runner([&] { (void)(*engine)->Run(0, &stop); });

  const auto browser_pid = [&] { return (*engine)->CurrentStatus().sources[0].browser_pid; };
  const auto check = [&](const char* when) {
    const std::set<std::string> ours = SocketsOf("self");
    ASSERT_GE(ours.size(), 2u) << "the two listeners at least";
    const std::vector<std::string> tree = GroupOf(browser_pid());
    ASSERT_FALSE(tree.empty()) << when;
    for (const std::string& pid : tree) {
      for (const std::string& socket : SocketsOf(pid)) {
        EXPECT_EQ(ours.count(socket), 0u) << when << ": browser process " << pid << " holds " << socket;
      }
    }
  };
  ASSERT_TRUE(WaitFor([&] { return browser_pid() > 0; }, milliseconds(10'000)));
  check("the browsers started after the servers listened");

  AmcpClient controller((*amcp)->port());
  ASSERT_EQ(controller.Command("VERSION"), "201 VERSION OK\n2.3.0 pagereel");
  testing::HttpReply status = testing::Get((*control)->port(), "/status");  // A connection too.
  ASSERT_EQ(status.status, 200);
  const int first = browser_pid();
  ::kill(first, SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return browser_pid() > 0 && browser_pid() != first; }, milliseconds(20'000)));
  check("a browser started again while a controller was connected");

  stop = true;
  runner.join();
  (*amcp)->Stop();
  (*control)->Stop();
  std::error_code ignored;
  fs::remove(file, ignored);
}

}  // namespace
}  // namespace pagereel::live
