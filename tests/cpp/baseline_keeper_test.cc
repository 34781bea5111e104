// The daemon's baseline keeper on a temporary output directory (no daemon, no job): which saved
// captures become their job's baseline, the file it writes, links it refuses to follow, and the
// baseline captures the disk budget must keep.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

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
  // An executable script standing in for `rankscope compare` (the keeper runs it as a child).
  std::string Script(const std::string& name, const std::string& body) {
    const fs::path p = root_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  // A job with a baseline and an automatic capture saved after it: the keeper compares them.
  void SaveAutomatic(BaselineKeeper& keeper, const std::string& job, const std::string& id) {
    fs::create_directories(root_ / job / "20261123-000000-base");
    ASSERT_TRUE(keeper.Keep(job, "20261123-000000-base", "test").ok());
    keeper.OnSaved(Saved(job, id, true));
  }
  // Waits (at most 60 s: the worker runs one child at a time) for a file to appear.
  bool Appears(const fs::path& p) {
    for (int i = 0; i < 6000 && !fs::exists(p); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return fs::exists(p);
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

// The automatic comparison runs `rankscope compare --baseline <out>/<job> <capture>` as a child:
// none of the daemon's descriptors or environment reach it, and its time and output are bounded. The
// comparisons run one after another, so a later one appearing means the earlier ones are done.
TEST_F(BaselineKeeperTest, TheComparisonChildIsConfinedAndBounded) {
  // A descriptor the daemon holds without O_CLOEXEC (a socket, a directory handle), and a
  // variable of its environment.
  ::setenv("RANKSCOPE_TEST_SECRET", "root's", 1);
  const int held = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 3);
  const std::string fake = Script("compare.sh", fmt::format(
      "case \"$*\" in\n"
      "  *slow*) sleep 30 ;;\n"
      "  *big*) head -c 3000000 /dev/zero ;;\n"
      "  *) if [ -e /proc/$$/fd/{} ] || [ -n \"$RANKSCOPE_TEST_SECRET\" ]; then echo '{{\"leaked\": true}}'; "
      "else echo \"{{\\\"args\\\": \\\"$*\\\"}}\"; fi ;;\n"
      "esac", held));
  BaselineKeeper::Options o{root_, false, fake};
  o.compare_timeout = std::chrono::seconds(2);
  o.max_report_bytes = 1u << 20;
  BaselineKeeper keeper(o);
  SaveAutomatic(keeper, "slow", "auto-1");  // killed at the deadline: no report
  SaveAutomatic(keeper, "big", "auto-2");   // more output than allowed: no report
  SaveAutomatic(keeper, "fine", "auto-3");
  ASSERT_TRUE(Appears(root_ / "fine/auto-3/baseline-comparison"));
  const std::string report = Read(root_ / "fine/auto-3/baseline-comparison");
  EXPECT_EQ(report.find("leaked"), std::string::npos) << report;
  EXPECT_NE(report.find(fmt::format("compare --baseline {} {}", (root_ / "fine").string(),
                                    (root_ / "fine/auto-3").string())), std::string::npos) << report;
  EXPECT_FALSE(fs::exists(root_ / "slow/auto-1/baseline-comparison"));
  EXPECT_FALSE(fs::exists(root_ / "big/auto-2/baseline-comparison"));
  ::close(held);
  ::unsetenv("RANKSCOPE_TEST_SECRET");
}

}  // namespace
}  // namespace rankscope::daemon
