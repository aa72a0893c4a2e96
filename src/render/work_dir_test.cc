#include "render/work_dir.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/scratch_dir.h"

namespace pagereel::render {
namespace {

namespace fs = std::filesystem;

FilmRecord Film() {
  FilmRecord f;
  f.url = "file:///tmp/page.html";
  f.page_files = "abc";
  f.width = 640;
  f.height = 360;
  f.fps = Rational{30, 1};
  f.frames = 90;
  f.segment_frames = 30;
  f.quality = 90;
  f.kind = encode::FilmKind::kMp4;
  f.encoder = "H.264";
  f.timezone = "UTC";
  f.locale = "en-US";
  f.browser = "HeadlessChrome/1";
  return f;
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class WorkDirTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"work_dir"};
  std::string dir_ = (scratch_.path() / ".film.mp4.pagereel").string();

  SegmentRecord Finish(const WorkDir& work, int64_t index, const std::string& contents) {
    WriteFile(work.SegmentPath(index), contents);
    SegmentRecord r;
    r.index = index;
    r.first_frame = index * 30;
    r.frame_count = 30;
    r.file = work.SegmentFileName(index);
    r.bytes = static_cast<int64_t>(contents.size());
    r.file_sha256 = *HashPath(work.SegmentPath(index));
    EXPECT_TRUE(work.Record(r).ok());
    return r;
  }
};

TEST_F(WorkDirTest, FinishedSegmentsSurviveReopening) {
  {
    Result<WorkDir> work = WorkDir::Open(dir_, Film(), OnChange::kRefuse);
    ASSERT_TRUE(work.ok()) << work.status().ToString();
    EXPECT_EQ(work->SegmentFileName(2), "seg-000002.mp4");
    Finish(*work, 0, "zero");
    Finish(*work, 2, "two");
  }
  Result<WorkDir> again = WorkDir::Open(dir_, Film(), OnChange::kRefuse);
  ASSERT_TRUE(again.ok());
  std::vector<std::string> problems;
  std::vector<SegmentRecord> done = again->Finished(true, &problems);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].index, 0);
  EXPECT_EQ(done[1].index, 2);
  EXPECT_TRUE(problems.empty());
}

TEST_F(WorkDirTest, ADamagedOrMissingSegmentIsDroppedWithAReason) {
  Result<WorkDir> work = WorkDir::Open(dir_, Film(), OnChange::kRefuse);
  ASSERT_TRUE(work.ok());
  Finish(*work, 0, "zero");
  Finish(*work, 1, "one");
  Finish(*work, 2, "two");
  fs::remove(work->SegmentPath(0));
  WriteFile(work->SegmentPath(1), "onf");  // Same size, other bytes.
  WriteFile(work->SegmentPath(2), "twotwo");
  std::vector<std::string> problems;
  EXPECT_TRUE(work->Finished(true, &problems).empty());
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("missing"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("changed"), std::string::npos) << problems[1];
  EXPECT_NE(problems[2].find("bytes"), std::string::npos) << problems[2];
  // Without reading contents, only the size is checked.
  EXPECT_EQ(work->Finished(false, nullptr).size(), 1u);
}

TEST_F(WorkDirTest, AnotherFilmIsRefusedNamingWhatChangedUnlessStartingOver) {
  {
    Result<WorkDir> work = WorkDir::Open(dir_, Film(), OnChange::kRefuse);
    ASSERT_TRUE(work.ok());
    Finish(*work, 0, "zero");
  }
  FilmRecord other = Film();
  other.width = 1280;
  other.page_files = "def";
  Result<WorkDir> refused = WorkDir::Open(dir_, other, OnChange::kRefuse);
  ASSERT_FALSE(refused.ok());
  std::string message(refused.status().message());
  EXPECT_NE(message.find("width: was 640, now 1280"), std::string::npos) << message;
  EXPECT_NE(message.find("the page's files changed"), std::string::npos) << message;
  EXPECT_NE(message.find("--restart"), std::string::npos) << message;

  Result<WorkDir> fresh = WorkDir::Open(dir_, other, OnChange::kStartOver);
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->Finished(true, nullptr).empty());
  Result<WorkDir> join = WorkDir::OpenForJoin(dir_);
  ASSERT_TRUE(join.ok());
  EXPECT_EQ(join->film().width, 1280);
}

TEST_F(WorkDirTest, JoinRefusesAFolderThatIsNotAWorkFolder) {
  Result<WorkDir> none = WorkDir::OpenForJoin((scratch_.path() / "nothing").string());
  ASSERT_FALSE(none.ok());
  fs::create_directories(scratch_.path() / "empty");
  Result<WorkDir> empty = WorkDir::OpenForJoin((scratch_.path() / "empty").string());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(std::string(empty.status().message()).find("film.json"), std::string::npos);
  WriteFile(scratch_.path() / "empty" / "film.json", "{not json");
  Result<WorkDir> bad = WorkDir::OpenForJoin((scratch_.path() / "empty").string());
  ASSERT_FALSE(bad.ok());
}

TEST_F(WorkDirTest, LocalFilesHashFollowsContents) {
  fs::path page = scratch_.path() / "page.html";
  WriteFile(page, "<p>one</p>");
  std::vector<std::string> urls = {"file://" + page.string(), "https://example.com/x.js"};
  std::string a = HashLocalFiles(urls);
  EXPECT_EQ(a, HashLocalFiles({urls[1], urls[0]}));  // Order does not matter.
  WriteFile(page, "<p>two</p>");
  EXPECT_NE(a, HashLocalFiles(urls));
  EXPECT_EQ(Sha256().Hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace pagereel::render
