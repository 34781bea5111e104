// Hang analysis on small inline inputs (no ../shared): rank ranges, the stacks format, folding
// and divergence, the Flight Recorder reader and matcher, the suspects, the daemon's hang rule
// and py-spy conversion.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "rankscope/daemon/hang_rule.h"
#include "rankscope/daemon/native_stacks.h"
#include "rankscope/hang/hang_analysis.h"
#include "rankscope/hang/rank_ranges.h"
#include "rankscope/hang/thread_roles.h"
#include "rankscope/report/hang_report.h"

namespace rankscope::hang {
namespace {

std::string Stacks(int rank, const std::string& main_frames, double since_step = 30) {
  return fmt::format(
      "rankscope-stacks 1\npid: {}\nrank: {}\nworld_size: 4\njob: j\nhost: h\ncapture: c\nsteps_completed: 20\n"
      "step_ms: 100\nseconds_since_last_step: {}\nthreads: 2\norder: most recent call last\n\n"
      "thread 1 \"MainThread\" main\n  File \"train.py\", line 130, in <module>\n    main()\n{}\n"
      "thread 2 \"rankscope-collector\" daemon\n  File \"threading.py\", line 1002, in _bootstrap\n",
      1000 + rank, rank, since_step, main_frames);
}

const char* kBackward = "  File \"train.py\", line 88, in main\n    loss.backward()\n";
const char* kSleep = "  File \"train.py\", line 80, in main\n    time.sleep(1)\n";

std::string Dump(int rank, const std::string& entries) {
  return fmt::format(R"({{"version": "2.10", "pg_config": {{}}, "entries": [{}],
    "rankscope": {{"rank": {}, "world_size": 4, "job": "j", "time_unix_ns": 2000000000000,
                   "process_groups": {{"0": {{"desc": "default_pg", "ranks": [0, 1, 2, 3]}}}}}}}})",
                     entries, rank);
}

std::string Entry(int seq, const std::string& op, const std::string& sizes, bool done) {
  return fmt::format(R"({{"process_group": ["0", "default_pg"], "collective_seq_id": {}, "profiling_name": "gloo:{}",
    "input_sizes": {}, "input_dtypes": ["Float"], "state": "scheduled", "retired": {}, "is_p2p": false,
    "time_created_ns": {}}})", seq, op, sizes, done ? "true" : "false", 1000000000000 + seq * 1000000000LL);
}

SnapshotFiles Files(const std::vector<std::string>& stacks, const std::vector<std::string>& dumps) {
  SnapshotFiles f;
  f.world_size = 4;
  for (size_t i = 0; i < stacks.size(); ++i) {
    auto s = ParseStacks(stacks[i], fmt::format("rank{}.stacks.txt", i));
    EXPECT_TRUE(s.ok()) << s.status().message();
    f.stacks.push_back(*s);
  }
  for (size_t i = 0; i < dumps.size(); ++i) {
    auto d = ParseFlightRecorder(dumps[i], fmt::format("rank{}.flightrecorder", i), -1);
    EXPECT_TRUE(d.ok()) << d.status().message();
    f.dumps.push_back(*d);
  }
  return f;
}

TEST(RankRanges, FormatsAndParses) {
  EXPECT_EQ(FormatRankRanges({7, 0, 1, 2, 3, 4, 5}), "0-5,7");
  EXPECT_EQ(FormatRankRanges({3, 4}), "3,4");
  EXPECT_EQ(FormatRankRanges({}), "");
  EXPECT_EQ(*ParseRankRanges("0-2,7"), (std::vector<int64_t>{0, 1, 2, 7}));
  EXPECT_FALSE(ParseRankRanges("3-1").ok());
  EXPECT_FALSE(ParseRankRanges("a").ok());
  EXPECT_FALSE(ParseRankRanges("0-99999999").ok());
}

TEST(Stacks, ParsesHeaderThreadsAndNativeFrames) {
  auto s = ParseStacks("rankscope-stacks 1\nrank: 3\ntaken: py-spy dump --native\nthreads: 1\n\n"
                       "thread 7 \"Main \\\"x\\\"\" main gil\n  File \"a.py\", line 3, in f\n  Native \"libc.so.6\", in sleep\n",
                       "x");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->rank, 3);
  EXPECT_EQ(s->source, StackSource::kPySpy);
  ASSERT_EQ(s->threads.size(), 1u);
  EXPECT_TRUE(s->threads[0].owns_gil);
  ASSERT_EQ(s->threads[0].frames.size(), 2u);
  EXPECT_TRUE(s->threads[0].frames[1].native);
  EXPECT_EQ(s->threads[0].frames[1].Key(), "sleep (libc.so.6)");
}

TEST(Stacks, RejectsGarbageAndWarnsOnTruncation) {
  EXPECT_FALSE(ParseStacks("hello", "x").ok());
  auto s = ParseStacks("rankscope-stacks 1\nrank: 0\nthreads: 3\n\nthread 1 \"MainThread\" main\n  File \"a.py\", li", "x");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->warnings.empty());
}

// A stacks file and a dump of the job's user, with an escape sequence and invalid UTF-8 in
// names: kept printable and valid, so that the text report cannot drive the reader's terminal
// and the JSON report can always be written (found by fuzz_hang_inputs).
TEST(Stacks, TextFromTheJobIsPrintableAndValid) {
  std::string text = Stacks(0, "  File \"t\x90rain\x1b[2J.py\", line 9, in step\x1b]0;owned\x07\n");
  auto s = ParseStacks(text, "rank0.stacks.txt");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Frame& f = s->threads[0].frames.back();
  EXPECT_EQ(f.file, "t\xef\xbf\xbdrain\xef\xbf\xbd[2J.py");
  EXPECT_EQ(f.function, "step\xef\xbf\xbd]0;owned\xef\xbf\xbd");
  auto d = ParseFlightRecorder(R"({"entries": [{"process_group": ["0\u001b[31m", "x"], "collective_seq_id": 1,
      "profiling_name": "gloo:all_reduce\u009b", "input_dtypes": [[[[1]]], "Float"]}]})", "rank0.flightrecorder", 0);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->entries[0].pg_name, "0\xef\xbf\xbd[31m");
  EXPECT_EQ(d->entries[0].profiling_name, "gloo:all_reduce\xef\xbf\xbd");
  EXPECT_EQ(d->entries[0].input_dtypes, (std::vector<std::string>{"", "Float"}));  // a list is not a dtype
  auto files = Files({text}, {});
  EXPECT_NO_THROW((void)HangReportJson(AnalyzeSnapshot(files, HangOptions{})).dump());
}

TEST(Folding, MajorityOddOneOutAndDivergence) {
  auto f = Files({Stacks(0, kBackward), Stacks(1, kSleep), Stacks(2, kBackward), Stacks(3, kBackward)}, {});
  auto roles = FoldStacks(f.stacks);
  ASSERT_EQ(roles.size(), 1u);  // the collector's thread is left out
  EXPECT_EQ(roles[0].role, "main");
  auto v = JudgeRole(roles[0]);
  ASSERT_TRUE(v.has_majority);
  EXPECT_EQ(roles[0].groups[v.majority_group].ranks, (std::vector<int64_t>{0, 2, 3}));
  ASSERT_EQ(v.odd.size(), 1u);
  EXPECT_EQ(v.odd[0].ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(v.odd[0].common_depth, 1u);
  EXPECT_EQ(v.odd[0].odd_frame->line, 80);
  EXPECT_EQ(v.odd[0].majority_frame->line, 88);
}

TEST(Folding, NoMajorityWithTwoAgainstTwo) {
  auto f = Files({Stacks(0, kBackward), Stacks(1, kSleep), Stacks(2, kBackward), Stacks(3, kSleep)}, {});
  EXPECT_FALSE(JudgeRole(FoldStacks(f.stacks)[0]).has_majority);
}

TEST(FlightRecorder, TruncatedDumpIsAClearError) {
  const std::string d = Dump(0, Entry(1, "all_reduce", "[[4]]", true));
  auto r = ParseFlightRecorder(d.substr(0, d.size() / 2), "rank0.flightrecorder", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos);
}

TEST(FlightRecorder, NumberOutOfRangeIsAnErrorNotAThrow) {
  // Found by fuzz_hang_inputs: nlohmann throws out_of_range (not parse_error) for 1e999.
  auto r = ParseFlightRecorder(R"({"entries": [{"process_group": ["0", ""], "time_created_ns": 2.5e999}]})", "x", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a flight-recorder dump"), std::string::npos) << r.status().message();
}

TEST(Suspects, RankMissingFromACollective) {
  const std::string done = Entry(1, "all_reduce", "[[4]]", true);
  const std::string open = Entry(2, "all_reduce", "[[4]]", false);
  auto f = Files({Stacks(0, kBackward), Stacks(1, kSleep), Stacks(2, kBackward), Stacks(3, kBackward)},
                 {Dump(0, done + "," + open), Dump(1, done), Dump(2, done + "," + open), Dump(3, done + "," + open)});
  auto a = AnalyzeSnapshot(f, HangOptions{});
  ASSERT_TRUE(a.stalled);
  ASSERT_EQ(a.fr.groups.size(), 1u);
  ASSERT_TRUE(a.fr.groups[0].open);
  EXPECT_EQ(a.fr.groups[0].open->seq, 2);
  EXPECT_EQ(a.fr.groups[0].open->missing, (std::vector<int64_t>{1}));
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings[0].kind, FindingKind::kHangMissingFromCollective);
  EXPECT_EQ(a.findings[0].ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(a.findings[0].next.kind, NextStepKind::kHangFrame);
}

TEST(Suspects, OpMismatchNamesTheMinority) {
  const std::string done = Entry(1, "all_reduce", "[[4]]", true);
  const std::string ar = Entry(2, "all_reduce", "[[4]]", false);
  const std::string barrier = Entry(2, "barrier", "[]", false);
  auto f = Files({}, {Dump(0, done + "," + ar), Dump(1, done + "," + ar), Dump(2, done + "," + ar),
                      Dump(3, done + "," + barrier)});
  auto a = AnalyzeSnapshot(f, HangOptions{});
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings[0].kind, FindingKind::kHangCollectiveMismatch);
  EXPECT_EQ(a.findings[0].ranks, (std::vector<int64_t>{3}));
  EXPECT_EQ(a.findings[0].subject_detail, "op");
}

TEST(Suspects, DataLoaderWaitNamesWhereTheWorkerIsStuck) {
  const std::string done = Entry(1, "all_reduce", "[[4]]", true);
  const std::string open = Entry(2, "all_reduce", "[[4]]", false);
  const std::string loader =
      "  File \"train.py\", line 70, in main\n    for x in loader:\n"
      "  File \"/py/torch/utils/data/dataloader.py\", line 725, in __next__\n    data = self._next_data()\n";
  auto f = Files({Stacks(0, kBackward), Stacks(1, loader), Stacks(2, kBackward), Stacks(3, kBackward)},
                 {Dump(0, done + "," + open), Dump(1, done), Dump(2, done + "," + open), Dump(3, done + "," + open)});
  auto worker = ParseStacks("rankscope-stacks 1\nparent_pid: 1001\npid: 2001\nrank: 1\ntaken: py-spy dump --native\n"
                            "threads: 1\n\nthread 5 \"MainThread\" main\n"
                            "  File \"/py/torch/utils/data/_utils/worker.py\", line 374, in _worker_loop\n"
                            "  File \"data.py\", line 61, in __getitem__\n  Native \"libc.so.6\", in futex_wait\n",
                            "rank1.worker0.stacks.txt");
  ASSERT_TRUE(worker.ok()) << worker.status().message();
  EXPECT_EQ(worker->parent_pid, 1001);
  EXPECT_TRUE(IsDataLoaderWorker(*worker));
  EXPECT_TRUE(MainThreadInDataLoader(f.stacks[1]));
  EXPECT_FALSE(MainThreadInDataLoader(f.stacks[0]));
  f.worker_stacks.push_back(*worker);
  auto a = AnalyzeSnapshot(f, HangOptions{});
  ASSERT_FALSE(a.findings.empty());
  const Finding& first = a.findings[0];
  EXPECT_EQ(first.kind, FindingKind::kHangDataLoaderWait);
  EXPECT_EQ(first.next.kind, NextStepKind::kHangDataLoaderWorkers);
  EXPECT_EQ(first.next.subject, "data.py:61 __getitem__");
  const Evidence* w = nullptr;
  for (const Evidence& e : first.evidence) {
    if (e.subject_kind == "dataloader_worker") w = &e;
  }
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->rank, 1);
  EXPECT_EQ(w->Get("pid"), 2001);
}

TEST(SnapshotFiles, NamesOfASnapshot) {
  EXPECT_EQ(ClassifySnapshotFile("rank3.stacks.txt"), SnapshotFileKind::kStacks);
  EXPECT_EQ(ClassifySnapshotFile("rank3.worker0.stacks.txt"), SnapshotFileKind::kWorkerStacks);
  EXPECT_EQ(ClassifySnapshotFile("rank3.workerx.stacks.txt"), SnapshotFileKind::kStacks);
  EXPECT_EQ(ClassifySnapshotFile("rank3.flightrecorder"), SnapshotFileKind::kFlightRecorder);
  EXPECT_EQ(ClassifySnapshotFile("nccl_trace_rank_12"), SnapshotFileKind::kTorchDump);
  EXPECT_EQ(ClassifySnapshotFile("capture.manifest"), SnapshotFileKind::kManifest);
  EXPECT_EQ(ClassifySnapshotFile("capture.node7-8383.manifest"), SnapshotFileKind::kManifest);
  EXPECT_EQ(ClassifySnapshotFile("hang.report"), SnapshotFileKind::kOther);
  EXPECT_EQ(WorkerStacksFileName(3, 1), "rank3.worker1.stacks.txt");
  EXPECT_EQ(RankFromFileName("rank3.worker1.stacks.txt"), 3);
}

// The daemon reads a capture directory through its descriptor, only files of the capture's user
// with one link: a hard link to someone else's file is not read.
TEST(SnapshotFiles, ReadThroughTheDirectoryOnlyTheOwnersFiles) {
  char tmpl[] = "/tmp/rankscope-hang-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
  };
  write("rank0.stacks.txt", Stacks(0, kBackward));
  write("rank1.stacks.txt", Stacks(1, kSleep));
  ASSERT_EQ(::link((dir + "/rank1.stacks.txt").c_str(), (dir + "/other").c_str()), 0);  // rank 1's: 2 links now
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto mine = ReadSnapshotDirectory(fd, dir, {.job = "", .owner = ::getuid()});
  ASSERT_TRUE(mine.ok()) << mine.status().message();
  ASSERT_EQ(mine->stacks.size(), 1u);
  EXPECT_EQ(mine->stacks[0].rank, 0);
  ASSERT_EQ(mine->problems.size(), 1u);
  EXPECT_NE(mine->problems[0].message.find("2 links"), std::string::npos) << mine->problems[0].message;
  auto theirs = ReadSnapshotDirectory(fd, dir, {.job = "", .owner = ::getuid() + 1});
  ASSERT_FALSE(theirs.ok());  // nothing readable
  EXPECT_NE(theirs.status().message().find("not to the snapshot's user"), std::string::npos) << theirs.status().message();
  EXPECT_GE(::fcntl(fd, F_GETFD), 0);  // the caller's descriptor stays open
  ::close(fd);
  std::filesystem::remove_all(dir);
}

// A stacks file of the job's user claims a world of 10^12 ranks: the analysis lists every rank
// of the world, so the claim is ignored (said so) rather than allocated for.
TEST(SnapshotFiles, AnUnbelievableWorldSizeIsIgnored) {
  char tmpl[] = "/tmp/rankscope-hang-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::string huge = Stacks(1, kSleep);
  huge.replace(huge.find("world_size: 4"), 13, "world_size: 1000000000000");
  std::ofstream(dir + "/rank0.stacks.txt") << Stacks(0, kBackward);
  std::ofstream(dir + "/rank1.stacks.txt") << huge;
  auto files = ReadSnapshotFiles({dir}, "");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->world_size, 4);  // rank 0's claim
  bool said = false;
  for (const std::string& w : files->warnings) said |= w.find("world size of 1000000000000") != std::string::npos;
  EXPECT_TRUE(said);
  auto inline_files = Files({Stacks(0, kBackward)}, {});
  inline_files.world_size = int64_t{1} << 40;  // built by hand: the analysis bounds it too
  EXPECT_LE(AnalyzeSnapshot(inline_files, HangOptions{}).ranks.size(), 1u);
}

TEST(Suspects, HealthyJobHasNoFinding) {
  // Ranks one step apart, all stepping within the last second: not stalled.
  const std::string done = Entry(1, "all_reduce", "[[4]]", true);
  auto f = Files({Stacks(0, kBackward, 0.1), Stacks(1, kSleep, 0.2), Stacks(2, kBackward, 0.1), Stacks(3, kBackward, 0.1)},
                 {Dump(0, done), Dump(1, done), Dump(2, done), Dump(3, done)});
  auto a = AnalyzeSnapshot(f, HangOptions{});
  EXPECT_FALSE(a.stalled);
  EXPECT_TRUE(a.findings.empty());
}

}  // namespace
}  // namespace rankscope::hang

namespace rankscope::daemon {
namespace {

TEST(HangRule, FiresAfterTheStallThresholdNotBefore) {
  HangThresholds t{10, 20, 15};
  const auto t0 = std::chrono::steady_clock::now();
  JobProgress p;
  p.step = 50;
  p.last_progress = t0;
  p.median_step_ms = 100;  // 20 x 0.1 s = 2 s < 10 s: the minimum rules
  EXPECT_FALSE(HangReason(p, t0 + std::chrono::seconds(9), t));
  EXPECT_TRUE(HangReason(p, t0 + std::chrono::seconds(10), t));
  p.median_step_ms = 2000;  // 20 x 2 s = 40 s
  EXPECT_FALSE(HangReason(p, t0 + std::chrono::seconds(39), t));
  EXPECT_TRUE(HangReason(p, t0 + std::chrono::seconds(40), t));
  p.max_fr_pending_s = 16;  // an old open collective fires before the stall threshold
  EXPECT_TRUE(HangReason(p, t0 + std::chrono::seconds(1), t));
  p.step = 0;  // never stepped: not judged
  EXPECT_FALSE(HangReason(p, t0 + std::chrono::seconds(100), t));
}

TEST(NativeStacks, PySpyJsonBecomesTheStacksFormat) {
  auto threads = nlohmann::json::parse(R"([
    {"thread_id": 11, "os_thread_id": 99, "thread_name": "MainThread", "owns_gil": true, "frames": [
      {"name": "sleep", "filename": "/lib/libc.so.6", "module": "/lib/libc.so.6", "short_filename": "libc.so.6", "line": 0},
      {"name": "Trainer.step", "filename": "/w/train.py", "module": null, "line": 12}]}])");
  NativeStackHeader h;
  h.pid = 99;
  h.rank = 2;
  auto text = PySpyJsonToStacks(threads, h, 1);
  ASSERT_TRUE(text.ok());
  auto s = hang::ParseStacks(*text, "rank2.stacks.txt");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->source, hang::StackSource::kPySpy);
  ASSERT_EQ(s->threads.size(), 1u);
  EXPECT_EQ(s->threads[0].kind, "main");
  EXPECT_TRUE(s->threads[0].owns_gil);
  ASSERT_EQ(s->threads[0].frames.size(), 2u);
  EXPECT_EQ(s->threads[0].frames[0].function, "step");  // outermost first, qualified name cut
  EXPECT_TRUE(s->threads[0].frames[1].native);
  EXPECT_FALSE(PySpyJsonToStacks(nlohmann::json::object(), h, 1).ok());
  h.parent_pid = 42;  // a DataLoader worker's
  auto worker = hang::ParseStacks(*PySpyJsonToStacks(threads, h, 1), "rank2.worker0.stacks.txt");
  ASSERT_TRUE(worker.ok());
  EXPECT_EQ(worker->parent_pid, 42);
}

}  // namespace
}  // namespace rankscope::daemon
