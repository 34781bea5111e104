// Finding: one diagnosis of a job, whatever produced it — cluster diagnosis, node telemetry,
// run comparison, hang analysis. Rules fill in facts only (which kind, who, how much, the numbers
// behind it, what to look at next); report/finding_text.cc and report/finding_json.cc write the
// words, so the sentence for each kind exists once and JSON consumers get the numbers.
//
// Every kind is listed once, with its id, default severity and description, in
// finding_kinds.cc; docs/findings.md is the same table (a unit test keeps them in step).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/findings/finding_kind.h"

namespace rankscope {

enum class Severity : uint8_t { kInfo = 0, kWarning, kCritical };
std::string_view SeverityName(Severity s);  // "info", "warning", "critical"

// How a finding's cost was estimated.
enum class CostMethod : uint8_t {
  kNone = 0,          // no cost in time: a fact (a hang, a node condition without a share)
  kWhatIfLikeMedian,  // the step time if the ranks behaved like the median rank (cluster/what_if.h)
  kWhatIfFaster,      // the step time if a function ran on those ranks as on the median rank
  kAddedWork,         // work the ranks add per unit that no peer measurably waits for: not a saving
  kWindowShare,       // the share of the traced window a node condition lasted (telemetry)
  kDelta,             // a measured difference between two runs (compare)
  kWhatIfReplay,      // the steps replayed with the ranks' operations like their peers' (cluster/step_replay.h)
};
std::string_view CostMethodName(CostMethod m);

struct Cost {
  CostMethod method = CostMethod::kNone;
  std::string unit = "step";     // costs are per "step", or per "window" for traces without steps
  double saving_ns = 0;          // per unit: what fixing it is worth; the ranking key
  double step_ns = 0;            // the unit's time now
  double estimated_step_ns = 0;  // ... once fixed
  double added_ns = 0;           // the extra time per unit the ranks involved spend (their excess)
  double share = 0;              // kWindowShare: 0..1 of the window
};

// A named number of a piece of evidence. The suffix says the unit: "_ns" durations (per the
// cost's unit when it is a rate), "_share" 0..1, "_bytes" bytes; anything else is a count.
struct Quantity {
  std::string name;
  double value = 0;
};

// What a piece of evidence is about; report/finding_text.cc has one sentence per kind, and
// docs/findings.md lists the quantities each kind carries.
enum class EvidenceKind : uint8_t {
  kLocalTime,    // rank: local time, communication wait and compute busy vs the median rank
  kArrival,      // rank: how late it arrives at its collectives
  kPhase,        // rank + subject (phase) + detail ("CPU"/"GPU"): phase time vs the median rank
  kFunction,     // rank + subject (function) + detail (function kind, shape): time vs the median rank
  kUtilization,  // rank: GPU utilization vs the median rank
  kHostPeers,    // host: its other ranks are fine, or how many of its ranks are slow
  kWhatIf,       // the step time now and once fixed
  kTelemetry,    // host + subject (condition): the node figures behind it
  // Hang analysis (hang/suspects.h). subject: a call "op [sizes] dtypes" or a frame "file:line
  // function" / "symbol (library)"; detail: the process group ("0 (default_pg)") or source line.
  kCollectiveCall,      // ranks made this call at `seq`; subject_kind "majority" or "odd"
  kCollectiveWaiting,   // ranks wait in this collective (seq, members, pending_s)
  kCollectiveMissing,   // rank never entered it (seq, last_entered, last_completed; subject: its last completed call)
  kCollectiveUnknown,   // ranks of the group without a Flight Recorder dump
  kCollectiveElsewhere, // rank waits in another group's collective meanwhile (seq, pending_s)
  kStackTaken,          // rank: how its stack was taken (subject "collector"/"py-spy"); steps_completed, seconds_since_last_step
  kNoStack,             // rank: no stack; detail says why
  kStackFrame,          // a frame; subject_kind: "innermost", "native", "gil", "common", "odd", "majority",
                        // "majority_innermost", "dataloader_worker" (a worker process of `rank`; value pid)
  kCompareDelta, // rank + subject + detail (cause): the difference per step, BASE vs NEW, and the noise band
  kText,         // a sentence no other kind can express (keep rare)
  // Parallelism-aware findings (cluster/parallel_findings.h).
  kStage,          // subject: a pipeline stage; ranks: its ranks; detail "slow"/"peer"
  kStepImbalance,  // subject: a stage; ranks: the slowest rank of each step, in step order
  // CPU contention (cluster/cpu_contention.h).
  kCpuWait,  // rank: CPU run and run-queue wait per unit, the wait expected at its peers' contention
  // Uneven timing (cluster/uneven_timing.h).
  kSameWork,  // ranks: every rank ran the same operators on the same shapes in each of `steps` steps
  // Slower operations (cluster/slower_ops.h).
  kSlowerOps,  // rank + subject (the largest function compared): its operations, as often, each slower
  // Stalled calls (cluster/stalled_calls.h).
  kStalledCalls,  // rank + subject (a function): its excess is a few stalled calls
};
std::string_view EvidenceKindName(EvidenceKind k);

struct Evidence {
  EvidenceKind kind = EvidenceKind::kText;
  int64_t rank = -1;    // the rank it is about, or -1
  std::string host;
  std::vector<int64_t> ranks;  // several ranks it is about (e.g. a host's healthy ranks)
  std::string subject;       // phase, function, condition...
  std::string subject_kind;  // "phase", "kernel", "cpu_op", ...
  std::string detail;
  std::vector<Quantity> values;
  std::string text;     // kText only

  Evidence& Set(std::string name, double value);
  double Get(std::string_view name, double fallback = 0) const;
  bool Has(std::string_view name) const;
};

// What to look at next, as data; the report writes the words.
enum class NextStepKind : uint8_t {
  kNone = 0,
  kCheckHost,          // the host itself: CPU load, clocks, memory, thermal, network
  kFunctionOnRanks,    // why `subject` (a function) is slower on the ranks than on their peers
  kInputPipeline,      // the ranks' input pipeline
  kPhaseOnRanks,       // what runs in `subject` (a phase) on the ranks that their peers do not run
  kBeforeCollectives,  // what the ranks do before their collectives
  kCompareFunction,    // compare `subject` on the ranks with a healthy rank
  kNodeCondition,      // a node condition (telemetry): `subject` is the finding kind's id
  kHangFrame,               // what the ranks do at `subject` (a frame) instead of calling `detail` (a collective)
  kHangCollectiveCallSites, // where and with what arguments the ranks call `subject`; `detail`: what differs
  kHangNativeCall,          // the C call `subject` that holds the GIL: why it blocks, and release the GIL around it
  kHangDataLoaderWorkers,   // the rank's DataLoader worker processes (py-spy dump --pid of each)
  kHangTransport,           // the network, the peers' processes, the communication library's logs
  kCompareTable,       // look up `subject` in the comparison's `detail` table (operators, modules, ...)
  kPartitionStages,    // move layers off stage `subject` (pipeline partition)
};
std::string_view NextStepKindName(NextStepKind k);

struct NextStep {
  NextStepKind kind = NextStepKind::kNone;
  std::string subject;
  std::string detail;
};

struct Finding {
  FindingKind kind = FindingKind::kSlowRank;
  Severity severity = Severity::kWarning;
  std::vector<int64_t> ranks;      // rank numbers involved, ascending
  std::vector<std::string> hosts;  // hosts involved
  std::string subject;             // what it is about: a function, a phase, a condition; or ""
  std::string subject_kind;        // "kernel", "cpu_op", "python_path", "phase", ...; or ""
  std::string subject_detail;      // kernels: grid|block
  Cost cost;
  // How strongly a finding without a saving holds, 0..1 (e.g. how saturated the CPU is): orders
  // such findings among themselves.
  double weight = 0;
  std::vector<Evidence> evidence;
  NextStep next;

  const Evidence* FindEvidence(EvidenceKind kind) const;  // the first of that kind, or null
  // The function it is about on its first rank: its subject's `function` evidence there, else,
  // without a subject, the first function it lists there; null otherwise.
  const Evidence* LeadFunction() const;
};

// `f` told again as a note about the machine of kind `kind` (cpu_contention, uneven_timing): the
// same ranks, hosts, subject and evidence without its what-if, severity info, no saving and no
// added time, so it ranks below the findings about the job's own ranks and functions. The caller
// adds its own evidence and next step.
Finding AsMachineNote(const Finding& f, FindingKind kind);

// Ranking: findings with a saving, largest first; then the others by severity, added time and
// weight.
// Stable for equal keys.
void RankFindings(std::vector<Finding>* findings);

}  // namespace rankscope
