// The raw Chromium floor for bench/render_bench.sh: what the browser alone costs to produce
// a film's screenshots with the same method pagereel uses (begin-frame control, virtual time,
// beginFrame + screenshot), with nothing done with the bytes. N lanes each launch a browser,
// load the page and take frames/N screenshots; prints one JSON line.
//
// raw_floor URL WIDTH HEIGHT FRAMES LANES [png]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "browser/browser.h"
#include "capture/page.h"

using namespace pagereel;

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: raw_floor URL WIDTH HEIGHT FRAMES LANES [png]\n");
    return 2;
  }
  capture::PageOptions options;
  options.url = argv[1];
  options.width = std::atoi(argv[2]);
  options.height = std::atoi(argv[3]);
  const int64_t frames = std::atoll(argv[4]);
  const int lanes = std::atoi(argv[5]);
  options.alpha = argc > 6 && std::string(argv[6]) == "png";

  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(lanes));
  for (int lane = 0; lane < lanes; ++lane) {
    threads.emplace_back([&, lane] {
      auto b = browser::Browser::Launch({});
      if (!b.ok()) { errors[lane] = b.status().ToString(); return; }
      auto page = capture::Page::Open(**b, options);
      if (!page.ok()) { errors[lane] = page.status().ToString(); return; }
      int64_t share = frames / lanes + (lane < frames % lanes ? 1 : 0);
      for (int64_t n = 0; n < share; ++n) {
        auto frame = (*page)->Capture(n);
        if (!frame.ok()) { errors[lane] = frame.status().ToString(); return; }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (!e.empty()) { std::fprintf(stderr, "raw_floor: %s\n", e.c_str()); return 1; }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"frames\":%lld,\"lanes\":%d,\"wall_s\":%.3f,\"fps\":%.2f}\n",
              static_cast<long long>(frames), lanes, seconds, static_cast<double>(frames) / seconds);
  return 0;
}
