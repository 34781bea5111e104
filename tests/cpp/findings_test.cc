// The findings layer: the kind table and docs/findings.md agree, ranking, and the words every
// kind gets (report/finding_text.cc) from nothing but the facts.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "rankscope/findings/finding.h"
#include "rankscope/report/finding_json.h"
#include "rankscope/report/finding_text.h"

namespace rankscope {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FindingKinds, DocsTableMatchesTheCode) {
  const std::string doc = ReadFile(std::string(RANKSCOPE_SOURCE_DIR) + "/docs/findings.md");
  const size_t begin = doc.find("<!-- kinds:begin -->"), end = doc.find("<!-- kinds:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::istringstream rows(doc.substr(begin, end - begin));
  const std::regex row(R"(^\| `([a-z_]+)` \| ([a-z]+) \| ([a-z]+) \| (.*) \|$)");
  std::vector<std::string> documented;
  for (std::string line; std::getline(rows, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    const auto kind = FindingKindFromId(m[1].str());
    ASSERT_TRUE(kind.has_value()) << "docs/findings.md documents an unknown kind " << m[1];
    const FindingKindInfo& info = KindInfo(*kind);
    EXPECT_EQ(m[2].str(), SeverityName(static_cast<Severity>(info.default_severity))) << m[1];
    EXPECT_EQ(m[3].str(), info.source) << m[1];
    EXPECT_EQ(m[4].str(), info.description) << m[1];
    documented.push_back(m[1].str());
  }
  std::vector<std::string> code;
  for (const FindingKindInfo& k : FindingKindTable()) code.push_back(std::string(k.id));
  EXPECT_EQ(documented, code) << "docs/findings.md lists the kinds in the table's order";
}

TEST(FindingKinds, IdsAreUniqueAndRoundTrip) {
  for (const FindingKindInfo& k : FindingKindTable()) {
    EXPECT_EQ(FindingKindFromId(k.id), k.kind) << k.id;
    EXPECT_FALSE(k.description.empty()) << k.id;
  }
  EXPECT_FALSE(FindingKindFromId("no_such_kind").has_value());
}

Finding Costed(FindingKind kind, double saving) {
  Finding f;
  f.kind = kind;
  f.ranks = {1};
  f.cost.method = CostMethod::kWhatIfLikeMedian;
  f.cost.saving_ns = saving;
  f.cost.step_ns = 100e6;
  f.cost.estimated_step_ns = 100e6 - saving;
  return f;
}

TEST(FindingRanking, SavingsFirstThenSeverityAddedTimeAndWeight) {
  Finding small = Costed(FindingKind::kSlowRank, 2e6), big = Costed(FindingKind::kSlowNode, 30e6);
  Finding extra;
  extra.kind = FindingKind::kExtraWork;
  extra.severity = Severity::kInfo;
  extra.cost.method = CostMethod::kAddedWork;
  extra.cost.added_ns = 50e6;  // more time than either saving, but no saving: below them
  Finding weak, strong;
  weak.kind = strong.kind = FindingKind::kCpuSteal;
  weak.weight = 0.2;
  strong.weight = 0.6;
  std::vector<Finding> v = {extra, weak, small, strong, big};
  RankFindings(&v);
  EXPECT_EQ(v[0].kind, FindingKind::kSlowNode);
  EXPECT_EQ(v[1].kind, FindingKind::kSlowRank);
  EXPECT_EQ(v[2].weight, 0.6);  // warnings before info
  EXPECT_EQ(v[3].weight, 0.2);
  EXPECT_EQ(v[4].kind, FindingKind::kExtraWork);
}

TEST(FindingWords, EveryKindHasATitleAndNoEmptySentence) {
  for (const FindingKindInfo& k : FindingKindTable()) {
    Finding f = Costed(k.kind, 5e6);
    f.hosts = {"node7"};
    f.subject = "aten::mm";
    f.subject_kind = "cpu_op";
    Evidence e;
    e.kind = k.source == "telemetry" ? EvidenceKind::kTelemetry : EvidenceKind::kFunction;
    e.rank = 1;
    e.subject = "aten::mm";
    e.subject_kind = "cpu_op";
    e.Set("value_ns", 9e6).Set("median_ns", 4e6).Set("excess_ns", 5e6).Set("cpu_busy_share", 0.97).Set("cpu_cores", 8);
    f.evidence = {e};
    const FindingWords w = DescribeFinding(f);
    EXPECT_FALSE(w.title.empty()) << k.id;
    EXPECT_NE(w.title, std::string(k.id)) << k.id << " has no sentence in report/finding_text.cc";
    for (const std::string& s : w.evidence) EXPECT_FALSE(s.empty()) << k.id;
    const nlohmann::json j = FindingToJson(f);
    EXPECT_EQ(j["kind"], std::string(k.id));
    EXPECT_EQ(j["evidence"][0]["values"]["value_ns"], 9000000);
  }
}

TEST(FindingWords, UncostedWorkSaysSoAndPointsAtTheFunction) {
  Finding f;
  f.kind = FindingKind::kExtraWork;
  f.severity = Severity::kInfo;
  f.ranks = {2};
  f.subject = "sm80_xmma_gemm_f32f32";
  f.subject_kind = "kernel";
  f.cost.method = CostMethod::kAddedWork;
  f.cost.added_ns = 22.6e6;
  f.cost.step_ns = 80e6;
  f.next = {NextStepKind::kCompareFunction, f.subject, ""};
  const FindingWords w = DescribeFinding(f);
  EXPECT_EQ(w.title, "rank 2 spends 22.60 ms more per step than the median rank in kernel sm80_xmma_gemm_f32f32; no "
                     "peer measurably waits for it");
  EXPECT_EQ(w.cost, "adds 22.60 ms/step on rank 2 (28.2% of the 80.00 ms step); no peer waits for it measurably, so "
                    "fixing it may not shorten the step");
  EXPECT_NE(w.next.find("sm80_xmma_gemm_f32f32 on rank 2"), std::string::npos) << w.next;
}

// A function called every fourth step (a checkpoint): the title gives the call's own length, since
// 5 ms per step hides a 20 ms stall; one called in most steps (0.75 per step) gets no such words.
TEST(FindingWords, AFunctionCalledInFewStepsSaysHowLongACallIs) {
  auto finding = [](double calls) {
    Finding f;
    f.kind = FindingKind::kExtraWork;
    f.ranks = {0};
    f.subject = "train.py(43): <module>|torch/serialization.py(944): save";
    f.subject_kind = "python_path";
    f.cost.method = CostMethod::kAddedWork;
    f.cost.added_ns = 5e6;
    Evidence e;
    e.kind = EvidenceKind::kFunction;
    e.rank = 0;
    e.subject = f.subject;
    e.subject_kind = f.subject_kind;
    e.Set("calls", calls).Set("median_calls", 0).Set("per_call_ns", 5e6 / calls).Set("value_ns", 5e6);
    f.evidence.push_back(e);
    return f;
  };
  const FindingWords w = DescribeFinding(finding(0.25));
  EXPECT_NE(w.title.find("save (20.00 ms a call, one every 4 steps on average); no peer"), std::string::npos)
      << w.title;
  EXPECT_NE(w.evidence.front().find("0.25 vs 0.0 calls/step"), std::string::npos) << w.evidence.front();
  EXPECT_EQ(DescribeFinding(finding(0.75)).title.find("a call,"), std::string::npos);
  Finding slower = finding(0.25);  // a slow_function whose function is an untraced gap
  slower.kind = FindingKind::kSlowFunction;
  slower.subject_kind = slower.evidence.front().subject_kind = "untraced";
  EXPECT_NE(DescribeFinding(slower).title.find("(20.00 ms a gap, one every 4 steps on average)"), std::string::npos)
      << DescribeFinding(slower).title;
}

TEST(FindingWords, APythonPathInTheFrameworkSaysWhoseCallItIs) {
  auto title = [](const std::string& path) {
    Finding f;
    f.kind = FindingKind::kExtraWork;
    f.ranks = {0};
    f.subject = path;
    f.subject_kind = "python_path";
    f.cost.method = CostMethod::kAddedWork;
    f.cost.added_ns = 5e6;
    return DescribeFinding(f).title;
  };
  // A Sequential's forward alone says nothing; the user's validate() around it does.
  EXPECT_NE(title("train.py(43): <module>|train.py(17): validate|nn.Module: Sequential_0|"
                  "torch/nn/modules/module.py(1782): _call_impl|torch/nn/modules/container.py(248): forward")
                .find("in Python path ...|train.py(17): validate|...|torch/nn/modules/container.py(248): forward;"),
            std::string::npos);
  // The user's own function last: itself; a builtin right under it: both.
  EXPECT_NE(title("train.py(43): <module>|train.py(101): burn_cpu").find("in Python path ...|train.py(101): burn_cpu;"),
            std::string::npos);
  EXPECT_NE(title("train.py(43): <module>|<built-in function sleep>")
                .find("in Python path ...|train.py(43): <module>|<built-in function sleep>;"),
            std::string::npos);
  // Framework frames only (a thread of the library's): the last frame.
  EXPECT_NE(title("threading.py(1)|torch/utils/data/_utils/pin_memory.py(18): _pin_memory_loop|<built-in method get>")
                .find("in Python path ...|<built-in method get>;"),
            std::string::npos);
}

}  // namespace
}  // namespace rankscope
