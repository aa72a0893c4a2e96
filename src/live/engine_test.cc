// The engine with the real chrome-headless-shell and the real encoders: a show is run on
// the system clock, its recording decoded and checked frame by frame.
#include "live/engine.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>

#include "testing/media.h"
#include "testing/scratch_dir.h"

namespace pagereel::live {
namespace {

namespace fs = std::filesystem;

// (No '%' or '#' in these pages: data: URLs would read them as escapes and a fragment.)
// A full-frame page in a solid blue, with a green block that moves one step per animation
// frame (so the page changes every frame, as a busy source does).
const char kBackground[] =
    "data:text/html,<body style='margin:0;background:rgb(0,0,200)'><div id=b style='position:"
    "absolute;left:0;top:600px;width:40px;height:40px;background:rgb(0,200,0)'></div><script>"
    "let n=0;requestAnimationFrame(function f(){n=n>28?0:n+1;b.style.left=n*40+'px';"
    "requestAnimationFrame(f)})</script></body>";
// A transparent overlay: a red box at the top left, nothing elsewhere.
const char kOverlay[] =
    "data:text/html,<body style='margin:0'><div style='width:400px;height:200px;"
    "background:rgb(220,0,0)'></div></body>";

ShowSpec TwoSourceShow(const fs::path& recording) {
  ShowSpec show;
  show.width = 1280;
  show.height = 720;
  show.fps = Rational{25, 1};
  show.sources.push_back(SourceSpec{.id = "background", .url = kBackground});
  show.sources.push_back(SourceSpec{.id = "overlay", .url = kOverlay, .transparent = true});
  OutputSpec out;
  out.id = "recording";
  out.stream.container = encode::Container::kMatroska;
  out.stream.sink = {encode::Sink::Kind::kGrowingFile, recording.string(), nullptr};
  show.outputs.push_back(out);
  return show;
}

const uint8_t* Pixel(const testing::DecodedVideo& v, size_t frame, int x, int y) {
  return &v.rgb[frame][(static_cast<size_t>(y) * v.width + x) * 3];
}

ShowSpec OneSourceShow(const std::string& url, const fs::path& dir) {
  ShowSpec show;
  show.width = 320;
  show.height = 180;
  show.sources.push_back(SourceSpec{.id = "gfx", .url = url});
  OutputSpec out;
  out.id = "recording";
  out.stream.container = encode::Container::kMpegTs;
  out.stream.sink = {encode::Sink::Kind::kGrowingFile, (dir / "p.ts").string(), nullptr};
  show.outputs.push_back(out);
  show.as_run_log = (dir / "asrun.log").string();
  return show;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A page that paints its animation frame's time (the low 16 bits of the wall-clock
// millisecond) as 16 black and white bars across 320x180, after spinning `spin_ms` in the
// frame (a page too slow for the clock), recorded to p.mkv.
ShowSpec TimeCodeShow(int spin_ms, const fs::path& dir) {
  const std::string page =
      "data:text/html,<body style='margin:0'><canvas id=c width=320 height=180></canvas><script>"
      "const x=c.getContext('2d');requestAnimationFrame(function f(t){const s=performance.now();"
      "while(performance.now()-s<" + std::to_string(spin_ms) + "){}"
      "const ms=Math.floor(performance.timeOrigin+t);for(let b=0;b<16;b++){"
      "x.fillStyle=(ms>>b)&1?'white':'black';x.fillRect(b*20,0,20,180)}"
      "requestAnimationFrame(f)})</script></body>";
  ShowSpec show = OneSourceShow(page, dir);
  show.outputs[0].stream.container = encode::Container::kMatroska;
  show.outputs[0].stream.sink.target = (dir / "p.mkv").string();
  return show;
}

// The 16-bit code of frame `i` of a TimeCodeShow's (or the clip test's) recording.
int ReadCode(const testing::DecodedVideo& v, size_t i) {
  int code = 0;
  for (int b = 0; b < 16; ++b) code |= (Pixel(v, i, b * 20 + 10, 90)[1] > 128 ? 1 : 0) << b;
  return code;
}

class EngineTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"live-engine"};
};

TEST_F(EngineTest, TwoSourcesForTenSecondsMakeExactly250FramesOfBoth) {
  const fs::path recording = scratch_.path() / "program.mkv";
  auto engine = Engine::Start(TwoSourceShow(recording));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(250, nullptr).ok());
  ShowStatus status = (*engine)->CurrentStatus();
  EXPECT_EQ(status.clock.ticks, 250);
  ASSERT_EQ(status.outputs.size(), 1u);
  EXPECT_EQ(status.outputs[0].frames, 250);
  EXPECT_EQ(status.outputs[0].dropped, 0);
  ASSERT_EQ(status.sources.size(), 2u);
  EXPECT_EQ(status.sources[0].phase, 0.0);
  EXPECT_EQ(status.sources[1].phase, 0.5);
  EXPECT_GT(status.sources[0].frames, 1);  // It changes every frame it can draw.

  auto video = testing::DecodeVideo(recording.string());
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->pts_seconds.size(), 250u);
  for (size_t i = 0; i < video->pts_seconds.size(); ++i) {
    ASSERT_NEAR(video->pts_seconds[i], 0.04 * static_cast<double>(i), 1e-6) << "frame " << i;
  }
  // From the second second on, both sources are in every frame: the overlay's red box on the
  // background's blue.
  for (size_t i = 25; i < 250; i += 25) {
    const uint8_t* red = Pixel(*video, i, 200, 100);
    EXPECT_GT(red[0], 190) << "frame " << i;
    EXPECT_LT(red[2], 40) << "frame " << i;
    const uint8_t* blue = Pixel(*video, i, 900, 300);
    EXPECT_LT(blue[0], 40) << "frame " << i;
    EXPECT_GT(blue[2], 170) << "frame " << i;
  }
}

TEST_F(EngineTest, ASourceWhoseBrowserIsKilledComesBackAndTheOutputKeepsEveryTick) {
  const fs::path recording = scratch_.path() / "program.mkv";
  auto engine = Engine::Start(TwoSourceShow(recording));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  std::atomic<int> killed{0};
  std::atomic<int64_t> pictures_before{0};
  std::jthread killer([&] {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const SourceStatus before = e.CurrentStatus().sources[1];
    pictures_before = before.frames;
    if (before.browser_pid > 0 && ::kill(-before.browser_pid, SIGKILL) == 0) killed = before.browser_pid;
  });
  ASSERT_TRUE(e.Run(200, nullptr).ok());
  killer.join();
  ASSERT_GT(killed.load(), 0);
  ShowStatus status = e.CurrentStatus();
  EXPECT_EQ(status.outputs[0].frames, 200);
  // Replaced at least once (a very busy machine may also see the new browser hang once);
  // back, since it made a picture after the kill (its first after a restart is forced).
  EXPECT_GE(status.sources[1].restarts, 1);
  EXPECT_NE(status.sources[1].browser_pid, killed.load());
  EXPECT_GT(status.sources[1].frames, pictures_before.load());

  auto video = testing::DecodeVideo(recording.string());
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->pts_seconds.size(), 200u);
  // The overlay shows before the kill, while its browser is replaced (its last picture), and after.
  for (size_t i : {25u, 60u, 75u, 100u, 199u}) {
    EXPECT_GT(Pixel(*video, i, 200, 100)[0], 190) << "frame " << i;
  }
}

TEST_F(EngineTest, HidingASourceFadesItOut) {
  const fs::path recording = scratch_.path() / "program.mkv";
  auto engine = Engine::Start(TwoSourceShow(recording));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  EXPECT_EQ(e.SetVisible("nobody", false, 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(e.SetVisible("overlay", false, -3).code(), StatusCode::kInvalidArgument);
  std::jthread control([&] {
    while (e.CurrentStatus().clock.ticks < 50) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(e.SetVisible("overlay", false, 10).ok());
  });
  ASSERT_TRUE(e.Run(100, nullptr).ok());
  auto video = testing::DecodeVideo(recording.string());
  ASSERT_TRUE(video.ok());
  ASSERT_EQ(video->pts_seconds.size(), 100u);
  EXPECT_GT(Pixel(*video, 40, 200, 100)[0], 190);
  EXPECT_LT(Pixel(*video, 90, 200, 100)[0], 40);   // Gone.
  EXPECT_GT(Pixel(*video, 90, 200, 100)[2], 170);  // The background shows through.
}


TEST_F(EngineTest, FourWorkersBeginTheirFramesAtTheirFourPhases) {
  ShowSpec show;
  show.width = 320;
  show.height = 180;
  show.fps = Rational{25, 1};
  for (int i = 0; i < 4; ++i) {
    show.sources.push_back(SourceSpec{.id = "s" + std::to_string(i), .url = kOverlay,
                                      .width = 160, .height = 90, .transparent = true});
  }
  OutputSpec out;
  out.id = "recording";
  out.stream.container = encode::Container::kMpegTs;
  out.stream.sink = {encode::Sink::Kind::kGrowingFile, (scratch_.path() / "p.ts").string(), nullptr};
  show.outputs.push_back(out);
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(100, nullptr).ok());
  ShowStatus status = (*engine)->CurrentStatus();
  // Workers 0-3 at 0, 1/2, 1/4 and 3/4 of the 40 ms period: each plans to begin its frames
  // at its phase, whole periods before the ticks they are for (at least one period: leads
  // of 40, 60, 70 and 50 ms, or a period or more beyond where frames take long). When they
  // begin is up to the machine: a busy one starts them as soon as the frame before is done
  // (bench/RESULTS.md measures stagger, "live (issue 8)").
  const double phase_ms[] = {0, 20, 10, 30};
  for (int i = 0; i < 4; ++i) {
    const SourceStatus& s = status.sources[static_cast<size_t>(i)];
    EXPECT_EQ(s.worker, i);
    EXPECT_GE(s.lead_ms, 40 - phase_ms[i] - 1e-6) << "worker " << i;
    EXPECT_NEAR(std::fmod(s.lead_ms + phase_ms[i], 40.0), 0, 1e-6) << "worker " << i << ": lead " << s.lead_ms;
    EXPECT_LE(s.lead_ms, 4 * 40) << "worker " << i;
  }
}


TEST_F(EngineTest, ARestartedSourceGetsItsPageAndTemplateDataBack) {
  const char kTemplate[] =
      "data:text/html,<body><script>let v='none';function update(d){v=d}function read(){return v}"
      "</script><p>first</p></body>";
  const char kSecond[] =
      "data:text/html,<body><script>let v='none';function update(d){v=d}function read(){return "
      "'second:'+v}</script><p>second</p></body>";
  ShowSpec show;
  show.width = 320;
  show.height = 180;
  show.sources.push_back(SourceSpec{.id = "gfx", .url = kTemplate});
  OutputSpec out;
  out.id = "recording";
  out.stream.container = encode::Container::kMpegTs;
  out.stream.sink = {encode::Sink::Kind::kGrowingFile, (scratch_.path() / "p.ts").string(), nullptr};
  show.outputs.push_back(out);
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  std::atomic<bool> stop{false};
  std::jthread runner([&] { EXPECT_TRUE(e.Run(0, &stop).ok()); });
  ASSERT_TRUE(e.Navigate("gfx", kSecond).ok());
  Result<std::string> updated = Result<std::string>(UnavailableError("not loaded yet"));
  for (int i = 0; i < 100 && !updated.ok(); ++i) {  // The new document loads meanwhile.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    updated = e.CallSource("gfx", "update('Ada')");
  }
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  ASSERT_EQ(*e.CallSource("gfx", "read()"), "\"second:Ada\"");

  const int pid = e.CurrentStatus().sources[0].browser_pid;
  ASSERT_EQ(::kill(-pid, SIGKILL), 0);
  Result<std::string> back = Result<std::string>(UnavailableError("restarting"));
  for (int i = 0; i < 300; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (e.CurrentStatus().sources[0].restarts == 0) continue;
    back = e.CallSource("gfx", "read()");
    if (back.ok() && *back == "\"second:Ada\"") break;
  }
  stop = true;
  runner.join();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, "\"second:Ada\"");  // The page it was navigated to, with its data.
}


// A transparent overlay whose page is changed on air: until the new page has loaded the
// program keeps the old one's picture, and at no tick is anything but the two boxes and
// the show's black background on air (the white of a page being loaded was, 9-24 ticks).
TEST_F(EngineTest, ANavigatedOverlayKeepsItsPictureUntilTheNewPageIsUp) {
  const char kRed[] =
      "data:text/html,<body style='margin:0'><div style='width:100px;height:50px;"
      "background:rgb(220,0,0)'></div><script>function update(d){document.title=d}</script></body>";
  // Of another origin (no paint holding), and slow to load: its parser is blocked 400 ms.
  const fs::path green_page = scratch_.path() / "green.html";
  {
    std::ofstream(green_page) << "<body style='margin:0'><script>const t=Date.now();"
                                 "while(Date.now()-t<400){}</script><div style='width:100px;"
                                 "height:50px;background:rgb(0,200,0)'></div></body>";
  }
  const std::string kGreen = "file://" + green_page.string();
  ShowSpec show = OneSourceShow(kRed, scratch_.path());
  show.sources[0].transparent = true;
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  std::atomic<bool> stop{false};
  std::jthread runner([&] { EXPECT_TRUE(e.Run(0, &stop).ok()); });
  // Every program picture from now until the green box is up.
  std::atomic<bool> green{false};
  std::atomic<int> foreign{0}, red{0}, empty{0};
  std::string trace;  // The states seen, in order.
  std::jthread sampler([&] {
    for (int i = 0; i < 1500 && !green; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
      std::shared_ptr<const Picture> p = e.Program();
      if (p == nullptr) continue;
      const uint8_t* box = &p->pixels[(20 * p->width + 20) * 4];
      const uint8_t* outside = &p->pixels[(120 * p->width + 200) * 4];
      char state = 'x';
      const bool stray = outside[0] != 0 || outside[1] != 0 || outside[2] != 0;
      if (stray) foreign++, state = 'w';
      else if (box[0] > 200 && box[1] < 20) red++, state = 'r';
      else if (box[1] > 180 && box[0] < 20) green = true, state = 'g';
      else if (box[0] == 0 && box[1] == 0 && box[2] == 0) state = '0', empty += red > 0 ? 1 : 0;
      else foreign++;
      if (trace.empty() || trace.back() != state) trace += state;
    }
  });
  for (int i = 0; i < 100 && red == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GT(red.load(), 0) << "the first page never reached air";
  Status navigated = e.Navigate("gfx", kGreen);
  EXPECT_TRUE(navigated.ok()) << navigated.ToString();
  sampler.join();
  stop = true;
  runner.join();
  EXPECT_TRUE(green) << "the new page never reached air";
  EXPECT_EQ(foreign.load(), 0) << "pictures other than the two pages' were on air: " << trace;
  EXPECT_EQ(empty.load(), 0) << "the overlay left the air while its page changed: " << trace;
}

// A navigation that cannot load changes nothing: the old page stays on air with its
// template state, and takes calls.
TEST_F(EngineTest, ARefusedNavigationChangesNothing) {
  const char kTemplate[] =
      "data:text/html,<body style='margin:0;background:rgb(220,0,0)'><script>let v='none';"
      "function update(d){v=d}function read(){return v}</script></body>";
  auto engine = Engine::Start(OneSourceShow(kTemplate, scratch_.path()));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  std::atomic<bool> stop{false};
  std::jthread runner([&] { EXPECT_TRUE(e.Run(0, &stop).ok()); });
  ASSERT_TRUE(e.CallSource("gfx", "update('Ada')").ok());
  const std::string missing = "file://" + (scratch_.path() / "no-such-page.html").string();
  Status navigated = e.Navigate("gfx", missing);
  EXPECT_FALSE(navigated.ok());
  EXPECT_NE(navigated.message().find("no-such-page.html"), std::string_view::npos) << navigated.ToString();
  Result<std::string> read = e.CallSource("gfx", "read()");
  // Let a few ticks pass, then look at the program.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::shared_ptr<const Picture> p = e.Program();
  stop = true;
  runner.join();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "\"Ada\"");
  ASSERT_NE(p, nullptr);
  EXPECT_GT(p->pixels[(90 * p->width + 160) * 4], 200);  // Still the red page.
}


// A template call that never returns leaves the page's main thread stuck while its
// compositor still answers beginFrames: the worker's ping finds it, the browser is replaced,
// and the source comes back with the calls it had acknowledged.
TEST_F(EngineTest, APageStuckInACallIsFoundAndComesBackWithItsData) {
  const char kTemplate[] =
      "data:text/html,<body><script>let v='none';function update(d){v=d}function read(){return v}"
      "function hang(){for(;;){}}</script><p>template</p></body>";
  auto engine = Engine::Start(OneSourceShow(kTemplate, scratch_.path()));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  std::atomic<bool> stop{false};
  std::jthread runner([&] { EXPECT_TRUE(e.Run(0, &stop).ok()); });
  ASSERT_TRUE(e.CallSource("gfx", "update('Ada')").ok());
  EXPECT_FALSE(e.CallSource("gfx", "hang()").ok());
  Result<std::string> back = Result<std::string>(UnavailableError("not yet"));
  for (int i = 0; i < 600; ++i) {  // 30 s: a busy host gets the longer hang limit.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (e.CurrentStatus().sources[0].restarts == 0) continue;
    back = e.CallSource("gfx", "read()");
    if (back.ok()) break;
  }
  const ShowStatus status = e.CurrentStatus();
  stop = true;
  runner.join();
  EXPECT_GE(status.sources[0].restarts, 1);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, "\"Ada\"");
  const std::string log = ReadFile(scratch_.path() / "asrun.log");
  EXPECT_NE(log.find("restarting"), std::string::npos) << log;
}

// A page's uncaught exceptions reach the status, with when, and the as-run log.
TEST_F(EngineTest, APagesExceptionsAreShown) {
  const char kThrows[] =
      "data:text/html,<body><script>requestAnimationFrame(function f(){requestAnimationFrame(f);"
      "throw new Error('scoreboard feed missing')})</script></body>";
  auto engine = Engine::Start(OneSourceShow(kThrows, scratch_.path()));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(50, nullptr).ok());
  const SourceStatus s = (*engine)->CurrentStatus().sources[0];
  EXPECT_GT(s.page_errors, 0);
  EXPECT_NE(s.last_error.find("scoreboard feed missing"), std::string::npos) << s.last_error;
  EXPECT_GT(s.last_error_ms, 0);
  EXPECT_NE(ReadFile(scratch_.path() / "asrun.log").find("scoreboard feed missing"), std::string::npos);
}


// A page that takes 150 ms a frame: its draw times read as they were (they were capped at
// 100 ms), and its freshness says that it cannot have made a new picture every tick.
TEST_F(EngineTest, ASlowPageIsReportedAsSlow) {
  const char kSlow[] =
      "data:text/html,<body><div id=b style='width:20px;height:20px;background:red'></div><script>"
      "let n=0;requestAnimationFrame(function f(){const t=performance.now();"
      "while(performance.now()-t<150){}b.style.marginLeft=(++n*3)+'px';requestAnimationFrame(f)})"
      "</script></body>";
  auto engine = Engine::Start(OneSourceShow(kSlow, scratch_.path()));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(50, nullptr).ok());
  const SourceStatus s = (*engine)->CurrentStatus().sources[0];
  EXPECT_GE(s.draw_p99_ms, 150) << "draw times were capped";
  // At most one new picture per 150 ms at 25 fps: under 30 % of the ticks, now and overall.
  EXPECT_LT(s.freshness, 0.3);
  EXPECT_LT(s.freshness_show, 0.3);
  EXPECT_GT(s.freshness_show, 0);
  EXPECT_NEAR(s.fps, s.freshness * 25, 1e-9);
}


// Every frame is drawn for the tick it airs at: a page that paints its animation frame's
// time (as 16 bars, the low 16 bits of the wall-clock millisecond) shows, at an output frame
// with a new picture, that frame's own tick instant, or (a picture that was late, on a busy
// machine) an earlier tick's, never a later one. Before, every picture showed the instant
// one period earlier (drawn at tick n, shown at n+1), so none was on its tick.
TEST_F(EngineTest, EveryNewPictureAirsAtTheTickItWasDrawnFor) {
  ShowSpec show = TimeCodeShow(0, scratch_.path());
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(75, nullptr).ok());
  engine->reset();
  const std::string log = ReadFile(scratch_.path() / "asrun.log");
  const size_t at = log.find("tick 0 at ");
  ASSERT_NE(at, std::string::npos) << log;
  const double tick0_ms = std::stod(log.substr(at + 10));
  auto video = testing::DecodeVideo((scratch_.path() / "p.mkv").string());
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->rgb.size(), 75u);
  int last = -1, fresh = 0, on_tick = 0;
  for (size_t i = 0; i < video->rgb.size(); ++i) {
    const int code = ReadCode(*video, i);
    if (code == last) continue;  // A repeat.
    last = code;
    if (code == 0 && fresh == 0) continue;  // The first picture, before an animation frame ran.
    const auto expected = static_cast<int64_t>(std::floor(tick0_ms + 40.0 * static_cast<double>(i)));
    // The page's clock and the as-run log map monotonic time to the wall clock each on
    // their own: allow 3 ms (one period early, the old way, is 40).
    const int64_t off = ((code - expected) % 65536 + 65536 + 32768) % 65536 - 32768;
    // A whole number of periods, and not ahead of its tick.
    const int64_t periods = std::llround(static_cast<double>(off) / 40.0) * 40;
    EXPECT_LE(std::abs(off - periods), 3) << "frame " << i << " shows the page frame of " << off << " ms from its tick";
    EXPECT_LE(off, 3) << "frame " << i << " shows a page frame drawn for a later tick";
    if (std::abs(off) <= 3) ++on_tick;
    ++fresh;
  }
  EXPECT_GT(fresh, 10);
  EXPECT_GT(on_tick, 0) << "no picture aired at the tick it was drawn for";
}

// A page that cannot draw a frame per tick (each of its animation frames spins 50 ms, the
// period is 40) is drawn on a steady grid of every second tick or more: each new picture
// moves its content by the same number of periods and holds it as many ticks, so a crawl
// steps evenly at a lower rate. Before, each frame was drawn for whichever tick the worker
// could make next, one or two periods on: steps of 40 and 80 ms mixed about half and half
// (judder), and nothing said why.
TEST_F(EngineTest, APageTooSlowForEveryTickIsDrawnOnASteadyGrid) {
  ShowSpec show = TimeCodeShow(50, scratch_.path());
  show.sound.enabled = false;
  constexpr int kTicks = 300;
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(kTicks, nullptr).ok());
  const int64_t step = (*engine)->CurrentStatus().sources[0].step;
  engine->reset();
  EXPECT_GE(step, 2) << "a page drawing 50 ms frames at 40 ms ticks is still drawn every tick";
  // The as-run log says so, with the tick: pictures from 2 s after the last change on are
  // checked (the worker's first frames after it may still be on the old grid).
  const std::string log = ReadFile(scratch_.path() / "asrun.log");
  const std::string said = "source gfx is now drawn every " + std::to_string(step) + " ticks";
  const size_t at = log.rfind(said);
  ASSERT_NE(at, std::string::npos) << log;
  const size_t tick_at = log.rfind("tick=", at);
  ASSERT_NE(tick_at, std::string::npos) << log;
  const int64_t from = std::stoll(log.substr(tick_at + 5)) + 50;
  ASSERT_LT(from + 50, kTicks) << "the step settled too late to check: " << log;
  auto video = testing::DecodeVideo((scratch_.path() / "p.mkv").string());
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->rgb.size(), static_cast<size_t>(kTicks));
  // Each new picture: the periods its content moved since the last new one, and the ticks
  // it waited for it.
  int last = -1, even = 0, fresh = 0;
  size_t last_at = 0;
  for (size_t i = 0; i < video->rgb.size(); ++i) {
    const int code = ReadCode(*video, i);
    if (code == last) continue;
    if (last >= 0 && static_cast<int64_t>(last_at) >= from) {
      const int moved_ms = ((code - last) % 65536 + 65536) % 65536;
      const auto moved = std::lround(moved_ms / 40.0);
      const auto waited = static_cast<int64_t>(i - last_at);
      if (moved == step && waited == step) ++even;
      ++fresh;
    }
    last = code;
    last_at = i;
  }
  ASSERT_GT(fresh, 5) << "too few new pictures to judge";
  EXPECT_GE(even * 10, fresh * 8) << "of " << fresh << " new pictures after tick " << from << " only " << even
                                  << " moved " << step << " periods after " << step << " ticks";
}

// A 25 fps clip in a <video> on a 25 fps program: every new picture shows the clip frame for
// its own tick, so the clip advances exactly one frame per tick (before, the video's picture
// followed the media clock against frames begun a tick early: it advanced by exactly one
// frame on 19 of 594 ticks, holding and jumping by two at random). The clip's frame n paints
// n as 16 black and white bars; a picture that was late on a busy machine shows an earlier
// frame, never a later one.
TEST_F(EngineTest, AClipOnAirAdvancesOneFramePerTick) {
  constexpr int kWidth = 320, kHeight = 180, kClipFrames = 150;
  const fs::path clip = scratch_.path() / "clip.mp4";
  const std::string encode = "ffmpeg -v error -y -f rawvideo -pix_fmt gray -s 320x180 -r 25 -i - "
                             "-c:v libx264 -g 25 -pix_fmt yuv420p '" + clip.string() + "'";
  FILE* ffmpeg = popen(encode.c_str(), "w");
  ASSERT_NE(ffmpeg, nullptr);
  std::vector<uint8_t> frame(kWidth * kHeight);
  for (int n = 0; n < kClipFrames; ++n) {
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) frame[y * kWidth + x] = (n >> (x / 20)) & 1 ? 255 : 0;
    }
    fwrite(frame.data(), 1, frame.size(), ffmpeg);
  }
  ASSERT_EQ(pclose(ffmpeg), 0) << "ffmpeg could not make the test clip";
  const fs::path page = scratch_.path() / "clip.html";
  std::ofstream(page) << "<body style='margin:0;background:black'><video src=clip.mp4 autoplay "
                         "muted style='width:320px;height:180px;display:block'></video></body>";
  ShowSpec show = OneSourceShow("file://" + page.string(), scratch_.path());
  // Pictures only (the clip is silent): no sound server and no audio stream in the browser.
  // With them, beside another test's renders, one run had 50 of 88 new pictures in step
  // (the clip a frame ahead: its picture drawn late); alone and beside two CPU hogs, 6 of 6
  // passed either way.
  show.sound.enabled = false;
  auto engine = Engine::Start(show);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  ASSERT_TRUE((*engine)->Run(100, nullptr).ok());
  const SourceStatus status = (*engine)->CurrentStatus().sources[0];
  engine->reset();
  auto video = testing::DecodeVideo((scratch_.path() / "p.ts").string());
  ASSERT_TRUE(video.ok()) << video.status().ToString();
  ASSERT_EQ(video->rgb.size(), 100u);
  // For each new picture, the clip frame it shows minus its tick: one number while the clip
  // plays in step with the program.
  std::map<int, int> offsets;
  int last = -1, fresh = 0;
  for (size_t i = 0; i < video->rgb.size(); ++i) {
    const int code = ReadCode(*video, i);
    if (code == last || code == 0) continue;  // A repeat, or the clip not playing yet.
    last = code;
    ++offsets[code - static_cast<int>(i)];
    ++fresh;
  }
  ASSERT_GT(fresh, 40) << "the clip did not play";
  const auto mode = std::max_element(offsets.begin(), offsets.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_GE(mode->second * 10, fresh * 8) << "of " << fresh << " new pictures only " << mode->second
                                          << " show the clip frame in step with their ticks (drawn every "
                                          << status.step << " ticks, lead " << status.lead_ms << " ms)";
  EXPECT_EQ(offsets.rbegin()->first, mode->first) << "a picture shows a clip frame ahead of its tick";
}

}  // namespace
}  // namespace pagereel::live
