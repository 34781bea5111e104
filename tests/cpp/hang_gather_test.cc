// The daemons' multi-host pieces on inline inputs: the peers file, which files of a snapshot are
// gathered and how they are checked (daemon/snapshot_gather.h), and the process checks before
// py-spy ptraces anything (ProcessRunsAs, ChildProcesses).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

#include "rankscope/base/utf8.h"
#include "rankscope/daemon/capture_spec.h"
#include "rankscope/daemon/peers.h"
#include "rankscope/daemon/proc_identity.h"
#include "rankscope/daemon/snapshot_gather.h"

namespace rankscope::daemon {
namespace {

TEST(Peers, ParsesHostPortLines) {
  auto p = ParsePeers("# the other hosts\nnode7:8383\n  10.0.0.8:9000  # comment\n\n");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].Label(), "node7:8383");
  EXPECT_EQ((*p)[1].host, "10.0.0.8");
  EXPECT_EQ((*p)[1].port, 9000);
  EXPECT_FALSE(ParsePeers("node7\n").ok());             // no port
  EXPECT_FALSE(ParsePeers("node7:0\n").ok());
  EXPECT_FALSE(ParsePeers("node7:99999\n").ok());
  EXPECT_FALSE(ParsePeers("no de:80\n").ok());          // not a host name
  EXPECT_FALSE(ParsePeers("node/../x:80\n").ok());
  auto bad = ParsePeers("a:1\nb:x\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
  std::string many;
  for (size_t i = 0; i <= kMaxPeers; ++i) many += fmt::format("h{}:80\n", i);
  EXPECT_FALSE(ParsePeers(many).ok());
}

// What a daemon asks its peers: the reason and the job's user travel; nothing else is accepted
// in their place.
TEST(Peers, SnapshotRequestCarriesReasonAndUser) {
  SnapshotSpec spec;
  spec.snapshot_id = "hang-1";
  spec.selection.job = "train";
  spec.hang_reason = "no step for 300 s";
  spec.as_uid = 1234;
  auto back = SnapshotSpecFromJson(ToJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->hang_reason, spec.hang_reason);
  EXPECT_EQ(back->as_uid, 1234);
  EXPECT_EQ(SnapshotSpecFromJson(nlohmann::json::parse(R"({"selection": {}})"))->as_uid, -1);
  for (const char* bad : {R"({"as_uid": -5})", R"({"as_uid": 4294967295})", R"({"as_uid": "0"})", R"({"as_uid": 1.5})"}) {
    EXPECT_FALSE(SnapshotSpecFromJson(nlohmann::json::parse(bad)).ok()) << bad;
  }
}

TEST(Gather, OnlyTheFilesOfASnapshot) {
  EXPECT_TRUE(SnapshotFileLimit("rank3.stacks.txt"));
  EXPECT_TRUE(SnapshotFileLimit("rank3.worker0.stacks.txt"));
  EXPECT_TRUE(SnapshotFileLimit("rank3.flightrecorder"));
  EXPECT_TRUE(SnapshotFileLimit("capture.manifest"));
  for (const char* name : {"hang.report", "../rank3.stacks.txt", ".rank3.stacks.txt", "rank.stacks.txt",
                           "telemetry.node.tsv", "rank3.pt.trace.json.gz", "pid7.stacks.txt", "capture.x.manifest"}) {
    EXPECT_FALSE(SnapshotFileLimit(name)) << name;
  }
  EXPECT_EQ(HostManifestName("node7:8383"), "capture.node7-8383.manifest");
}

TEST(Gather, StoresWhatItMayAndSaysWhyNotTheRest) {
  const auto capture = nlohmann::json::parse(R"({"id": "hang-1", "files": [
      "rank2.stacks.txt", "rank2.flightrecorder", "rank3.stacks.txt", "capture.manifest", "hang.report",
      "../../etc/passwd", 7, "rank4.stacks.txt"]})");
  std::map<std::string, std::string> stored;
  std::vector<std::string> asked;
  const FetchFile fetch = [&](const std::string& path, size_t max_bytes,
                              const std::function<Status(std::string_view)>& sink) -> Status {
    asked.push_back(path);
    if (path.find("rank4") != std::string::npos) return OutOfRange("more than {} MiB", max_bytes >> 20);
    RANKSCOPE_RETURN_IF_ERROR(sink("part one, "));
    return sink("part two");
  };
  const StoreFile store = [&](const std::string& name, const std::function<Status(int)>& write) -> Status {
    if (name == "rank3.stacks.txt") return FailedPrecondition("rank3.stacks.txt is already here");
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    Status s = write(fds[1]);
    ::close(fds[1]);
    char buf[256] = {};
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    ::close(fds[0]);
    stored[name] = std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
    return s;
  };
  GatherResult got = GatherSnapshot(capture, "node7:8383", fetch, store);
  EXPECT_EQ(got.stored, (std::vector<std::string>{"rank2.stacks.txt", "rank2.flightrecorder", "capture.node7-8383.manifest"}));
  EXPECT_EQ(got.ranks, (std::vector<int64_t>{2}));
  EXPECT_EQ(stored["capture.node7-8383.manifest"], "part one, part two");
  EXPECT_EQ(got.bytes, 3u * 18);
  EXPECT_EQ(asked[0], "/v1/captures/hang-1/files/rank2.stacks.txt");
  for (const std::string& a : asked) EXPECT_EQ(a.find(".."), std::string::npos) << a;
  ASSERT_EQ(got.errors.size(), 5u);  // rank3 (here already), hang.report, ../../etc/passwd, 7, rank4 (too big)
  EXPECT_NE(got.errors[0].find("already here"), std::string::npos);
  EXPECT_NE(got.errors[4].find("more than"), std::string::npos);
  // A description without an id or files: nothing fetched.
  asked.clear();
  got = GatherSnapshot(nlohmann::json::parse(R"({"id": 3, "files": ["rank2.stacks.txt"]})"), "x:1", fetch, store);
  EXPECT_TRUE(got.stored.empty() && asked.empty() && got.errors.size() == 1);
}

TEST(ProcessChecks, OnlyTheSameProcessAsTheSameUser) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  const uint64_t ticks = ProcessStartTicks(child);
  ASSERT_NE(ticks, 0u);
  EXPECT_TRUE(ProcessRunsAs(child, ticks, ::getuid()));
  EXPECT_FALSE(ProcessRunsAs(child, ticks, ::getuid() + 1));  // another user
  EXPECT_FALSE(ProcessRunsAs(child, ticks + 1, ::getuid()));  // another process of that pid
  EXPECT_EQ(ParentPid(child), ::getpid());
  const auto children = ChildProcesses(::getpid(), 64);
  EXPECT_NE(std::find(children.begin(), children.end(), child), children.end());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(ProcessRunsAs(child, ticks, ::getuid()));  // gone
}

// A child that drops to `uid` (when root) and sets its dumpable flag; ready once it has.
pid_t ChildWithDumpable(uid_t uid, bool dumpable) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    if (::getuid() == 0 && (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0)) ::_exit(1);
    ::prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0);  // a change of uid clears it: set it either way
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  (void)!::read(ready[0], &c, 1);
  ::close(ready[0]);
  ::close(ready[1]);
  return child;
}

// Not dumpable (a setuid/setgid exec, file capabilities, or PR_SET_DUMPABLE 0): its user could
// not ptrace it, so neither does the daemon's py-spy.
TEST(ProcessChecks, NotAProcessItsUserCouldNotTrace) {
  const uid_t uid = ::getuid() == 0 ? 65534 : ::getuid();
  const pid_t plain = ChildWithDumpable(uid, true), closed = ChildWithDumpable(uid, false);
  ASSERT_GT(plain, 0);
  ASSERT_GT(closed, 0);
  EXPECT_TRUE(ProcessRunsAs(plain, ProcessStartTicks(plain), uid));
  EXPECT_FALSE(ProcessRunsAs(closed, ProcessStartTicks(closed), uid));
  for (pid_t p : {plain, closed}) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
}

TEST(Utf8, ValidAndClippedBetweenCharacters) {
  EXPECT_EQ(ValidUtf8("plain"), "plain");
  EXPECT_EQ(ValidUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");           // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  EXPECT_EQ(ValidUtf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");           // cut off
  EXPECT_EQ(ValidUtf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");           // U+1F600 kept
  std::string e200;
  for (int i = 0; i < 200; ++i) e200 += "\xc3\xa9";
  const std::string clipped = ClipUtf8("a" + e200, 300);  // 300 bytes would cut an 'é' in two
  EXPECT_EQ(clipped.size(), 299u);
  EXPECT_EQ(ValidUtf8(clipped), clipped);
  EXPECT_EQ(ClipUtf8("abc", 10), "abc");
  // Printable: no ESC (a terminal would obey it), no other control character but tab and newline.
  EXPECT_EQ(PrintableUtf8("a\x1b[2Jb\tc\nd\x7f\xc2\x9b" "e\xc3\xa9"), "a\xef\xbf\xbd[2Jb\tc\nd\xef\xbf\xbd\xef\xbf\xbd" "e\xc3\xa9");
}

}  // namespace
}  // namespace rankscope::daemon
