#include "app/render_app.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace pagereel::app {
namespace {

TEST(RenderAppTest, InputsBecomeUrls) {
  EXPECT_EQ(*InputToUrl("https://example.test/a"), "https://example.test/a");
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "pagereel app test dir";
  fs::create_directories(dir);
  std::ofstream(dir / "index.html") << "<p>hi</p>";
  Result<std::string> url = InputToUrl(dir.string());
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->rfind("file:///", 0), 0u);
  EXPECT_NE(url->find("pagereel%20app%20test%20dir/index.html"), std::string::npos) << *url;
  fs::remove(dir / "index.html");
  EXPECT_NE(InputToUrl(dir.string()).status().message().find("no index.html"), std::string_view::npos);
  fs::remove_all(dir);
  EXPECT_NE(InputToUrl("/no/such/page.html").status().message().find("does not exist"),
            std::string_view::npos);
  EXPECT_FALSE(InputToUrl("ftp://x/y").ok());
}

TEST(RenderAppTest, SizesAreCheckedByName) {
  EXPECT_EQ(*ParseSize("1920x1080"), std::make_pair(1920, 1080));
  for (const char* bad : {"0x720", "-1x5", "1280", "1280x", "x720", "99999x99999", "12ax5"}) {
    Result<std::pair<int, int>> r = ParseSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string_view::npos);
  }
}

TEST(RenderAppTest, LanesFollowCoresAndMemory) {
  const int64_t gib = int64_t{1} << 30;
  EXPECT_EQ(DefaultLanes(1280, 720, 2, 24 * gib), 2);
  EXPECT_EQ(DefaultLanes(1280, 720, 16, 3 * gib), 3);   // Memory allows three.
  EXPECT_EQ(DefaultLanes(1920, 1080, 8, 1 * gib), 1);   // Never fewer than one.
  EXPECT_EQ(DefaultLanes(1280, 720, 8, -1), 1);         // Unknown memory: be careful.
}

}  // namespace
}  // namespace pagereel::app
