// What recording a film's font set costs (issue 18): render::HashFontFiles, which every
// render and shard runs once, against hashing the font files' contents, which it does not
// (Noto CJK alone is about 100 MB). Google Benchmark; bench/RESULTS.md has the figures.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "render/work_dir.h"

namespace {

namespace fs = std::filesystem;

void BM_HashFontFiles(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(pagereel::render::HashFontFiles());
}
BENCHMARK(BM_HashFontFiles)->Unit(benchmark::kMillisecond);

// The alternative: every byte of every font file under /usr/share/fonts.
void BM_HashFontContents(benchmark::State& state) {
  int64_t bytes = 0;
  int64_t files = 0;
  for (auto _ : state) {
    pagereel::render::Sha256 sha;
    std::vector<char> buffer(1 << 16);
    bytes = 0;
    files = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it("/usr/share/fonts", ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::ifstream in(it->path(), std::ios::binary);
      ++files;
      while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        sha.Update(buffer.data(), static_cast<size_t>(in.gcount()));
        bytes += in.gcount();
      }
    }
    benchmark::DoNotOptimize(sha.Hex());
  }
  state.counters["files"] = static_cast<double>(files);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_HashFontContents)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
