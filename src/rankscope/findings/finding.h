// Finding: one diagnosis of a job, whatever produced it — cluster diagnosis, node telemetry,
// run comparison, hang analysis. Rules fill in facts only (which kind, who, how much, the numbers
// behind it, what to look at next); report/finding_text.cc and report/finding_json.cc write
// the words, so one sentence per kind exists once and JSON consumers get the numbers.
//
// Every kind is listed once, with its id, default severity and description, in
// finding_kinds.cc (docs/findings.md is the same table; a unit test keeps them in step).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rankscope {

enum class Severity : uint8_t { kInfo = 0, kWarning, kCritical };
std::string_view SeverityName(Severity s);  // "info", "warning", "critical"

// Stable kinds. Append new kinds anywhere, but never renumber ids in the table: they are the
// `kind` strings of the JSON report.
enum class FindingKind : uint16_t {
  // Cluster diagnosis (cluster/).
  kSlowNode,          // ranks of one host slow together
  kSlowRank,          // one rank slow on its own
  kSlowFunction,      // a function slower on some ranks than on their peers
  // Node telemetry joined with the traces (analysis/telemetry_join.h).
  kInputPipelineBound,
  kInputPipelineCpuBound,
  kHostCpuSaturated,
  kGpuMostlyIdle,
  kCpuSteal,
  kIoWait,
  kHostMemoryFull,
  kGpuMemoryFull,
  // Run comparison (compare/): one difference between BASE and NEW beyond noise, by cause.
  kCompareRegression,   // NEW is slower by it
  kCompareImprovement,  // NEW is faster by it
  kCount
};

// How a finding's cost was estimated.
enum class CostMethod : uint8_t {
  kNone = 0,         // no cost: the finding is a fact, not a saving (e.g. a hang)
  kWhatIfLikeMedian, // the step time if the ranks behaved like the median rank (cluster/what_if.h)
  kWhatIfFaster,     // the step time if a function ran on those ranks as on the median rank
  kAddedWork,        // work a rank adds per unit that no peer measurably waits for: not a saving
  kWindowShare,      // the share of the window a node condition lasted (telemetry)
  kDelta,            // a measured difference between two runs (compare)
};
std::string_view CostMethodName(CostMethod m);

struct Cost {
  CostMethod method = CostMethod::kNone;
  std::string unit = "step";      // costs are per "step", or per "window" without steps
  double saving_ns = 0;           // per unit: what fixing it is worth (ranking key)
  double step_ns = 0;             // the unit's time now
  double estimated_step_ns = 0;   // ... once fixed
  double added_ns = 0;            // kAddedWork: the extra time per unit on the rank(s)
  double share = 0;               // kWindowShare: 0..1
};

// One item of evidence: a measurement and what it is compared with. Which fields are used
// depends on `kind`; report/finding_text.cc has the sentence for each.
enum class EvidenceKind : uint8_t {
  kLocalTime,      // rank: local time per unit vs the median rank (value, reference, threshold)
  kCommWait,       // rank: communication wait vs median
  kComputeBusy,    // rank: compute busy vs median
  kArrival,        // rank: lateness at collectives (value = late per unit, count = instances, ...)
  kPhase,          // rank + subject (phase): phase time vs median; detail "CPU" or "GPU"
  kFunction,       // rank + subject (function) + detail (kind of function): time per unit vs median
  kUtilization,    // rank: GPU utilization vs median (shares)
  kHostPeers,      // host: how many of its ranks are slow (count of reference_count)
  kWhatIf,         // the step now (value) and once fixed (reference)
  kTelemetry,      // host + subject (metric): value vs threshold
  kCompareDelta,   // rank + subject + detail (cause): NEW per step (value) vs BASE (reference),
                   // threshold = noise band; count / reference_count = instances per step
  kText,           // a sentence the rule could not express as numbers (kept rare)
};
std::string_view EvidenceKindName(EvidenceKind k);

struct Evidence {
  EvidenceKind kind = EvidenceKind::kText;
  int64_t rank = -1;          // the rank it is about, or -1
  std::string host;
  std::string subject;        // phase, function, metric, frame...
  std::string detail;         // kind of function, "CPU"/"GPU", grid|block...
  double value = 0;           // the measurement
  double reference = 0;       // what it is compared with (peer median, baseline, total...)
  double threshold = 0;       // when it counts as abnormal
  double count = 0;           // instances, calls, ranks...
  double reference_count = 0;
  double extra = 0;           // a third number where a kind needs it (documented per kind)
  std::string text;           // kText only
};

// What to look at next, as data: the words are the report's.
enum class NextStepKind : uint8_t {
  kNone = 0,
  kCheckHost,        // host: CPU load, clocks, memory, thermal, network
  kFunctionOnRank,   // why subject (a function) is slower on the ranks
  kInputPipeline,    // the ranks' DataLoader, storage, host CPU
  kPhaseOnRank,      // what runs in subject (a phase) on the ranks that peers do not run
  kBeforeCollectives,// what the ranks do before their collectives
  kCompareFunction,  // compare subject on the ranks with a healthy rank
  kTelemetry,        // a node condition: subject says which
  kCompareDetail,    // see subject in the compare report's table `detail` (operators, modules, ...)
  kText,             // free text
};

struct NextStep {
  NextStepKind kind = NextStepKind::kNone;
  std::string subject;
  std::string detail;
  std::string text;  // kText only
};

struct Finding {
  FindingKind kind = FindingKind::kSlowRank;
  Severity severity = Severity::kWarning;
  std::vector<int64_t> ranks;      // rank numbers involved, ascending
  std::vector<std::string> hosts;  // hosts involved
  std::string subject;             // the function / phase / metric it is about, or ""
  std::string subject_kind;        // "kernel", "cpu_op", "phase", ... or ""
  Cost cost;
  std::vector<Evidence> evidence;
  NextStep next;
};

// Ranking: costed findings by saving (largest first), then uncosted ones by severity and
// added time. Stable for equal keys.
void RankFindings(std::vector<Finding>* findings);

}  // namespace rankscope
