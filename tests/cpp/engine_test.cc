// AnalyzeJob on small inline traces written to a temporary directory: ranks, hosts from every
// source (trace, capture manifest, telemetry sidecar, --hosts), bad files beside good ones, and
// the telemetry join over the same window the analysis uses. No ../shared needed.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rankscope/engine/analyze_job.h"

namespace rankscope {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kStepUs = 100'000;  // 100 ms steps
constexpr int64_t kT0Us = 1'700'000'000'000'000;  // absolute µs (no baseTimeNanoseconds)

// One rank: three ProfilerSteps, each with a forward op; rank `slow` does `extra_us` more.
std::string Trace(int rank, int64_t extra_us, const std::string& host_name = "") {
  std::string events;
  for (int s = 0; s < 3; ++s) {
    const int64_t t = kT0Us + s * (kStepUs + extra_us);
    events += fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{},"dur":{}}},)",
                          s + 1, t, kStepUs + extra_us);
    events += fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{},"dur":{}}},)", t + 10,
                          60'000 + extra_us);
  }
  events.pop_back();
  const std::string host = host_name.empty() ? "" : fmt::format(R"("host_name":"{}",)", host_name);
  return fmt::format(R"({{"schemaVersion":1,{}"distributedInfo":{{"backend":"gloo","rank":{},"world_size":3}},)"
                     R"("traceEvents":[{}]}})",
                     host, rank, events);
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("rankscope_engine_test_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  void WriteRanks(const std::string& host_name = "") {
    for (int r = 0; r < 3; ++r) Write(fmt::format("rank{}.json", r), Trace(r, r == 2 ? 30'000 : 0, host_name));
  }
  // A telemetry sidecar whose process series say which ranks ran on `host`.
  void WriteSidecar(const std::string& host, const std::vector<int>& ranks) {
    std::string text = fmt::format("# rankscope-telemetry 1\n# host: {}\n# capture: c\n# job: j\n"
                                   "# window_start_unix_ns: {}\n# window_end_unix_ns: {}\n# coverage_start_unix_ns: {}\n"
                                   "# interval_ms: proc=1000 gpu=1000\n# gpu: unavailable: test\nunix_ns\tmetric\tlabels\tvalue\n",
                                   host, kT0Us * 1000, (kT0Us + 2'000'000) * 1000, kT0Us * 1000);
    for (int64_t t = 0; t <= 2; ++t) {
      const int64_t ns = (kT0Us + t * 1'000'000) * 1000;
      text += fmt::format("{}\trankscope_cpu_count\t\t8\n{}\trankscope_cpu_busy_ratio\t\t0.25\n", ns, ns);
      for (int r : ranks) text += fmt::format("{}\trankscope_process_cpu_cores\trank={},job=j,pid={}\t0.5\n", ns, r, 100 + r);
    }
    Write(fmt::format("telemetry.{}.tsv", host), text);
  }
  StatusOr<JobReport> Analyze(const std::string& hosts_file = "") {
    return AnalyzeJob(JobInputs{{dir_.string()}, hosts_file, ""}, AnalyzeOptions{});
  }

  fs::path dir_;
};

TEST_F(EngineTest, RanksAreSortedAndTheSlowRankIsFound) {
  WriteRanks();
  auto job = Analyze();
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(job->ranks[r].rank.rank, r);
  ASSERT_TRUE(job->cluster.has_value());
  ASSERT_FALSE(job->findings.empty());
  EXPECT_EQ(job->findings[0].kind, FindingKind::kSlowRank);
  EXPECT_EQ(job->findings[0].ranks, std::vector<int64_t>{2});
  EXPECT_FALSE(job->has_telemetry);
}

TEST_F(EngineTest, HostsComeFromTheCaptureManifestWhenTracesNameNone) {
  WriteRanks();
  Write("capture.manifest", R"({"host": "nodeA", "targets": []})");
  auto job = Analyze();
  ASSERT_TRUE(job.ok()) << job.status().message();
  for (const RankHost& h : job->cluster->hosts) {
    EXPECT_EQ(h.host, "nodeA");
    EXPECT_EQ(h.source, HostSource::kManifest);
  }
}

TEST_F(EngineTest, HostsComeFromTheTelemetrySidecarWithoutAManifest) {
  WriteRanks();
  WriteSidecar("nodeB", {0, 1, 2});
  auto job = Analyze();
  ASSERT_TRUE(job.ok()) << job.status().message();
  for (const RankHost& h : job->cluster->hosts) {
    EXPECT_EQ(h.host, "nodeB");
    EXPECT_EQ(h.source, HostSource::kTelemetry);
  }
  // The sidecar is joined over the ranks' analysis windows: the union of their profiled steps.
  ASSERT_TRUE(job->has_telemetry);
  ASSERT_EQ(job->telemetry.size(), 1u);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const RankSummary& r : job->ranks) {
    lo = std::min(lo, r.window_start_ns);
    hi = std::max(hi, r.window_end_ns);
  }
  EXPECT_EQ(job->telemetry[0].start_ns, lo);
  EXPECT_EQ(job->telemetry[0].end_ns, hi);
  EXPECT_EQ(lo, kT0Us * 1000);
}

TEST_F(EngineTest, TraceHostNamesWinAndAHostsFileWinsOverAll) {
  WriteRanks("tracehost");
  Write("capture.manifest", R"({"host": "nodeA"})");
  auto job = Analyze();
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->cluster->hosts[0].host, "tracehost");
  EXPECT_EQ(job->cluster->hosts[0].source, HostSource::kTrace);
  const std::string hosts = (dir_ / "hosts.txt").string();
  std::ofstream(hosts) << "0-1 left\n2 right\n";
  auto mapped = Analyze(hosts);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ(mapped->cluster->hosts[2].host, "right");
  EXPECT_EQ(mapped->cluster->hosts[2].source, HostSource::kHostMap);
  std::ofstream(hosts) << "0-1 left\n";  // rank 2 missing: an error, not a silent mix
  EXPECT_FALSE(Analyze(hosts).ok());
}

TEST_F(EngineTest, ABadFileIsAnErrorEntryAndAManifestThatIsNotJsonAWarning) {
  WriteRanks();
  Write("rank3.json", R"({"traceEvents": [{"ph": "X", "ts": )");
  Write("capture.manifest", "not json");
  auto job = Analyze();
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->ranks.size(), 3u);
  ASSERT_EQ(job->errors.size(), 1u);
  EXPECT_NE(job->errors[0].path.find("rank3.json"), std::string::npos);
  bool warned = false;
  for (const std::string& w : job->warnings) warned |= w.find("capture.manifest") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(job->cluster->hosts[0].source, HostSource::kNone);
}

TEST_F(EngineTest, WholeJobProblemsAreStatuses) {
  EXPECT_FALSE(Analyze().ok());  // no trace at all
  WriteRanks();
  AnalyzeOptions bad;
  bad.steps = "9:2";
  EXPECT_FALSE(AnalyzeJob(JobInputs{{dir_.string()}, "", ""}, bad).ok());
  bad = {};
  bad.comm_patterns = {"(unclosed"};
  EXPECT_FALSE(AnalyzeJob(JobInputs{{dir_.string()}, "", ""}, bad).ok());
}

}  // namespace
}  // namespace rankscope
