// The control and status server against a real show: the engine with real
// chrome-headless-shell workers and a real output file, real HTTP and WebSocket over
// 127.0.0.1, and the operator page opened in a real browser. One show runs for the whole
// suite (starting browsers is the slow part); each test leaves it as it found it.
#include "live/control_server.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "browser/browser.h"
#include "browser/context.h"
#include "capture/image.h"
#include "testing/http_client.h"

namespace pagereel::live {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using json = nlohmann::json;
using std::chrono::milliseconds;
using testing::HttpReply;

constexpr char kToken[] = "s3cret-token";
constexpr char kBearer[] = "Bearer s3cret-token";

// (No '%' or '#' in these pages: data: URLs would read them as escapes and a fragment.)
// A full-frame blue page with a green block that moves every frame.
const char kBackground[] =
    "data:text/html,<body style='margin:0;background:rgb(0,0,200)'><div id=b style='position:"
    "absolute;left:0;top:480px;width:40px;height:40px;background:rgb(0,200,0)'></div><script>"
    "let n=0;requestAnimationFrame(function f(){n=n>20?0:n+1;b.style.left=n*40+'px';"
    "requestAnimationFrame(f)})</script></body>";
const char kRedBackground[] =
    "data:text/html,<body style='margin:0;background:rgb(200,0,0)'></body>";
// A transparent lower third with CasparCG-style template functions: update(data) takes an
// object or a JSON string (a string that is not JSON is the name itself).
const char kLowerThird[] =
    "data:text/html,<body style='margin:0'><div id=box style='position:absolute;left:20px;"
    "top:200px;width:400px;height:100px;background:rgb(200,0,0);color:white;font:40px "
    "sans-serif'>-</div><script>function update(d){if(typeof d==='string'){try{d=JSON.parse(d)}"
    "catch(e){d={name:d}}}box.textContent=d.name;return 'updated'}function read(){return "
    "{name:box.textContent}}function fail(){throw new Error('template is broken')}</script></body>";

bool WaitFor(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(40));
  }
  return done();
}

json ParsedBody(const HttpReply& reply) {
  json parsed = json::parse(reply.body, nullptr, false);
  return parsed.is_discarded() ? json(nullptr) : parsed;
}

// A WebSocket client whose reads give up after a timeout.
class WsClient {
 public:
  // Connects and upgrades; the error text when the server refuses.
  std::string Connect(uint16_t port, const std::string& target,
                      const std::string& authorization = "") {
    try {
      beast::get_lowest_layer(ws_).connect(
          tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
      if (!authorization.empty()) {
        ws_.set_option(
            websocket::stream_base::decorator([authorization](websocket::request_type& r) {
              r.set(http::field::authorization, authorization);
            }));
      }
      websocket::response_type response;
      ws_.handshake(response, "127.0.0.1:" + std::to_string(port), target);
      return "";
    } catch (const std::exception& e) {
      return e.what();
    }
  }

  void Send(const std::string& text) {
    ws_.text(true);
    ws_.write(asio::buffer(text));
  }

  // The next message, or null after `timeout`.
  json Next(milliseconds timeout) {
    beast::flat_buffer buffer;
    beast::error_code error;
    bool done = false;
    ws_.async_read(buffer, [&](beast::error_code ec, size_t) {
      error = ec;
      done = true;
    });
    io_.restart();
    io_.run_for(timeout);
    if (!done) {
      beast::get_lowest_layer(ws_).cancel();
      io_.restart();
      io_.run();
      return nullptr;
    }
    if (error) return nullptr;
    return json::parse(beast::buffers_to_string(buffer.data()), nullptr, false);
  }

  // The next message for which `wanted` holds, skipping others (status pushes).
  json NextWhere(const std::function<bool(const json&)>& wanted, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      json message = Next(
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now()));
      if (message.is_null()) return nullptr;
      if (wanted(message)) return message;
    }
    return nullptr;
  }

 private:
  asio::io_context io_;
  websocket::stream<beast::tcp_stream> ws_{io_};
};

class ControlServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One folder per process: ctest runs each test of this suite in its own process, some
    // at the same time.
    dir_ = fs::temp_directory_path() / ("pagereel-live-control-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ShowSpec show;
    show.width = 960;
    show.height = 540;
    show.fps = Rational{25, 1};
    show.sources.push_back(SourceSpec{.id = "background", .url = kBackground});
    show.sources.push_back(SourceSpec{.id = "lower", .url = kLowerThird, .transparent = true});
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
    ControlOptions options;
    options.listen = "127.0.0.1:0";
    options.token = kToken;
    Result<std::unique_ptr<ControlServer>> server = ControlServer::Start(*engine_, options);
    if (!server.ok()) {
      setup_error_ = server.status().ToString();
      return;
    }
    server_ = std::move(server).value();
    stop_ = false;
    runner_ = std::thread([] { run_status_ = engine_->Run(0, &stop_); });
    // Until both sources have pictures.
    WaitFor([] { return engine_->SourcePicture("lower") && engine_->SourcePicture("background"); },
            milliseconds(10'000));
    // And until the program has been composited from them a few times.
    const int64_t ticks = engine_->CurrentStatus().clock.ticks;
    WaitFor([ticks] { return engine_->CurrentStatus().clock.ticks >= ticks + 3; }, milliseconds(10'000));
  }

  static void TearDownTestSuite() {
    if (server_) server_->Stop();
    stop_ = true;
    if (runner_.joinable()) runner_.join();
    if (!run_status_.ok()) ADD_FAILURE() << "the show: " << run_status_.ToString();
    server_.reset();
    engine_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr) << "the show did not start: " << setup_error_;
  }

  static uint16_t port() { return server_->port(); }

  static HttpReply Post(const std::string& path, const std::string& body,
                        const std::string& authorization = kBearer) {
    return testing::Fetch(port(), http::verb::post, path, body, "application/json", authorization);
  }
  static HttpReply GetWithToken(const std::string& path) {
    return testing::Fetch(port(), http::verb::get, path, "", "", kBearer);
  }
  static json Status() { return ParsedBody(testing::Get(port(), "/status")); }
  static json Source(const std::string& id) {
    const json status = Status();
    if (!status.is_object()) return nullptr;
    for (const json& s : status["sources"]) {
      if (s["id"] == id) return s;
    }
    return nullptr;
  }
  static json Call(const std::string& source, const json& body) {
    HttpReply reply = Post("/sources/" + source + "/call", body.dump());
    json parsed = ParsedBody(reply);
    parsed["httpStatus"] = reply.status;
    return parsed;
  }
  static std::string ShownName() {
    return Call("lower", {{"function", "read"}})["result"].value("name", "?");
  }

  static inline fs::path dir_;
  static inline std::unique_ptr<Engine> engine_;
  static inline std::unique_ptr<ControlServer> server_;
  static inline std::thread runner_;
  static inline std::atomic<bool> stop_{false};
  static inline pagereel::Status run_status_;
  static inline std::string setup_error_;
};

TEST_F(ControlServerTest, StatusHasEveryFieldAndItsNumbersMove) {
  const json first = Status();
  ASSERT_TRUE(first.is_object());
  ASSERT_EQ(first["sources"].size(), 2u);
  for (const json& s : first["sources"]) {
    for (const char* key : {"id", "worker", "phase", "visible", "opacity", "fps", "frames",
                            "repeated", "discarded", "skipped", "restarts", "lastPaintTsMs",
                            "arrivalMs", "drawP50Ms", "drawP99Ms", "lastError"}) {
      EXPECT_TRUE(s.contains(key)) << "sources[]." << key;
    }
  }
  for (const char* key : {"ticks", "lateTicks", "phaseP50Us", "phaseP99Us", "phaseMaxUs",
                          "mixP50Us", "mixP99Us", "scheduling"}) {
    EXPECT_TRUE(first["clock"].contains(key)) << "clock." << key;
  }
  ASSERT_EQ(first["outputs"].size(), 1u);
  for (const char* key : {"id", "target", "frames", "drops", "queueDepth", "bitrateKbps",
                          "reconnects", "connected", "lastError"}) {
    EXPECT_TRUE(first["outputs"][0].contains(key)) << "outputs[]." << key;
  }
  ASSERT_TRUE(first.contains("psi"));
  if (fs::exists("/proc/pressure/cpu")) {
    EXPECT_TRUE(first["psi"]["cpuSomeAvg10"].is_number()) << first["psi"].dump();
  } else {
    EXPECT_TRUE(first["psi"].is_null());
  }
  EXPECT_EQ(first["sources"][1]["phase"], 0.5);
  EXPECT_TRUE(first["sources"][0]["lastPaintTsMs"].is_number());

  std::this_thread::sleep_for(milliseconds(1'000));
  const json second = Status();
  EXPECT_GT(second["clock"]["ticks"].get<int64_t>(), first["clock"]["ticks"].get<int64_t>() + 10);
  EXPECT_GT(second["seconds"].get<double>(), first["seconds"].get<double>());
  EXPECT_GT(second["sources"][0]["frames"].get<int64_t>(),
            first["sources"][0]["frames"].get<int64_t>());
  EXPECT_GT(second["outputs"][0]["frames"].get<int64_t>(),
            first["outputs"][0]["frames"].get<int64_t>());
}

TEST_F(ControlServerTest, ItsThreadsAreNamed) {
  std::set<std::string> names;
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.insert(name);
  }
  EXPECT_EQ(names.count("live-control"), 1u);
  EXPECT_EQ(names.count("live-ctl-calls"), 1u);
}

TEST_F(ControlServerTest, MetricsAreValidPrometheusText) {
  const HttpReply reply = testing::Get(port(), "/metrics");  // No token needed.
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.content_type.find("text/plain"), std::string::npos);
  // A name, labels (each value quoted with \\ \" and \n escaped) and a number.
  const std::string label = R"re([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")re";
  const std::regex sample(R"re(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{)re" + label + "(," + label +
                          R"re()*\})? (\S+)$)re");
  const std::regex type_line(
      R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  std::map<std::string, std::string> types;
  std::map<std::string, double> values;  // By the line's name and labels.
  std::istringstream lines(reply.body);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, type_line)) {
      EXPECT_EQ(types.count(m[1]), 0u) << "two TYPE lines for " << m[1];
      types[m[1]] = m[2];
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    ASSERT_TRUE(std::regex_match(line, m, sample)) << "not a sample line: " << line;
    EXPECT_EQ(types.count(m[1]), 1u) << "no TYPE before " << line;
    size_t used = 0;
    const double value = std::stod(m[6], &used);
    EXPECT_EQ(used, m[6].length()) << line;
    values[line.substr(0, line.rfind(' '))] = value;
  }
  EXPECT_GT(values["pagereel_live_ticks_total"], 0);
  EXPECT_EQ(types["pagereel_live_ticks_total"], "counter");
  EXPECT_TRUE(values.count("pagereel_live_late_ticks_total"));
  EXPECT_TRUE(values.count("pagereel_live_source_repeated_total{source=\"lower\"}"));
  EXPECT_TRUE(values.count("pagereel_live_source_discarded_total{source=\"background\"}"));
  EXPECT_TRUE(values.count("pagereel_live_source_restarts_total{source=\"lower\"}"));
  EXPECT_GT(values["pagereel_live_output_frames_total{output=\"recording\"}"], 0);
  EXPECT_TRUE(values.count("pagereel_live_output_dropped_total{output=\"recording\"}"));
  EXPECT_TRUE(values.count("pagereel_live_output_reconnects_total{output=\"recording\"}"));
  EXPECT_TRUE(values.count("pagereel_live_output_queue_depth{output=\"recording\"}"));
  EXPECT_TRUE(values.count("pagereel_live_clock_phase_seconds{quantile=\"0.99\"}"));
  EXPECT_EQ(types["pagereel_live_clock_phase_seconds"], "gauge");
}

TEST_F(ControlServerTest, HideWithAFadeLowersTheOpacityAndShowCutsBack) {
  ASSERT_EQ(Source("lower")["opacity"], 1.0);
  const HttpReply hidden = Post("/sources/lower/hide", R"({"fade": 50})");
  ASSERT_EQ(hidden.status, 200) << hidden.body;
  EXPECT_EQ(ParsedBody(hidden)["ok"], true);
  // Fifty ticks at 25 fps: two seconds during which the opacity is between 0 and 1.
  bool seen_between = false;
  EXPECT_TRUE(WaitFor(
      [&] {
        const json s = Source("lower");
        EXPECT_FALSE(s["visible"].get<bool>());
        const double opacity = s["opacity"].get<double>();
        if (opacity > 0.05 && opacity < 0.95) seen_between = true;
        return opacity == 0.0;
      },
      milliseconds(5'000)));
  EXPECT_TRUE(seen_between);

  const HttpReply shown = Post("/sources/lower/show", "");  // No body: a cut.
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_TRUE(WaitFor([&] { return Source("lower")["opacity"] == 1.0; }, milliseconds(1'000)));
  EXPECT_TRUE(Source("lower")["visible"].get<bool>());
}

TEST_F(ControlServerTest, CallUpdatePassesTheClientsDataToThePage) {
  json reply = Call("lower", {{"function", "update"}, {"args", {{{"name", "Ada"}}}}});
  ASSERT_EQ(reply["httpStatus"], 200) << reply.dump();
  EXPECT_EQ(reply["result"], "updated");
  EXPECT_EQ(ShownName(), "Ada");

  // A JSON string, as CasparCG clients send it.
  reply = Call("lower", {{"function", "update"}, {"args", {"{\"name\":\"Grace\"}"}}});
  ASSERT_EQ(reply["httpStatus"], 200) << reply.dump();
  EXPECT_EQ(ShownName(), "Grace");

  // Text that would break out of a spliced-in string reaches the page unchanged.
  const std::string tricky = "\"); document.body.remove(); (\"</script>\u2028'";
  reply = Call("lower", {{"function", "update"}, {"args", {tricky}}});
  ASSERT_EQ(reply["httpStatus"], 200) << reply.dump();
  EXPECT_EQ(ShownName(), tricky);

  reply = Call("lower", {{"function", "update"}, {"args", {{{"name", "Ada"}}}}});
  ASSERT_EQ(reply["httpStatus"], 200);
}

TEST_F(ControlServerTest, BadCommandsAreRefusedAndChangeNothing) {
  ASSERT_EQ(Call("lower", {{"function", "update"}, {"args", {{{"name", "Ada"}}}}})["httpStatus"],
            200);
  const auto expect_refused = [&](const HttpReply& reply, int status, const std::string& words) {
    EXPECT_EQ(reply.status, status) << reply.body;
    const json body = ParsedBody(reply);
    ASSERT_TRUE(body.is_object()) << reply.body;
    ASSERT_TRUE(body["error"].is_string()) << reply.body;
    EXPECT_NE(body["error"].get<std::string>().find(words), std::string::npos) << reply.body;
  };
  expect_refused(Post("/sources/nobody/hide", ""), 404, "nobody");
  expect_refused(Post("/sources/nobody/call", R"({"function":"update"})"), 404, "nobody");
  expect_refused(Post("/sources/lower/call", R"({"function":"alert(1)//"})"), 400, "alert(1)//");
  expect_refused(Post("/sources/lower/call", R"({"function":"a..b"})"), 400,
                 "not a JavaScript name");
  expect_refused(Post("/sources/lower/call", R"({"function":"1st"})"), 400,
                 "not a JavaScript name");
  expect_refused(Post("/sources/lower/call", R"({"args":[]})"), 400, "function");
  expect_refused(Post("/sources/lower/call", R"({"function":"update","args":{"name":"Eve"}})"), 400,
                 "array");
  expect_refused(Post("/sources/lower/hide", "{not json"), 400, "not JSON");
  expect_refused(Post("/sources/lower/hide", R"({"fade":-3})"), 400, "fade");
  expect_refused(Post("/sources/lower/hide", R"({"fade":"slow"})"), 400, "fade");
  expect_refused(Post("/sources/lower/hide", R"({"fade":5,"speed":2})"), 400, "speed");
  expect_refused(Post("/sources/lower/hide", "", ""), 401, "token");
  expect_refused(Post("/sources/lower/hide", "", "Bearer wrong"), 401, "token");
  expect_refused(Post("/sources/lower/call", R"({"function":"update","args":["Eve"]})", ""), 401,
                 "token");
  expect_refused(Post("/sources/lower/navigate", R"j({"url":"javascript:alert(1)"})j"), 400,
                 "javascript:");
  expect_refused(Post("/sources/lower/navigate", R"({"url":"ftp://example.com/"})"), 400, "ftp://");
  expect_refused(Post("/sources/lower/navigate", "{}"), 400, "url");
  expect_refused(Post("/sources/lower/call", R"({"function":"fail"})"), 422, "template is broken");
  expect_refused(GetWithToken("/sources/lower/hide"), 405, "POST");
  expect_refused(GetWithToken("/nowhere"), 404, "/nowhere");
  expect_refused(testing::Get(port(), "/program.jpg"), 401, "token");
  // A page of another site, through the operator's browser; and DNS rebinding.
  expect_refused(testing::Fetch(port(), http::verb::post, "/sources/lower/hide", "", "", kBearer,
                                {{"Origin", "http://evil.example"}}),
                 403, "evil.example");
  expect_refused(testing::Fetch(port(), http::verb::post, "/sources/lower/hide", "", "", "",
                                {{"Host", "rebound.example:8090"}}),
                 403, "rebound.example");

  const json lower = Source("lower");
  EXPECT_TRUE(lower["visible"].get<bool>());
  EXPECT_EQ(lower["opacity"], 1.0);
  EXPECT_EQ(ShownName(), "Ada");
}

TEST_F(ControlServerTest, ProgramAndThumbnailsAreJpegsOfTheRightShape) {
  const HttpReply program = GetWithToken("/program.jpg");
  ASSERT_EQ(program.status, 200) << program.body;
  EXPECT_EQ(program.content_type, "image/jpeg");
  Result<encode::Image> image = encode::DecodeJpeg(
      reinterpret_cast<const uint8_t*>(program.body.data()), program.body.size());
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(image->width, 480);  // 960 halved: at most 640 wide.
  EXPECT_EQ(image->height, 270);
  const uint8_t* blue = image->pixel(400, 100);  // The background, clear of the lower third.
  EXPECT_GT(blue[2], 150);
  EXPECT_LT(blue[0], 60);
  const uint8_t* box = image->pixel(100, 125);  // The lower third's red box.
  EXPECT_GT(box[0], 150);
  EXPECT_LT(box[2], 60);

  const HttpReply thumbnail = GetWithToken("/sources/lower/thumbnail.jpg");
  ASSERT_EQ(thumbnail.status, 200) << thumbnail.body;
  Result<encode::Image> thumb = encode::DecodeJpeg(
      reinterpret_cast<const uint8_t*>(thumbnail.body.data()), thumbnail.body.size());
  ASSERT_TRUE(thumb.ok()) << thumb.status().ToString();
  EXPECT_EQ(thumb->width, 320);
  EXPECT_EQ(thumb->height, 180);
  const uint8_t* clear = thumb->pixel(250, 20);  // Transparent: the grey checkerboard.
  EXPECT_NEAR(clear[0], clear[2], 12);
  EXPECT_GT(clear[1], 120);
  EXPECT_GT(thumb->pixel(60, 80)[0], 150);  // The box.

  EXPECT_EQ(GetWithToken("/sources/nobody/thumbnail.jpg").status, 404);
}

TEST_F(ControlServerTest, WebSocketPushesTheStatusAndAnswersCommands) {
  {
    WsClient refused;
    EXPECT_NE(refused.Connect(port(), "/ws"), "") << "upgraded without the token";
  }
  {
    WsClient with_header;
    EXPECT_EQ(with_header.Connect(port(), "/ws", kBearer), "");
  }
  WsClient ws;
  ASSERT_EQ(ws.Connect(port(), std::string("/ws?token=") + kToken), "");
  const auto is_status = [](const json& m) { return m.is_object() && m.contains("clock"); };
  const json pushed = ws.NextWhere(is_status, milliseconds(3'000));
  ASSERT_TRUE(pushed.is_object()) << "no status push";
  EXPECT_GT(pushed["clock"]["ticks"].get<int64_t>(), 0);
  EXPECT_EQ(pushed["sources"].size(), 2u);

  const auto reply_to = [&](int id) {
    return ws.NextWhere(
        [id](const json& m) { return m.value("type", "") == "reply" && m.value("id", -1) == id; },
        milliseconds(5'000));
  };
  ws.Send(R"({"command":"hide","source":"lower","id":1})");
  json reply = reply_to(1);
  EXPECT_EQ(reply["ok"], true) << reply.dump();
  EXPECT_TRUE(WaitFor([&] { return Source("lower")["opacity"] == 0.0; }, milliseconds(1'000)));
  ws.Send(R"({"command":"show","source":"lower","fade":5,"id":2})");
  EXPECT_EQ(reply_to(2)["ok"], true);
  EXPECT_TRUE(WaitFor([&] { return Source("lower")["opacity"] == 1.0; }, milliseconds(2'000)));
  ws.Send(R"({"command":"call","source":"lower","function":"update","args":["Lin"],"id":3})");
  EXPECT_EQ(reply_to(3)["result"], "updated");
  ws.Send(R"({"command":"call","source":"lower","function":"read","id":4})");
  EXPECT_EQ(reply_to(4)["result"]["name"], "Lin");
  ws.Send(R"({"command":"fly","source":"lower","id":5})");
  reply = reply_to(5);
  EXPECT_NE(reply.value("error", "").find("fly"), std::string::npos) << reply.dump();
  ws.Send(R"({"command":"hide","source":"nobody","id":6})");
  EXPECT_EQ(reply_to(6)["status"], 404);
  ws.Send("not json");
  reply = ws.NextWhere([](const json& m) { return m.value("type", "") == "reply"; },
                       milliseconds(3'000));
  EXPECT_NE(reply.value("error", "").find("not JSON"), std::string::npos) << reply.dump();
  // The pushes keep coming, once a second.
  EXPECT_TRUE(ws.NextWhere(is_status, milliseconds(2'500)).is_object());
  EXPECT_TRUE(Source("lower")["visible"].get<bool>());
}

TEST_F(ControlServerTest, NavigateAndReloadChangeTheSourceInTheProgram) {
  const auto program_pixel = [] {
    const HttpReply reply = GetWithToken("/program.jpg");
    Result<encode::Image> image =
        encode::DecodeJpeg(reinterpret_cast<const uint8_t*>(reply.body.data()), reply.body.size());
    if (!image.ok()) return std::array<uint8_t, 3>{0, 0, 0};
    const uint8_t* p = image->pixel(400, 100);
    return std::array<uint8_t, 3>{p[0], p[1], p[2]};
  };
  HttpReply reply = Post("/sources/background/navigate", json{{"url", kRedBackground}}.dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(WaitFor([&] { return program_pixel()[0] > 150; }, milliseconds(5'000)));
  reply = Post("/sources/background/reload", "");
  ASSERT_EQ(reply.status, 200) << reply.body;
  reply = Post("/sources/background/navigate", json{{"url", kBackground}}.dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(WaitFor([&] { return program_pixel()[2] > 150; }, milliseconds(5'000)));
}

// The operator page in a real browser: the program picture loads, there is one set of
// buttons per source, and its buttons drive the show.
// The operator page opened in a real browser (a headless-shell of its own), read and
// clicked through DevTools.
class OperatorPage {
 public:
  std::string Open(const std::string& url) {
    browser::LaunchOptions launch;
    launch.frame_control = browser::FrameControl::kPerTarget;
    Result<std::unique_ptr<browser::Browser>> browser = browser::Browser::Launch(launch);
    if (!browser.ok()) return browser.status().ToString();
    browser_ = std::move(browser).value();
    Result<std::unique_ptr<browser::BrowserContext>> context =
        browser::BrowserContext::Create(*browser_);
    if (!context.ok()) return context.status().ToString();
    context_ = std::move(context).value();
    Result<browser::Target> target = context_->CreateTarget({.width = 1280, .height = 800});
    if (!target.ok()) return target.status().ToString();
    session_ = target->session_id;
    Result<cdp::Message> navigated =
        browser_->client().Call("Page.navigate", json{{"url", url}}.dump(), session_);
    return navigated.ok() ? "" : navigated.status().ToString();
  }

  json Evaluate(const std::string& expression) {
    Result<cdp::Message> reply = browser_->client().Call(
        "Runtime.evaluate", json{{"expression", expression}, {"returnByValue", true}}.dump(),
        session_);
    if (!reply.ok()) return nullptr;
    const json parsed = json::parse(reply->json, nullptr, false);
    if (parsed.is_discarded() || !parsed.contains("result")) return nullptr;
    return parsed["result"]["result"].value("value", json(nullptr));
  }

 private:
  std::unique_ptr<browser::Browser> browser_;
  std::unique_ptr<browser::BrowserContext> context_;
  std::string session_;
};

TEST_F(ControlServerTest, TheOperatorPageWorksInTheBrowser) {
  OperatorPage page;
  ASSERT_EQ(page.Open(server_->Url() + "#token=" + kToken), "");
  const auto evaluate = [&](const std::string& expression) { return page.Evaluate(expression); };
  const std::string probe =
      "JSON.stringify({program: document.getElementById('program').naturalWidth,"
      " sources: [...document.querySelectorAll('.source')].map(s => ({id: s.dataset.source,"
      "   buttons: s.querySelectorAll('button.show, button.hide, button.fade-in, "
      "button.fade-out').length,"
      "   thumb: s.querySelector('.thumb').naturalWidth})),"
      " clock: document.getElementById('clock').textContent,"
      " message: document.getElementById('message').textContent})";
  json state;
  const bool loaded = WaitFor(
      [&] {
        const json text = evaluate(probe);
        if (!text.is_string()) return false;
        state = json::parse(text.get<std::string>(), nullptr, false);
        if (!state.is_object() || state["program"].get<int>() == 0 || state["sources"].size() != 2)
          return false;
        for (const json& s : state["sources"]) {
          if (s["thumb"].get<int>() == 0) return false;
        }
        return true;
      },
      milliseconds(15'000));
  ASSERT_TRUE(loaded) << state.dump();
  EXPECT_EQ(state["program"], 480);
  EXPECT_EQ(state["sources"][0]["id"], "background");
  EXPECT_EQ(state["sources"][1]["id"], "lower");
  for (const json& s : state["sources"]) EXPECT_EQ(s["buttons"], 4) << s.dump();
  EXPECT_NE(state["clock"].get<std::string>().find("ticks"), std::string::npos) << state.dump();
  EXPECT_EQ(state["message"], "") << state.dump();

  evaluate("document.querySelector('.source[data-source=\"lower\"] button.hide').click()");
  EXPECT_TRUE(
      WaitFor([&] { return !Source("lower")["visible"].get<bool>(); }, milliseconds(3'000)));
  evaluate("document.querySelector('.source[data-source=\"lower\"] button.fade-in').click()");
  EXPECT_TRUE(WaitFor([&] { return Source("lower")["opacity"] == 1.0; }, milliseconds(3'000)));
}

// Issue 19: the operator page sends template data and calls, loads a URL in a source, and
// previews a source (also one that is off air) larger than its thumbnail.
TEST_F(ControlServerTest, TheOperatorPageSendsDataLoadsUrlsAndPreviews) {
  OperatorPage page;
  ASSERT_EQ(page.Open(server_->Url() + "#token=" + kToken), "");
  const auto panel = [](const std::string& id, const std::string& selector) {
    return "document.querySelector('.source[data-source=\"" + id + "\"] " + selector + "')";
  };
  ASSERT_TRUE(WaitFor([&] { return page.Evaluate(panel("lower", "textarea.data") + " !== null") == true; },
                      milliseconds(15'000)));
  // Template data as CasparCG passes it: text (this template parses JSON text itself).
  page.Evaluate(panel("lower", "textarea.data") + ".value = '{\"name\": \"Opal\"}'");
  page.Evaluate(panel("lower", "button.update") + ".click()");
  EXPECT_TRUE(WaitFor([&] { return ShownName() == "Opal"; }, milliseconds(5'000))) << ShownName();
  // As a JSON value, and a call with JSON arguments.
  page.Evaluate(panel("lower", "select.data-mode") + ".value = 'json'");
  page.Evaluate(panel("lower", "textarea.data") + ".value = '{\"name\": \"Ruby\"}'");
  page.Evaluate(panel("lower", "button.update") + ".click()");
  EXPECT_TRUE(WaitFor([&] { return ShownName() == "Ruby"; }, milliseconds(5'000))) << ShownName();
  page.Evaluate(panel("lower", "input.function") + ".value = 'update'");
  page.Evaluate(panel("lower", "input.args") + ".value = '[{\"name\": \"Ada\"}]'");
  page.Evaluate(panel("lower", "button.call") + ".click()");
  EXPECT_TRUE(WaitFor([&] { return ShownName() == "Ada"; }, milliseconds(5'000))) << ShownName();

  // A URL loaded in a source reaches the program.
  const auto program_red = [] {
    const HttpReply reply = GetWithToken("/program.jpg");
    Result<encode::Image> image =
        encode::DecodeJpeg(reinterpret_cast<const uint8_t*>(reply.body.data()), reply.body.size());
    return image.ok() && image->pixel(400, 100)[0] > 150 && image->pixel(400, 100)[2] < 80;
  };
  page.Evaluate(panel("background", "input.url") + ".value = " + json(kRedBackground).dump());
  page.Evaluate(panel("background", "button.navigate") + ".click()");
  EXPECT_TRUE(WaitFor(program_red, milliseconds(10'000)));

  // The preview: a hidden source, clicked, shows at up to 640 px (here 480: 960 halved).
  ASSERT_EQ(Post("/sources/lower/hide", "").status, 200);
  page.Evaluate(panel("lower", "img.thumb") + ".click()");
  json state;
  EXPECT_TRUE(WaitFor(
      [&] {
        state = page.Evaluate(
            "({width: document.getElementById('preview').naturalWidth,"
            " label: document.getElementById('previewLabel').textContent,"
            " message: document.getElementById('message').textContent})");
        return state.is_object() && state["width"] == 480 &&
               state["label"].get<std::string>().find("off air") != std::string::npos;
      },
      milliseconds(10'000)))
      << state.dump();
  EXPECT_EQ(state["message"], "") << state.dump();
  EXPECT_EQ(GetWithToken("/sources/lower/preview.jpg").content_type, "image/jpeg");
  EXPECT_EQ(testing::Get(port(), "/sources/lower/preview.jpg").status, 401);

  ASSERT_EQ(Post("/sources/lower/show", "").status, 200);
  ASSERT_EQ(Post("/sources/background/navigate", json{{"url", kBackground}}.dump()).status, 200);
}

ControlOptions Listening(const std::string& listen) {
  ControlOptions options;
  options.listen = listen;
  return options;
}

// Without a show: the address checks.
TEST(ControlServerListenTest, ATakenPortOrABadAddressIsRefusedNamingIt) {
  Result<std::unique_ptr<ControlServer>> first = ControlServer::Listen(Listening("127.0.0.1:0"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE((*first)->loopback());
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  Result<std::unique_ptr<ControlServer>> second = ControlServer::Listen(Listening(taken));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(taken), std::string::npos) << second.status().ToString();
  for (const char* bad :
       {"nonsense", "127.0.0.1", "127.0.0.1:99999", "example.com:80", "127.0.0.1:8o"}) {
    Result<std::unique_ptr<ControlServer>> refused = ControlServer::Listen(Listening(bad));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  Result<std::unique_ptr<ControlServer>> any = ControlServer::Listen(Listening("0.0.0.0:0"));
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE((*any)->loopback());
  Result<std::unique_ptr<ControlServer>> local = ControlServer::Listen(Listening("localhost:0"));
  ASSERT_TRUE(local.ok());
  EXPECT_EQ((*local)->Url(), "http://127.0.0.1:" + std::to_string((*local)->port()) + "/");
}

TEST(ControlFormatTest, TemplateCallsWriteEveryArgumentAsJson) {
  EXPECT_EQ(*TemplateCall("update", R"([{"name":"Ada"}])"), R"(update({"name":"Ada"}))");
  EXPECT_EQ(*TemplateCall("play", "[]"), "play()");
  EXPECT_EQ(*TemplateCall("graphics.ticker.next", R"([1,"two",null])"),
            R"(graphics.ticker.next(1,"two",null))");
  EXPECT_EQ(*TemplateCall("update", R"(["\"); alert(1); (\""])"),
            R"(update("\"); alert(1); (\""))");
  EXPECT_EQ(*TemplateCall("update", "[\"\xe2\x80\xa8\"]"), R"(update("\u2028"))");
  for (const char* bad : {"", "alert(1)", "1st", "a..b", "a.", ".a", "a b", "a-b", "\xc3\xa9"}) {
    EXPECT_EQ(TemplateCall(bad, "[]").status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(TemplateCall("update", R"({"name":"Ada"})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TemplateCall("update", "[").status().code(), StatusCode::kInvalidArgument);
}

TEST(ControlFormatTest, OnlyWebAndFileUrlsAreSources) {
  for (const char* good : {"http://example.com/", "https://example.com/a?b", "HTTPS://x",
                           "file:///tmp/a.html", "data:text/html,<b>hi</b>"}) {
    EXPECT_TRUE(CheckSourceUrl(good).ok()) << good;
  }
  for (const char* bad : {"", "javascript:alert(1)", "ftp://x/", "http:/x", "http:///x",
                          "about:blank", "chrome://settings", "example.com", "data:"}) {
    EXPECT_EQ(CheckSourceUrl(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
}

ShowStatus SampleStatus() {
  ShowStatus st;
  st.clock.ticks = 250;
  st.clock.late = 2;
  st.seconds = 10;
  SourceStatus s;
  s.id = "lower \"third\"\\\nA";
  s.frames = 240;
  st.sources.push_back(s);
  OutputStatus rtmp;
  rtmp.id = "stream";
  rtmp.target = "rtmp://user:pw@live.example.com/app/SECRETKEY";
  rtmp.last_error = "connecting to rtmp://user:pw@live.example.com/app/SECRETKEY: Connection refused";
  st.outputs.push_back(rtmp);
  OutputStatus srt;
  srt.id = "srt";
  srt.target = "srt://10.0.0.1:9000?mode=caller&passphrase=hunter22hunter22";
  srt.last_error = "connecting to srt://10.0.0.1:9000?mode=caller&passphrase=hunter22hunter22: Incorrect passphrase";
  srt.srt = true;
  srt.srt_dropped_packets = 12;
  srt.srt_retransmitted_packets = 40;
  srt.srt_rtt_ms = 2.5;
  st.outputs.push_back(srt);
  OutputStatus file;
  file.id = "file";
  file.target = "/var/show/program.mp4";
  st.outputs.push_back(file);
  return st;
}

TEST(ControlFormatTest, MetricsEscapeLabelValues) {
  const std::string text = MetricsText(SampleStatus(), "");
  EXPECT_NE(
      text.find("pagereel_live_source_frames_total{source=\"lower \\\"third\\\"\\\\\\nA\"} 240"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("pagereel_live_ticks_total 250\n"), std::string::npos);
  // SRT's figures for the srt:// output only.
  EXPECT_NE(text.find("pagereel_live_output_srt_dropped_packets_total{output=\"srt\"} 12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("pagereel_live_output_srt_retransmitted_packets_total{output=\"srt\"} 40\n"), std::string::npos);
  EXPECT_NE(text.find("pagereel_live_output_srt_rtt_ms{output=\"srt\"} 2.5\n"), std::string::npos);
  EXPECT_EQ(text.find("pagereel_live_output_srt_rtt_ms{output=\"stream\"}"), std::string::npos);
  EXPECT_EQ(text.find("pressure"), std::string::npos);  // No PSI file, no PSI metrics.
  const std::string with_psi =
      MetricsText(SampleStatus(),
                  "some avg10=1.50 avg60=0.80 avg300=0.20 total=123456\nfull avg10=0.00 avg60=0.00 "
                  "avg300=0.00 total=0\n");
  EXPECT_NE(with_psi.find("pagereel_live_cpu_pressure_avg10_percent{kind=\"some\"} 1.5\n"),
            std::string::npos)
      << with_psi;
}

TEST(ControlFormatTest, StatusHidesSecretsInOutputTargets) {
  const json st = json::parse(
      StatusJson(SampleStatus(), "some avg10=1.50 avg60=0.80 avg300=0.20 total=123456\n"));
  EXPECT_EQ(st["psi"]["cpuSomeAvg10"], 1.5);
  EXPECT_FALSE(st["psi"].contains("cpuFullAvg10"));
  EXPECT_EQ(st["outputs"][0]["target"], "rtmp://***@live.example.com/app/***");
  EXPECT_EQ(st["outputs"][1]["target"], "srt://10.0.0.1:9000?mode=caller&passphrase=***");
  EXPECT_EQ(st["outputs"][2]["target"], "/var/show/program.mp4");
  EXPECT_EQ(st["outputs"][1]["srt"]["droppedPackets"], 12);
  EXPECT_EQ(st["outputs"][1]["srt"]["rttMs"], 2.5);
  EXPECT_TRUE(st["outputs"][0]["srt"].is_null());
  // Errors name the target as the output was given: hidden there too (they showed the
  // stream key and the SRT passphrase in plain).
  EXPECT_EQ(st["outputs"][0]["lastError"], "connecting to rtmp://***@live.example.com/app/***: Connection refused");
  EXPECT_EQ(st["outputs"][1]["lastError"],
            "connecting to srt://10.0.0.1:9000?mode=caller&passphrase=***: Incorrect passphrase");
  EXPECT_TRUE(st["sources"][0]["lastPaintTsMs"].is_null());  // No picture yet.
  EXPECT_TRUE(json::parse(StatusJson(SampleStatus(), ""))["psi"].is_null());
}

TEST(ControlFormatTest, PreviewsShrinkByAWholeFactorOverTheirBackdrop) {
  Picture picture(1280, 720);  // All transparent.
  for (int y = 0; y < 360; ++y) {
    for (int x = 0; x < 1280; ++x) {
      uint8_t* p = picture.Row(y) + x * 4;
      p[0] = 128;  // Half-transparent red, premultiplied.
      p[3] = 128;
    }
  }
  Result<std::string> jpeg = PreviewJpeg(picture, 640, Backdrop::kBlack);
  ASSERT_TRUE(jpeg.ok());
  Result<encode::Image> image =
      encode::DecodeJpeg(reinterpret_cast<const uint8_t*>(jpeg->data()), jpeg->size());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 640);
  EXPECT_EQ(image->height, 360);
  EXPECT_NEAR(image->pixel(100, 50)[0], 128, 10);
  EXPECT_LT(image->pixel(100, 300)[0], 10);  // Black.
  jpeg = PreviewJpeg(picture, 320, Backdrop::kCheckerboard);
  ASSERT_TRUE(jpeg.ok());
  image = encode::DecodeJpeg(reinterpret_cast<const uint8_t*>(jpeg->data()), jpeg->size());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 320);
  EXPECT_GT(image->pixel(4, 170)[1], 130);  // Grey, not black.
  EXPECT_EQ(PreviewJpeg(Picture(), 320, Backdrop::kBlack).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pagereel::live
