// The show's rules that need no browser: stagger phases and the checks of a show.
#include "live/show.h"

#include <gtest/gtest.h>

namespace pagereel::live {
namespace {

TEST(StaggerPhaseTest, WorkersTakeTheBitReversedPhases) {
  const std::vector<Rational> expected = {{0, 1}, {1, 2}, {1, 4}, {3, 4}, {1, 8}, {5, 8}, {3, 8}, {7, 8}};
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(StaggerPhase(static_cast<int>(k)), expected[k]) << "worker " << k;
  }
  EXPECT_EQ(StaggerPhase(8), Rational::Make(1, 16));
}

ShowSpec Minimal() {
  ShowSpec show;
  show.sources.push_back(SourceSpec{.id = "bug", .url = "data:text/html,x"});
  OutputSpec out;
  out.id = "file";
  out.stream.sink = {encode::Sink::Kind::kGrowingFile, "/tmp/x.ts", nullptr};
  show.outputs.push_back(out);
  return show;
}

TEST(ValidateShowTest, ABadShowIsRefusedNamingWhatIsWrong) {
  EXPECT_TRUE(ValidateShow(Minimal()).ok());
  auto refused = [](ShowSpec show, const std::string& words) {
    Status status = ValidateShow(show);
    EXPECT_FALSE(status.ok()) << words;
    EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
  };
  ShowSpec odd = Minimal();
  odd.width = 1279;
  refused(odd, "must be even");
  ShowSpec fast = Minimal();
  fast.fps = Rational{1000, 1};
  refused(fast, "rate 1000");
  ShowSpec twins = Minimal();
  twins.sources.push_back(twins.sources[0]);
  refused(twins, "two sources are called 'bug'");
  ShowSpec dim = Minimal();
  dim.sources[0].opacity = 1.5;
  refused(dim, "source 'bug': opacity");
  ShowSpec same = Minimal();
  same.outputs.push_back(same.outputs[0]);
  refused(same, "two outputs go to /tmp/x.ts");
  ShowSpec none = Minimal();
  none.outputs.clear();
  refused(none, "no outputs");
}

}  // namespace
}  // namespace pagereel::live
