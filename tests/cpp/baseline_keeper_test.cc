// The daemon's baseline keeper on a temporary output directory (no daemon, no job): which saved
// captures become their job's baseline, the file it writes, links it refuses to follow, and the
// baseline captures the disk budget must keep.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rankscope/compare/baseline_file.h"
#include "rankscope/daemon/baseline_keeper.h"

namespace rankscope::daemon {
namespace {

namespace fs = std::filesystem;

class BaselineKeeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("rankscope_baseline_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  Capture Saved(const std::string& job, const std::string& id, bool all_done, bool baseline = false) {
    fs::create_directories(root_ / job / id);
    Capture c;
    c.id = id;
    c.job = job;
    c.dir = root_ / job / id;
    c.trace.baseline = baseline;
    c.targets.resize(2);
    for (auto& t : c.targets) t.state = TargetState::kDone;
    if (!all_done) c.targets[1].state = TargetState::kFailed;
    return c;
  }
  std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path root_;
};

TEST_F(BaselineKeeperTest, TheFirstHealthyCaptureOfAJobIsItsBaseline) {
  BaselineKeeper keeper({root_, /*first_healthy=*/true, /*compare_bin=*/""});
  keeper.OnSaved(Saved("job1", "20261123-000000-aaaa", /*all_done=*/false));  // a rank failed: not healthy
  EXPECT_FALSE(fs::exists(root_ / "job1/baseline"));
  keeper.OnSaved(Saved("job1", "auto-20261123-000001-bbbb", true));  // automatic: the job was slow
  EXPECT_FALSE(fs::exists(root_ / "job1/baseline"));
  keeper.OnSaved(Saved("job1", "20261123-000002-cccc", true));
  auto b = compare::ParseBaselineFile(Read(root_ / "job1/baseline"), "baseline");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->capture, "20261123-000002-cccc");
  EXPECT_EQ(b->reason, "first healthy capture");
  EXPECT_GT(b->kept_unix_ms, 0);
  keeper.OnSaved(Saved("job1", "20261123-000003-dddd", true));  // the first one stays
  EXPECT_EQ(compare::ParseBaselineFile(Read(root_ / "job1/baseline"), "b")->capture, "20261123-000002-cccc");
  // ... unless a request asks for a new baseline.
  keeper.OnSaved(Saved("job1", "20261123-000004-eeee", true, /*baseline=*/true));
  b = compare::ParseBaselineFile(Read(root_ / "job1/baseline"), "b");
  EXPECT_EQ(b->capture, "20261123-000004-eeee");
  EXPECT_EQ(b->reason, "trace --baseline");
  EXPECT_EQ(keeper.Protected(), (std::set<std::string>{"job1/20261123-000004-eeee"}));
  // compare --baseline finds it by job name or by directory.
  auto found = compare::FindBaseline("job1", root_.string());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->capture_dir, (root_ / "job1/20261123-000004-eeee").string());
  EXPECT_TRUE(compare::FindBaseline((root_ / "job1").string(), "").ok());
}

TEST_F(BaselineKeeperTest, WithoutTheOptionOnlyARequestKeepsABaseline) {
  BaselineKeeper keeper({root_, /*first_healthy=*/false, ""});
  keeper.OnSaved(Saved("job2", "20261123-000000-aaaa", true));
  EXPECT_FALSE(fs::exists(root_ / "job2/baseline"));
  auto missing = compare::FindBaseline("job2", root_.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("rankscope trace --baseline"), std::string::npos);
  keeper.OnSaved(Saved("job2", "20261123-000001-bbbb", /*all_done=*/false, /*baseline=*/true));  // incomplete
  EXPECT_FALSE(fs::exists(root_ / "job2/baseline"));
}

TEST_F(BaselineKeeperTest, LinksAreNeverFollowed) {
  BaselineKeeper keeper({root_, true, ""});
  const fs::path elsewhere = root_.parent_path() / (root_.filename().string() + "_elsewhere");
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, root_ / "job3");  // a job directory replaced by a link
  EXPECT_FALSE(keeper.Keep("job3", "20261123-000000-aaaa", "test").ok());
  EXPECT_FALSE(fs::exists(elsewhere / "baseline"));
  fs::create_directories(root_ / "job4");
  fs::create_symlink(elsewhere / "target", root_ / "job4/.baseline.tmp");  // a planted temporary name
  EXPECT_TRUE(keeper.Keep("job4", "20261123-000000-aaaa", "test").ok());
  EXPECT_FALSE(fs::exists(elsewhere / "target"));
  EXPECT_FALSE(keeper.Keep("../job4", "x", "test").ok());  // names are single path components
  // A baseline file that is a link (to a file elsewhere) is not read, so protects nothing.
  std::ofstream(elsewhere / "baseline") << compare::BaselineFileText({"job5", "20261123-000000-aaaa", "x", 1, ""});
  fs::create_directories(root_ / "job5/20261123-000000-aaaa");
  fs::create_symlink(elsewhere / "baseline", root_ / "job5/baseline");
  EXPECT_EQ(keeper.Protected(), (std::set<std::string>{"job4/20261123-000000-aaaa"}));
  fs::remove_all(elsewhere);
}

}  // namespace
}  // namespace rankscope::daemon
