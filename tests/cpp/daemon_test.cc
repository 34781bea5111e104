// The daemon's pieces, without PyTorch: Kineto wire format and config text, safe names, the
// output directory's confinement and budget, registry expiry, target selection, and a real
// datagram round trip through the Kineto endpoint the way libkineto's client does it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/collector_endpoint.h"
#include "rankscope/daemon/dir_handle.h"
#include "rankscope/daemon/token_file.h"
#include "rankscope/daemon/kineto_config.h"
#include "rankscope/daemon/kineto_endpoint.h"
#include "rankscope/daemon/kineto_staging.h"
#include "rankscope/daemon/kineto_wire.h"
#include "rankscope/daemon/output_dir.h"
#include "rankscope/daemon/step_alignment.h"
#include "rankscope/daemon/target_selection.h"

namespace fs = std::filesystem;
namespace rd = rankscope::daemon;

namespace {

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / fmt::format("rankscope-daemon-test-{}-{}", name, ::getpid());
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

rd::ProcessInfo Proc(int32_t pid, int32_t rank, const std::string& job, uint8_t kinds = rd::kTrackerClient) {
  rd::ProcessInfo p;
  p.pid = pid;
  p.identity.rank = rank;
  p.identity.job = job;
  p.identity.command = "python train.py";
  p.kinds = kinds;
  p.kineto_type = 3;
  return p;
}

}  // namespace

TEST(KinetoWire, RequestRoundTripMatchesTheClientLayout) {
  rd::kineto::Request req{3, 42, {1234, 1000, 1}};
  auto bytes = rd::kineto::EncodeRequest(req);
  ASSERT_EQ(bytes.size(), 40u + 16u + 3u * 4u);  // header + {type,n,jobid} + pids
  uint64_t size = 0;
  std::memcpy(&size, bytes.data(), 8);
  EXPECT_EQ(size, 28u);
  EXPECT_STREQ(reinterpret_cast<const char*>(bytes.data() + 8), "req");
  auto msg = rd::kineto::ParseMessage(bytes);
  ASSERT_TRUE(msg.ok());
  EXPECT_EQ(msg->type, "req");
  auto back = rd::kineto::ParseRequest(msg->payload);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->type, 3);
  EXPECT_EQ(back->job_id, 42);
  EXPECT_EQ(back->pids, (std::vector<int32_t>{1234, 1000, 1}));
}

TEST(KinetoWire, RejectsMalformedDatagrams) {
  std::vector<uint8_t> short_one(20, 0);
  EXPECT_FALSE(rd::kineto::ParseMessage(short_one).ok());
  auto bytes = rd::kineto::EncodeRequest({2, 0, {77}});
  bytes.push_back(0);  // size field no longer matches
  EXPECT_FALSE(rd::kineto::ParseMessage(bytes).ok());
  std::vector<uint8_t> payload(16, 0);
  int32_t n = 1000;
  std::memcpy(payload.data() + 4, &n, 4);
  EXPECT_FALSE(rd::kineto::ParseRequest(payload).ok());
}

TEST(KinetoWire, ConfigReplyIsNotNulTerminated) {
  auto bytes = rd::kineto::EncodeConfigReply("A=1\n");
  ASSERT_EQ(bytes.size(), 44u);
  uint64_t size = 0;
  std::memcpy(&size, bytes.data(), 8);
  EXPECT_EQ(size, 4u);
  EXPECT_EQ(std::string(bytes.begin() + 40, bytes.end()), "A=1\n");
}

TEST(KinetoConfig, IterationAndDurationModes) {
  rd::TraceSpec s;
  s.trace_id = "t1";
  s.steps = 3;
  s.roundup = 50;
  s.start_step = 1234;  // a collector step: never given to Kineto, which counts its own
  s.with_stack = true;
  std::string c = rd::BuildKinetoConfig(s, "/tmp/x/rank2.json", 0);
  EXPECT_NE(c.find("ACTIVITIES_LOG_FILE=/tmp/x/rank2.json\n"), std::string::npos);
  EXPECT_NE(c.find("PROFILE_START_ITERATION=0\n"), std::string::npos);
  EXPECT_NE(c.find("PROFILE_START_ITERATION_ROUNDUP=50\n"), std::string::npos);
  EXPECT_NE(c.find("ACTIVITIES_ITERATIONS=3\n"), std::string::npos);
  EXPECT_NE(c.find("PROFILE_WITH_STACK=true\n"), std::string::npos);
  EXPECT_NE(c.find("REQUEST_TRACE_ID=t1\n"), std::string::npos);
  rd::TraceSpec d;
  d.trace_id = "t2";
  d.duration_ms = 700;
  std::string dc = rd::BuildKinetoConfig(d, "/tmp/y.json", 1000);
  EXPECT_NE(dc.find("PROFILE_START_TIME=7000\n"), std::string::npos);
  EXPECT_NE(dc.find("ACTIVITIES_DURATION_MSECS=700\n"), std::string::npos);
  EXPECT_EQ(dc.find("ITERATION"), std::string::npos);
}

TEST(KinetoConfig, OutputPathInsertsThePidLikeKineto) {
  EXPECT_EQ(rd::KinetoOutputPath("/tmp/a/rank1.json", 99), "/tmp/a/rank1_99.json");
  EXPECT_EQ(rd::KinetoOutputPath("/tmp/a/t.pt.trace.json", 99), "/tmp/a/t_99.pt.trace.json");
  EXPECT_EQ(rd::KinetoFallbackPath(5), "/tmp/libkineto_activities_5.json");
}

TEST(CaptureSpec, SafeNamesKeepRequestsInsideTheOutputDirectory) {
  EXPECT_TRUE(rd::IsSafeName("job-1.a_b"));
  for (const char* bad : {"", ".", "..", "../x", "a/b", "/abs", ".hidden", "a b"}) EXPECT_FALSE(rd::IsSafeName(bad)) << bad;
  EXPECT_EQ(rd::SanitizeName("../etc/passwd"), "_._etc_passwd");  // same rule as rankscope/_identity.py
  EXPECT_TRUE(rd::IsSafeName(rd::SanitizeName("..")));
  nlohmann::json j = {{"trace_id", "../../etc"}, {"steps", 3}};
  EXPECT_FALSE(rd::TraceSpecFromJson(j).ok());
  EXPECT_FALSE(rd::TraceSpecFromJson({{"steps", 3}, {"duration_ms", 5}}).ok());
  EXPECT_FALSE(rd::TraceSpecFromJson({{"steps", "three"}}).ok());  // type errors are statuses, not throws
  auto ok = rd::TraceSpecFromJson({{"steps", 3}, {"selection", {{"job", "j"}, {"ranks", {1, 2}}}}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->selection.ranks, (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(rd::IsSafeName(ok->trace_id));
}

TEST(OutputDir, ConfinesAndEvictsOldestFirst) {
  fs::path root = TempDir("out");
  auto out = rd::OutputDir::Open(root.string(), /*budget_bytes=*/2500);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const rd::FileOwner me{::geteuid(), ::getegid(), 0644};
  EXPECT_FALSE((*out)->MakeCaptureDir("..", "x", me).ok());
  EXPECT_FALSE((*out)->MakeCaptureDir("job", "../../x", me).ok());
  EXPECT_FALSE((*out)->Contains("/etc/passwd"));
  EXPECT_FALSE((*out)->Contains((*out)->root() / ".." / "x"));
  for (const char* id : {"c1", "c2", "c3"}) {
    auto dir = (*out)->MakeCaptureDir("job", id, me);
    ASSERT_TRUE(dir.ok());
    EXPECT_TRUE((*out)->Contains(*dir));
    std::ofstream(*dir / "rank0.pt.trace.json.gz") << std::string(1000, 'x');
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct change times
  }
  EXPECT_FALSE((*out)->MakeCaptureDir("job", "c1", me).ok());  // never an existing one
  EXPECT_EQ((*out)->List().bytes, 3000u);
  EXPECT_EQ((*out)->UsedBytes(), 3000u);
  auto ev = (*out)->EnforceBudget({"job/c1"});  // c1 is still being written
  ASSERT_EQ(ev.removed, std::vector<std::string>{"job/c2"});
  EXPECT_EQ(ev.used_after, 2000u);
  EXPECT_FALSE(ev.over_budget);
  EXPECT_TRUE(fs::exists(root / "job" / "c1"));
  EXPECT_TRUE(fs::exists(root / "job" / "c3"));
  fs::remove_all(root);
}

TEST(ProcessRegistry, ExpiresSilentProcesses) {
  rd::ProcessRegistry reg{std::chrono::seconds(1)};
  rd::ProcIdentity id;
  id.rank = 0;
  id.start_ticks = rd::ProcessStartTicks(::getpid());
  const int32_t me = ::getpid();
  EXPECT_TRUE(*reg.SeenKineto(me, 3, 0, {me, 1}, id));
  EXPECT_FALSE(*reg.SeenKineto(me, 3, 0, {me, 1}, id));
  EXPECT_EQ(reg.List().size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE(reg.List().empty());
  EXPECT_EQ(reg.expired_total(), 1u);
}

TEST(TargetSelection, RealRanksNotLaunchersAndClearReasons) {
  std::vector<rd::ProcessInfo> procs = {Proc(1, -1, "j", rd::kKinetoClient), Proc(2, 0, "j"), Proc(3, 1, "j")};
  auto sel = rd::SelectTargets(procs, {}, false);
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->processes.size(), 2u);
  EXPECT_EQ(sel->processes[0].pid, 2);
  ASSERT_EQ(sel->notes.size(), 1u);
  EXPECT_NE(sel->notes[0].find("no RANK"), std::string::npos);

  auto none = rd::SelectTargets({}, {}, false);
  EXPECT_NE(none.status().message().find("no training process is registered"), std::string::npos);
  auto wrong_job = rd::SelectTargets(procs, {"other", {}}, false);
  EXPECT_NE(wrong_job.status().message().find("jobs here: j (3 processes)"), std::string::npos);
  auto wrong_rank = rd::SelectTargets(procs, {"", {7}}, false);
  EXPECT_NE(wrong_rank.status().message().find("ranks here: 0,1"), std::string::npos);
  procs.push_back(Proc(4, 0, "k"));
  auto two_jobs = rd::SelectTargets(procs, {}, false);
  EXPECT_NE(two_jobs.status().message().find("--job"), std::string::npos);
  // Snapshots need the collector: a Kineto-only rank is left out with the reason.
  auto snap = rd::SelectTargets({Proc(5, 0, "k", rd::kKinetoClient), Proc(6, 1, "k")}, {}, true);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->processes.size(), 1u);
  EXPECT_NE(snap->notes[0].find("Kineto mode"), std::string::npos);
}

TEST(TargetSelection, ALocalUserCapturesOnlyTheirOwnProcesses) {
  std::vector<rd::ProcessInfo> procs = {Proc(1, 0, "j"), Proc(2, 1, "j"), Proc(3, 0, "k")};
  procs[0].identity.uid = procs[1].identity.uid = 1001;
  procs[2].identity.uid = 1002;
  auto mine = rd::SelectTargets(procs, {}, false, rd::Requester{1002});
  ASSERT_TRUE(mine.ok()) << mine.status().message();  // "several jobs" does not count others' jobs
  EXPECT_EQ(mine->job, "k");
  auto theirs = rd::SelectTargets(procs, {"j", {}}, false, rd::Requester{1002});
  EXPECT_FALSE(theirs.ok());
  auto stranger = rd::SelectTargets(procs, {}, false, rd::Requester{1003});
  EXPECT_NE(stranger.status().message().find("belongs to you"), std::string::npos);
  EXPECT_EQ(rd::SelectTargets(procs, {"j", {}}, false, rd::Requester{0})->processes.size(), 2u);  // root: any
}

TEST(StepAlignment, StartsAfterTheFurthestRank) {
  auto now = rd::Clock::now();
  rd::ProcessInfo a = Proc(1, 0, "j"), b = Proc(2, 1, "j");
  a.step = 100, a.step_ms = 10, a.last_seen = now - std::chrono::milliseconds(50);  // ~105 now
  b.step = 98, b.step_ms = 10, b.last_seen = now;
  EXPECT_EQ(rd::EstimateCurrentStep(a, now), 105);
  EXPECT_EQ(rd::AlignedStartStep({a, b}, now, 0), 107);
  EXPECT_EQ(rd::AlignedStartStep({a, b}, now, 10), 110);
  EXPECT_EQ(rd::RoundUp(110, 10), 110);
}

// A client that talks like libkineto's IpcFabricConfigClient: its own abstract name with the
// trailing NUL, a 'req' to "dynolog", the reply read from its socket.
TEST(KinetoEndpoint, AnswersPollsAndHandsOutAConfigurationOnce) {
  fs::path dir = TempDir("kineto");
  fs::path out_root = dir / "out";
  setenv("KINETO_IPC_SOCKET_DIR", dir.c_str(), 1);  // path mode: no clash with a real dynolog
  rd::ProcessRegistry reg{std::chrono::seconds(60)};
  auto out = rd::OutputDir::Open(out_root.string(), 0);
  ASSERT_TRUE(out.ok());
  auto staging = rd::KinetoStaging::Open((dir / "staging").string());
  ASSERT_TRUE(staging.ok()) << staging.status().message();
  rd::CaptureManager::Options opts;
  opts.host = "test";
  opts.kineto_staging = staging->get();
  rd::CaptureManager captures(opts, &reg, out->get(), [](const rd::UnixAddress&, const nlohmann::json&) { return rankscope::OkStatus(); });
  auto ep = rd::KinetoEndpoint::Start(dir.string(), &reg, &captures);
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  EXPECT_EQ((*ep)->address(), (dir / "dynolog").string());

  auto me = rd::UnixAddress::Path((dir / "dynoconfigclient-test").string());
  auto client = rd::UnixDgramSocket::Bind(*me);
  ASSERT_TRUE(client.ok());
  auto daemon_addr = rd::UnixAddress::Path((dir / "dynolog").string());
  // Our own pid: the endpoint reads /proc/<pid> for RANK (absent here) and the job.
  auto poll = [&](int32_t type) {
    EXPECT_TRUE(client->SendTo(*daemon_addr, rd::kineto::EncodeRequest({type, 0, {::getpid(), 1}})).ok());
    std::vector<uint8_t> buf(65536);
    struct timeval tv {2, 0};
    setsockopt(client->fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    auto d = client->Receive(buf);
    EXPECT_TRUE(d.ok());
    auto msg = rd::kineto::ParseMessage({buf.data(), d->size});
    EXPECT_TRUE(msg.ok());
    EXPECT_EQ(msg->type, "req");
    return std::string(msg->payload.begin(), msg->payload.end());
  };
  EXPECT_EQ(poll(3), "");  // registers; nothing pending
  EXPECT_TRUE(reg.Contains(::getpid()));

  rd::TraceSpec spec;
  spec.trace_id = "unit";
  spec.steps = 2;
  auto started = captures.StartTrace(spec);
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(poll(1), "");  // activity profiler busy: keep it pending
  const std::string config = poll(3);
  EXPECT_NE(config.find("ACTIVITIES_ITERATIONS=2"), std::string::npos) << config;
  const fs::path staged = dir / "staging" / fmt::format("unit.{}", ::getpid()) / "rank0.json";
  EXPECT_NE(config.find("ACTIVITIES_LOG_FILE=" + staged.string()), std::string::npos) << config;
  EXPECT_EQ(poll(3), "");  // handed out once

  // Kineto writes <file>.tmp and renames it: the daemon compresses it into the output dir.
  const std::string written = rd::KinetoOutputPath(staged.string(), ::getpid());
  std::ofstream(written + ".tmp") << R"({"traceEvents": []})";
  fs::rename(written + ".tmp", written);
  for (int i = 0; i < 50 && !captures.Describe("unit")->value("finished", false); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto desc = *captures.Describe("unit");
  ASSERT_TRUE(desc["finished"].get<bool>()) << desc.dump(2);
  EXPECT_EQ(desc["targets"][0]["state"], "done");
  EXPECT_TRUE(fs::exists(desc["dir"].get<std::string>() + "/rank0.pt.trace.json.gz"));
  EXPECT_FALSE(fs::exists(written));
  unsetenv("KINETO_IPC_SOCKET_DIR");
  fs::remove_all(dir);
}

TEST(KinetoEndpoint, AbstractNameCountsTheTrailingNul) {
  auto a = rd::UnixAddress::Abstract("dynolog", true);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->len, sizeof(sa_family_t) + 7 + 2);  // = 11, as KINETO_IPC.md says
  EXPECT_EQ(a->ToString(), "@dynolog\\0");
  auto b = rd::UnixAddress::Abstract("dynolog", false);
  EXPECT_FALSE(*a == *b);
}

// ------------------------------------------------------------------------------------------------
// What a local user can plant or claim (docs/security.md); the end-to-end replays of the attacks
// are in tests/python/test_security.py.

namespace {

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(DirHandle, WritesReplaceAPlantedSymlinkInsteadOfFollowingIt) {
  fs::path dir = TempDir("dirhandle");
  fs::create_directories(dir / "d");
  std::ofstream(dir / "outside") << "root's file";
  fs::create_symlink(dir / "outside", dir / "d" / "capture.manifest");
  fs::create_symlink(dir / "outside", dir / "d" / ".capture.manifest.tmp");
  auto d = rd::DirHandle::OpenPath((dir / "d").string());
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->WriteFile("capture.manifest", "new", {::geteuid(), ::getegid(), 0644}).ok());
  EXPECT_EQ(Slurp(dir / "outside"), "root's file");
  EXPECT_FALSE(fs::is_symlink(dir / "d" / "capture.manifest"));
  EXPECT_EQ(Slurp(dir / "d" / "capture.manifest"), "new");
  EXPECT_FALSE(d->WriteFile("../escape", "x", {}).ok());  // one component only
  fs::remove_all(dir);
}

TEST(DirHandle, ReadsOnlyRegularFilesOfTheOwnerWithOneLink) {
  fs::path dir = TempDir("owned");
  std::ofstream(dir / "trace.json") << "{}";
  fs::create_symlink(dir / "trace.json", dir / "link.json");
  fs::create_hard_link(dir / "trace.json", dir / "hard.json");
  std::ofstream(dir / "alone.json") << "{}";
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  auto d = rd::DirHandle::OpenPath(dir.string());
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->OpenOwnedFile("alone.json", ::geteuid()).ok());
  EXPECT_NE(d->OpenOwnedFile("link.json", ::geteuid()).status().message().find("symlink"), std::string::npos);
  EXPECT_NE(d->OpenOwnedFile("hard.json", ::geteuid()).status().message().find("hard links"), std::string::npos);
  EXPECT_NE(d->OpenOwnedFile("fifo.json", ::geteuid()).status().message().find("not a regular file"), std::string::npos);
  EXPECT_NE(d->OpenOwnedFile("alone.json", ::geteuid() + 1).status().message().find("belongs to uid"), std::string::npos);
  EXPECT_EQ(d->OpenOwnedFile("missing.json", ::geteuid()).status().code(), rankscope::StatusCode::kNotFound);
  fs::remove_all(dir);
}

TEST(DirHandle, RemoveTreeRemovesLinksNotWhatTheyPointTo) {
  fs::path dir = TempDir("remove");
  fs::create_directories(dir / "keep");
  std::ofstream(dir / "keep" / "file") << "x";
  fs::create_directories(dir / "victim" / "sub");
  fs::create_directory_symlink(dir / "keep", dir / "victim" / "sub" / "link");
  auto d = rd::DirHandle::OpenPath(dir.string());
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->RemoveTree("victim").ok());
  EXPECT_FALSE(fs::exists(dir / "victim"));
  EXPECT_TRUE(fs::exists(dir / "keep" / "file"));
  fs::remove_all(dir);
}

TEST(OutputDir, SymlinksAreNeitherCountedListedNorFollowedByEviction) {
  fs::path base = TempDir("evict-symlink");
  fs::path root = base / "out";
  std::ofstream(base / "big") << std::string(5000, 'x');  // outside the output directory
  auto out = rd::OutputDir::Open(root.string(), /*budget_bytes=*/2000);
  ASSERT_TRUE(out.ok());
  const rd::FileOwner me{::geteuid(), ::getegid(), 0644};
  auto dir = (*out)->MakeCaptureDir("job", "c1", me);
  ASSERT_TRUE(dir.ok());
  std::ofstream(*dir / "rank0.pt.trace.json.gz") << std::string(1000, 'x');
  fs::create_symlink(base / "big", *dir / "big");
  fs::create_directory_symlink(base, root / "job" / "c0");
  const auto listing = (*out)->List();
  ASSERT_EQ(listing.files.size(), 1u);
  EXPECT_EQ(listing.files[0].relative, "job/c1/rank0.pt.trace.json.gz");
  EXPECT_EQ(listing.bytes, 1000u);
  EXPECT_TRUE((*out)->EnforceBudget({}).removed.empty());  // 1000 <= 2000: nothing to do
  EXPECT_TRUE(fs::exists(base / "big"));
  fs::remove_all(base);
}

TEST(OutputDir, KeepsTheCaptureJustWrittenAndSaysItIsOverBudget) {
  fs::path root = TempDir("evict-keep");
  auto out = rd::OutputDir::Open(root.string(), /*budget_bytes=*/1500);
  ASSERT_TRUE(out.ok());
  const rd::FileOwner me{::geteuid(), ::getegid(), 0644};
  for (const char* id : {"old", "new"}) {
    auto dir = (*out)->MakeCaptureDir("job", id, me);
    ASSERT_TRUE(dir.ok());
    std::ofstream(*dir / "rank0.pt.trace.json.gz") << std::string(std::string_view(id) == "old" ? 500 : 2000, 'x');
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto ev = (*out)->EnforceBudget({"job/new"});
  EXPECT_EQ(ev.removed, std::vector<std::string>{"job/old"});
  EXPECT_TRUE(ev.over_budget);
  EXPECT_TRUE(fs::exists(root / "job" / "new" / "rank0.pt.trace.json.gz"));
  fs::remove_all(root);
}

TEST(CaptureSpec, IntegersOnlyAndBounded) {
  for (const auto& bad : std::vector<nlohmann::json>{
           {{"steps", 3}, {"selection", {{"ranks", {1e20}}}}}, {{"steps", 2.5}}, {{"duration_ms", 1e3}},
           {{"steps", 3}, {"start_step", 1e13}}, {{"steps", 3}, {"timeout_s", 0}}, {{"steps", 3}, {"with_stack", 1}},
           {{"steps", 3}, {"selection", {{"ranks", {-1}}}}}, {{"steps", 1001}}, nlohmann::json::array({1}),
           {{"steps", 3}, {"selection", "all"}}}) {
    auto s = rd::TraceSpecFromJson(bad);
    EXPECT_FALSE(s.ok()) << bad.dump();
    EXPECT_EQ(s.status().code(), rankscope::StatusCode::kInvalidArgument) << bad.dump();
  }
  EXPECT_NE(rd::TraceSpecFromJson({{"steps", 2.5}}).status().message().find("integer"), std::string::npos);
  auto ok = rd::TraceSpecFromJson({{"steps", 3}, {"start_step", 9'000'000'000'000}});
  EXPECT_TRUE(ok.ok());  // well formed; how far ahead it may be is the capture manager's call
  EXPECT_FALSE(rd::SnapshotSpecFromJson({{"timeout_s", 601}}).ok());
}

TEST(TokenFile, ContentAndPermissionsAreChecked) {
  fs::path dir = TempDir("token");
  auto write = [&](const char* name, const std::string& text, mode_t mode) {
    std::ofstream(dir / name) << text;
    ::chmod((dir / name).c_str(), mode);
    return (dir / name).string();
  };
  EXPECT_TRUE(rd::ReadTokenFile(write("good", "0123456789abcdef0123\n", 0600)).ok());
  EXPECT_EQ(*rd::ReadTokenFile(write("crlf", "0123456789abcdef\r\n", 0600)), "0123456789abcdef");
  EXPECT_NE(rd::ReadTokenFile(write("tabs", std::string(16, '\t'), 0600)).status().message().find("spaces, tabs"),
            std::string::npos);
  EXPECT_NE(rd::ReadTokenFile(write("short", "abc\n", 0600)).status().message().find("shorter"), std::string::npos);
  EXPECT_NE(rd::ReadTokenFile(write("open", "0123456789abcdef0123\n", 0644)).status().message().find("chmod 600"),
            std::string::npos);
  fs::create_symlink(dir / "good", dir / "link");
  EXPECT_NE(rd::ReadTokenFile((dir / "link").string()).status().message().find("symlink"), std::string::npos);
  fs::remove_all(dir);
}

namespace {

// A /proc with the processes a test needs: <root>/<pid>/stat with a start time.
void FakeProcess(const fs::path& proc, int32_t pid, uint64_t start) {
  fs::create_directories(proc / std::to_string(pid));
  std::string stat = fmt::format("{} (python) S 1", pid);
  for (int field = 5; field <= 21; ++field) stat += " 0";
  std::ofstream(proc / std::to_string(pid) / "stat") << stat << " " << start << " 0 0\n";
}

rd::ProcessInfo Heartbeat(int32_t pid, uid_t uid, const std::string& job, uint64_t start = 7) {
  rd::ProcessInfo p = Proc(pid, 0, job);
  p.identity.uid = uid;
  p.identity.start_ticks = start;
  return p;
}

}  // namespace

TEST(ProcessRegistry, QuotasPerUserAndJobNamesPerUser) {
  fs::path proc = TempDir("proc");
  for (int32_t pid = 100; pid < 110; ++pid) FakeProcess(proc, pid, 7);
  rd::ProcessRegistry reg{std::chrono::seconds(60), {.max_processes = 8, .max_per_uid = 3}, proc.string()};
  for (int32_t pid = 100; pid < 103; ++pid) EXPECT_TRUE(reg.SeenCollector(Heartbeat(pid, 1001, "a")).ok());
  auto refused = reg.SeenCollector(Heartbeat(103, 1001, "a"));
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("per-user limit"), std::string::npos);
  // Another user naming the same job is registered under a name of its own.
  ASSERT_TRUE(reg.SeenCollector(Heartbeat(104, 1002, "a")).ok());
  EXPECT_EQ(reg.Get(104)->identity.job, "a.uid1002");
  // A collector's identity is fixed by its first message: no churning through job names.
  ASSERT_TRUE(reg.SeenCollector(Heartbeat(100, 1001, "other")).ok());
  EXPECT_EQ(reg.Get(100)->identity.job, "a");
  // A pid whose process is gone, or now names another process, is not a registered process.
  fs::remove_all(proc / "101");
  FakeProcess(proc, 102, 8);
  std::set<int32_t> live;
  for (const auto& p : reg.List()) live.insert(p.pid);
  EXPECT_EQ(live, (std::set<int32_t>{100, 104}));
  EXPECT_EQ(reg.exited_total(), 2u);
  EXPECT_EQ(reg.refused_total(), 1u);
  fs::remove_all(proc);
}

TEST(CollectorEndpoint, HeartbeatsAreCheckedAndTheKernelNamesTheSender) {
  rd::Datagram meta;
  meta.peer = {true, 4242, 1001, 1001};
  meta.sender = *rd::UnixAddress::Abstract("collector", false);
  auto p = rd::ProcessFromHeartbeat({{"op", "hello"}, {"pid", 1}, {"uid", 0}, {"rank", 3}, {"job", "j"},
                                     {"host", std::string(60000, 'h')}, {"step", 5}, {"step_ms", 12.5}}, meta);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->pid, 4242);           // not the claimed 1
  EXPECT_EQ(p->identity.uid, 1001u);  // not the claimed 0
  EXPECT_EQ(p->host.size(), 255u);
  for (const auto& bad : std::vector<nlohmann::json>{{{"rank", 1e30}}, {{"rank", 1 << 30}}, {{"step", "x"}},
                                                     {{"step_ms", -1}}, {{"step", 1e300}}}) {
    EXPECT_FALSE(rd::ProcessFromHeartbeat(bad, meta).ok()) << bad.dump();
  }
}

TEST(UnixSocket, TheKernelSaysWhoSentADatagram) {
  auto addr = rd::UnixAddress::Abstract(fmt::format("rankscope-cred-test-{}", ::getpid()), false);
  auto server = rd::UnixDgramSocket::Bind(*addr);
  ASSERT_TRUE(server.ok());
  auto client = rd::UnixDgramSocket::Unbound();
  ASSERT_TRUE(client->SendTo(*addr, std::vector<uint8_t>{'h', 'i'}).ok());
  std::vector<uint8_t> buf(16);
  auto d = server->Receive(buf);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->peer.known);
  EXPECT_EQ(d->peer.pid, ::getpid());
  EXPECT_EQ(d->peer.uid, ::getuid());
}
