#include "rankscope/findings/finding.h"

#include <algorithm>

namespace rankscope {

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "warning";
}

std::string_view CostMethodName(CostMethod m) {
  switch (m) {
    case CostMethod::kNone: return "none";
    case CostMethod::kWhatIfLikeMedian: return "what_if_like_median";
    case CostMethod::kWhatIfFaster: return "what_if_faster";
    case CostMethod::kAddedWork: return "added_work";
    case CostMethod::kWindowShare: return "window_share";
    case CostMethod::kDelta: return "delta";
    case CostMethod::kWhatIfReplay: return "what_if_replay";
  }
  return "none";
}

std::string_view EvidenceKindName(EvidenceKind k) {
  switch (k) {
    case EvidenceKind::kLocalTime: return "local_time";
    case EvidenceKind::kArrival: return "arrival";
    case EvidenceKind::kPhase: return "phase";
    case EvidenceKind::kFunction: return "function";
    case EvidenceKind::kUtilization: return "gpu_utilization";
    case EvidenceKind::kHostPeers: return "host_peers";
    case EvidenceKind::kWhatIf: return "what_if";
    case EvidenceKind::kTelemetry: return "telemetry";
    case EvidenceKind::kCollectiveCall: return "collective_call";
    case EvidenceKind::kCollectiveWaiting: return "collective_waiting";
    case EvidenceKind::kCollectiveMissing: return "collective_missing";
    case EvidenceKind::kCollectiveUnknown: return "collective_unknown";
    case EvidenceKind::kCollectiveElsewhere: return "collective_elsewhere";
    case EvidenceKind::kStackTaken: return "stack_taken";
    case EvidenceKind::kNoStack: return "no_stack";
    case EvidenceKind::kStackFrame: return "stack_frame";
    case EvidenceKind::kCompareDelta: return "compare_delta";
    case EvidenceKind::kText: return "text";
    case EvidenceKind::kStage: return "stage";
    case EvidenceKind::kStepImbalance: return "step_imbalance";
    case EvidenceKind::kCpuWait: return "cpu_wait";
    case EvidenceKind::kSameWork: return "same_work";
    case EvidenceKind::kSlowerOps: return "slower_ops";
    case EvidenceKind::kStalledCalls: return "stalled_calls";
  }
  return "text";
}

std::string_view NextStepKindName(NextStepKind k) {
  switch (k) {
    case NextStepKind::kNone: return "none";
    case NextStepKind::kCheckHost: return "check_host";
    case NextStepKind::kFunctionOnRanks: return "function_on_ranks";
    case NextStepKind::kInputPipeline: return "input_pipeline";
    case NextStepKind::kPhaseOnRanks: return "phase_on_ranks";
    case NextStepKind::kBeforeCollectives: return "before_collectives";
    case NextStepKind::kCompareFunction: return "compare_function";
    case NextStepKind::kNodeCondition: return "node_condition";
    case NextStepKind::kHangFrame: return "hang_frame";
    case NextStepKind::kHangCollectiveCallSites: return "hang_collective_call_sites";
    case NextStepKind::kHangNativeCall: return "hang_native_call";
    case NextStepKind::kHangDataLoaderWorkers: return "hang_dataloader_workers";
    case NextStepKind::kHangTransport: return "hang_transport";
    case NextStepKind::kCompareTable: return "compare_table";
    case NextStepKind::kPartitionStages: return "partition_stages";
  }
  return "none";
}

Evidence& Evidence::Set(std::string name, double value) {
  for (Quantity& q : values) {
    if (q.name == name) {
      q.value = value;
      return *this;
    }
  }
  values.push_back({std::move(name), value});
  return *this;
}

double Evidence::Get(std::string_view name, double fallback) const {
  for (const Quantity& q : values) {
    if (q.name == name) return q.value;
  }
  return fallback;
}

bool Evidence::Has(std::string_view name) const {
  return std::any_of(values.begin(), values.end(), [&](const Quantity& q) { return q.name == name; });
}

const Evidence* Finding::FindEvidence(EvidenceKind kind) const {
  for (const Evidence& e : evidence) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

const Evidence* Finding::LeadFunction() const {
  if (ranks.empty()) return nullptr;
  const Evidence* first = nullptr;
  for (const Evidence& e : evidence) {
    if (e.kind != EvidenceKind::kFunction || e.rank != ranks.front()) continue;
    if (e.subject == subject) return &e;
    if (!first) first = &e;
  }
  return subject.empty() ? first : nullptr;
}

Finding AsMachineNote(const Finding& f, FindingKind kind) {
  Finding n;
  n.kind = kind;
  n.severity = Severity::kInfo;
  n.ranks = f.ranks;
  n.hosts = f.hosts;
  n.subject = f.subject;
  n.subject_kind = f.subject_kind;
  n.cost = f.cost;
  n.cost.method = CostMethod::kNone;
  n.cost.saving_ns = 0;
  n.cost.estimated_step_ns = n.cost.step_ns;
  n.cost.added_ns = 0;
  n.weight = 0;
  for (const Evidence& e : f.evidence) {
    if (e.kind != EvidenceKind::kWhatIf) n.evidence.push_back(e);
  }
  return n;
}

void RankFindings(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& a, const Finding& b) {
    const bool a_saves = a.cost.saving_ns > 0, b_saves = b.cost.saving_ns > 0;
    if (a_saves != b_saves) return a_saves;
    if (a_saves && a.cost.saving_ns != b.cost.saving_ns) return a.cost.saving_ns > b.cost.saving_ns;
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.cost.added_ns != b.cost.added_ns) return a.cost.added_ns > b.cost.added_ns;
    if (a.weight != b.weight) return a.weight > b.weight;
    return a.kind < b.kind;
  });
}

}  // namespace rankscope
