// The web UI's documents on hand-built summaries whose answers are known: the timeline on the
// reference clock with the late arriver, the communication matrix's pairs and intra/inter-host
// split, the function spread with its outlier; the HTML report's data escaping; and the serve
// catalog's jobs and confinement (symbolic links out of a served directory are not followed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "rankscope/cluster/cluster_diagnosis.h"
#include "rankscope/report/html_report.h"
#include "rankscope/report/view_data.h"
#include "rankscope/web/job_catalog.h"

namespace rankscope {
namespace {

constexpr int64_t kT0 = 1'716'423'322'000'000'000;
constexpr int64_t kMs = 1'000'000;

// Four ranks, hosts h0 = {0, 1} and h1 = {2, 3}; h1's clock is 10 ms ahead. Four steps of
// 100 ms, one all_reduce of 1 KiB per step at 10 ms into the step; rank 2 arrives 3 ms late
// (it does 3 ms more work first) and its kernel "slow_kernel" takes 3 ms more per step.
std::vector<RankSummary> Job() {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    RankSummary s;
    s.rank.rank = r;
    s.rank_resolved = true;
    s.host_name = r < 2 ? "h0" : "h1";
    const int64_t clock = r < 2 ? 0 : 10 * kMs;
    s.window_start_ns = kT0 + clock;
    s.window_end_ns = kT0 + clock + 400 * kMs;
    CollectiveType t;
    t.op = "all_reduce";
    t.on_gpu = false;
    s.collective_types.push_back(t);
    s.process_groups.push_back({"0", "default_pg", "[0, 1, 2, 3]", 4});
    FunctionStat k;
    k.name = "slow_kernel";
    k.detail = "[1,1,1]|[1,1,1]";
    k.count = 4;
    k.in_window_ns = (r == 2 ? 8 : 5) * kMs * 4;
    k.median_ns = r == 2 ? 8 * kMs : 5 * kMs;
    s.kernels.rows.push_back(k);
    for (int i = 0; i < 4; ++i) {
      StepSummary st;
      st.number = 10 + i;
      st.start_ns = kT0 + clock + i * 100 * kMs;
      st.end_ns = st.start_ns + 100 * kMs;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = (r == 2 ? 53 : 50) * kMs;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kOther)] = 100 * kMs - st.cpu_phase_ns[1];
      st.comm_exposed_ns = (r == 2 ? 1 : 4) * kMs;
      s.steps.push_back(st);
      CollectiveInstance c;
      c.start_ns = st.start_ns + (r == 2 ? 13 : 10) * kMs;
      c.end_ns = st.start_ns + 14 * kMs;
      c.step = st.number;
      c.seq = i;
      c.bytes = 1024;
      s.collectives.push_back(c);
    }
    ranks.push_back(std::move(s));
  }
  return ranks;
}

ClusterDiagnosis Diagnose(const std::vector<RankSummary>& ranks) {
  auto d = DiagnoseCluster(ranks, ClusterOptions{});
  EXPECT_TRUE(d.ok()) << d.status().message();
  return std::move(d).value();
}

TEST(TimelineJson, OneStepOnTheReferenceClockWithTheLateArriver) {
  const auto ranks = Job();
  const ClusterDiagnosis d = Diagnose(ranks);
  EXPECT_EQ(TimelineSteps(ranks), (std::vector<int64_t>{10, 11, 12, 13}));
  const nlohmann::json t = TimelineJson(ranks, d, 12);
  ASSERT_EQ(t["step"], 12);
  EXPECT_EQ(t["origin_unix_ns"], kT0 + 200 * kMs);  // h1's offset removed: every step starts together
  ASSERT_EQ(t["ranks"].size(), 4u);
  ASSERT_EQ(t["collectives"].size(), 1u);
  EXPECT_EQ(t["collectives"][0]["last_rank"], 2);
  EXPECT_EQ(t["collectives"][0]["skew_ns"], 3 * kMs);
  for (int r = 0; r < 4; ++r) {
    const auto& lane = t["ranks"][r];
    EXPECT_EQ(lane["rank"], r);
    EXPECT_EQ(lane["start_ns"], 0);
    EXPECT_EQ(lane["end_ns"], 100 * kMs);
    ASSERT_EQ(lane["spans"].size(), 1u);
    EXPECT_EQ(lane["spans"][0][0], (r == 2 ? 13 : 10) * kMs);  // arrival, aligned
    EXPECT_EQ(lane["spans"][0][3], 0);                           // joined: collective 0
    EXPECT_EQ(lane["last_votes"], r == 2 ? 1 : 0);
  }
  // The default step is the middle one; a step not on every rank is an error in the document.
  EXPECT_EQ(TimelineJson(ranks, d, std::nullopt)["step"], 11);
  EXPECT_TRUE(TimelineJson(ranks, d, 99).contains("error"));
}

TEST(CommMatrixJson, PairsBytesAndIntraVersusInterHost) {
  const auto ranks = Job();
  const ClusterDiagnosis d = Diagnose(ranks);
  const nlohmann::json m = CommMatrixJson(ranks, d);
  EXPECT_EQ(m["level"], "rank");
  EXPECT_EQ(m["instances"], 4);
  // Four all_reduce instances of 4 ranks: each ordered pair (i, j), i != j, once per instance.
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(m["count"][a][b], a == b ? 0 : 4) << a << "," << b;
      EXPECT_EQ(m["bytes"][a][b], a == b ? 0 : 4 * 1024);
    }
  }
  // Rank 2's own part lasts 1 ms (it arrives late), the others' 4 ms.
  EXPECT_EQ(m["time_ns"][2][0], 4 * 1 * kMs);
  EXPECT_EQ(m["time_ns"][0][2], 4 * 4 * kMs);
  EXPECT_EQ(m["intra_host"]["count"], 4 * 4);  // (0,1) (1,0) (2,3) (3,2) per instance
  EXPECT_EQ(m["inter_host"]["count"], 4 * 8);
  EXPECT_EQ(m["collectives"]["count"], 4 * 12);
  EXPECT_EQ(m["point_to_point"]["count"], 0);
  // Beyond max_matrix_cells ranks, per host.
  ViewLimits two;
  two.max_matrix_cells = 2;
  const nlohmann::json hosts = CommMatrixJson(ranks, d, two);
  EXPECT_EQ(hosts["level"], "host");
  EXPECT_EQ(hosts["labels"], (std::vector<std::string>{"h0", "h1"}));
  EXPECT_EQ(hosts["count"][0][0], 4 * 2);
  EXPECT_EQ(hosts["count"][0][1], 4 * 4);
}

TEST(FunctionSpreadJson, DistributionOverRanksAndTheOutlier) {
  const auto ranks = Job();
  const ClusterDiagnosis d = Diagnose(ranks);
  const nlohmann::json f = FunctionSpreadJson(ranks, d);
  const nlohmann::json* kernel = nullptr;
  for (const auto& k : f["kinds"]) {
    if (k["kind"] == "kernel") kernel = &k["functions"][0];
  }
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ((*kernel)["name"], "slow_kernel");
  EXPECT_EQ((*kernel)["values_ns"], (std::vector<int64_t>{5 * kMs, 5 * kMs, 8 * kMs, 5 * kMs}));
  EXPECT_EQ((*kernel)["min_ns"], 5 * kMs);
  EXPECT_EQ((*kernel)["median_ns"], 5 * kMs);
  EXPECT_EQ((*kernel)["max_ns"], 8 * kMs);
  ASSERT_EQ((*kernel)["outliers"].size(), 1u);
  EXPECT_EQ((*kernel)["outliers"][0]["rank"], 2);
  EXPECT_EQ((*kernel)["outliers"][0]["excess_ns"], 3 * kMs);
}

TEST(HtmlReport, DataCannotCloseItsScriptElement) {
  const nlohmann::json hostile = {{"name", "</script><script>alert(1)</script><!--"}};
  const std::string text = JsonForScriptElement(hostile);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(text), hostile);  // the same data once parsed
}

TEST(JobCatalog, JobsAndConfinement) {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / ("rankscope-catalog-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  const fs::path served = tmp / "served", outside = tmp / "outside";
  fs::create_directories(served / "day1" / "capA");
  fs::create_directories(served / "plain");
  fs::create_directories(served / "snap");
  fs::create_directories(outside);
  auto touch = [](const fs::path& p, const std::string& text = "{}") { std::ofstream(p) << text; };
  touch(served / "day1" / "capA" / "capture.manifest", "x");
  touch(served / "day1" / "capA" / "rank0.pt.trace.json.gz");
  touch(served / "day1" / "capA" / "rank1.pt.trace.json.gz");
  touch(served / "plain" / "a.json");
  touch(served / "report.json", R"({"ranks": [], "schema": "rankscope.report/1"})");
  touch(served / "cmp.json", R"({"ranks": [], "schema": "rankscope.compare/1"})");  // compare --json
  touch(served / "day1" / "capA" / "baseline-comparison", R"({"schema": "rankscope.compare/1"})");  // the daemon's
  touch(served / "snap" / "capture.manifest", "x");
  touch(served / "snap" / "rank0.stacks.txt", "x");
  touch(served / "snap" / "rank0.flightrecorder", "x");
  touch(outside / "secret.json");
  fs::create_directory_symlink(outside, served / "link_dir");
  fs::create_symlink(outside / "secret.json", served / "plain" / "link.json");

  auto catalog = web::JobCatalog::Open({served.string()});
  ASSERT_TRUE(catalog.ok());
  const auto jobs = catalog->Scan();
  ASSERT_EQ(jobs.size(), 5u);
  std::map<std::string, const web::JobEntry*> by_name;
  for (const auto& j : jobs) by_name[j.name] = &j;
  ASSERT_TRUE(by_name.count("served/day1/capA"));
  EXPECT_EQ(by_name["served/day1/capA"]->kind, web::JobKind::kCapture);
  EXPECT_EQ(by_name["served/day1/capA"]->files.size(), 2u);
  EXPECT_EQ(by_name["served/day1/capA"]->comparison, (served / "day1" / "capA" / "baseline-comparison").string());
  ASSERT_TRUE(by_name.count("served/cmp.json"));
  EXPECT_EQ(by_name["served/cmp.json"]->kind, web::JobKind::kComparison);
  EXPECT_EQ(by_name["served/report.json"]->comparison, "");
  ASSERT_TRUE(by_name.count("served/plain"));
  EXPECT_EQ(by_name["served/plain"]->files, (std::vector<std::string>{(served / "plain" / "a.json").string()}));
  ASSERT_TRUE(by_name.count("served/report.json"));
  EXPECT_EQ(by_name["served/report.json"]->kind, web::JobKind::kReport);
  ASSERT_TRUE(by_name.count("served/snap"));  // a stack snapshot, though it has a capture.manifest
  EXPECT_EQ(by_name["served/snap"]->kind, web::JobKind::kSnapshot);
  EXPECT_EQ(by_name["served/snap"]->files.size(), 2u);
  for (const auto& j : jobs) {
    for (const auto& f : j.files) EXPECT_EQ(f.find(outside.string()), std::string::npos) << f;
  }
  EXPECT_TRUE(catalog->Find(by_name["served/plain"]->id).has_value());
  EXPECT_FALSE(catalog->Find("../../etc/passwd").has_value());
  EXPECT_FALSE(web::JobCatalog::Open({(tmp / "missing").string()}).ok());
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace rankscope
