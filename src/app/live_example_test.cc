// examples/show.toml, the show the docs and the README point at, run for real: it loads,
// its pages draw (ticker, score bug, clock over the backdrop) and a controller drives it
// over AMCP as the comments in the file say.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "app/live_app.h"
#include "live/engine.h"
#include "testing/amcp_client.h"
#include "testing/scratch_dir.h"

namespace pagereel::app {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

bool WaitFor(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(40));
  }
  return done();
}

TEST(LiveExampleTest, TheExampleShowRunsAndAControllerDrivesIt) {
  const std::string file = std::string(PAGEREEL_SOURCE_DIR) + "/examples/show.toml";
  Result<live::ShowSpec> loaded = LoadShowFile(file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  live::ShowSpec show = std::move(loaded).value();
  ASSERT_EQ(show.sources.size(), 4u);
  EXPECT_EQ(show.sources[1].id, "scoreboard");
  EXPECT_EQ(show.sources[1].amcp_layer, 20);
  EXPECT_EQ(show.amcp.listen, "127.0.0.1:5250");

  // Here: the program to a scratch file, no control server, AMCP on a free port.
  testing::ScratchDir dir("live-example");
  Result<live::OutputSpec> out = OutputForDestination((dir.path() / "program.mkv").string());
  ASSERT_TRUE(out.ok());
  out->id = "recording";
  show.outputs = {*out};
  show.as_run_log = (dir.path() / "asrun.log").string();
  show.control.listen = "";
  show.amcp.listen = "127.0.0.1:0";
  Result<std::unique_ptr<live::AmcpServer>> amcp = live::AmcpServer::Listen(AmcpOptionsFor(show));
  ASSERT_TRUE(amcp.ok()) << amcp.status().ToString();
  Result<std::unique_ptr<live::Engine>> engine = live::Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  (*amcp)->Serve(**engine);
  std::atomic<bool> stop{false};
  Status ran;
  std::thread runner([&] { ran = (*engine)->Run(0, &stop); });

  auto pixel = [&](int x, int y) -> std::array<int, 3> {
    std::shared_ptr<const live::Picture> program = (*engine)->Program();
    if (!program) return {-1, -1, -1};
    const uint8_t* p = program->Row(y) + x * 4;
    return {p[0], p[1], p[2]};
  };
  // The ticker's red label (x 0-150 at y 640-720) and the score bug's white home box.
  EXPECT_TRUE(WaitFor([&] { auto p = pixel(75, 690); return p[0] > 200 && p[1] < 110 && p[2] < 110; },
                      milliseconds(20'000)))
      << "the ticker's label is not on the program";
  EXPECT_TRUE(WaitFor([&] { auto p = pixel(48, 50); return p[0] > 220 && p[1] > 220 && p[2] > 220; },
                      milliseconds(20'000)))
      << "the score bug is not on the program: " << pixel(48, 50)[0] << "," << pixel(48, 50)[1]
      << "," << pixel(48, 50)[2];

  testing::AmcpClient controller((*amcp)->port());
  ASSERT_TRUE(controller.connected());
  EXPECT_EQ(controller.Command(R"(CG 1-20 UPDATE 1 "{\"home\":\"LIV\",\"homeScore\":3}")"),
            "202 CG OK");
  const auto read = [&](const std::string& source, const std::string& expression) {
    Result<std::string> value = (*engine)->CallSource(source, expression);
    return value.ok() ? *value : value.status().ToString();
  };
  EXPECT_EQ(read("scoreboard", "document.getElementById('homeScore').textContent"), "\"3\"");
  EXPECT_EQ(read("scoreboard", "document.getElementById('home').textContent"), "\"LIV\"");
  // CasparCG's client: the ticker loaded anew, with XML data, played on load.
  EXPECT_EQ(controller.Command(
                R"(CG 1-30 ADD 1 "live/ticker" 1 "<templateData><componentData id=\"f0\"><data id=\"text\" value=\"Breaking | News\"/></componentData></templateData>")"),
            "202 CG OK");
  // The crawl lays its items out as many times as fill it twice (a seamless loop).
  EXPECT_EQ(read("ticker", "document.getElementById('text').textContent.split('   \u2022   ')"
                           ".slice(0, 3).join('|')"),
            "\"Breaking|News|Breaking\"");
  EXPECT_EQ(controller.Command("CG 1-40 STOP 1"), "202 CG OK");

  stop = true;
  runner.join();
  (*amcp)->Stop();
  EXPECT_TRUE(ran.ok()) << ran.ToString();
}

}  // namespace
}  // namespace pagereel::app
