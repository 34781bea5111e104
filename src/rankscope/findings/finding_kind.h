// Every kind of finding rankscope reports, in one table (finding_kinds.cc): its stable id (the
// JSON `kind`), default severity, which analysis produces it, and what it means. The table is
// the reference; docs/findings.md repeats it for readers and a unit test keeps them in step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rankscope {

enum class FindingKind : uint16_t {
  // Cluster diagnosis (cluster/).
  kSlowNode,
  kSlowRank,
  kSlowFunction,
  kExtraWork,
  kCpuContention,
  kUnevenTiming,
  kStalledCalls,
  // Parallelism-aware cluster diagnosis (cluster/parallel_findings.h).
  kSlowStage,
  kSlowWorker,
  kPerStepImbalance,
  // Node telemetry joined with the traced window (analysis/telemetry_join.h).
  kInputPipelineBound,
  kInputPipelineCpuBound,
  kHostCpuSaturated,
  kGpuMostlyIdle,
  kCpuSteal,
  kIoWait,
  kHostMemoryFull,
  kGpuMemoryFull,
  // Hang analysis of a stack snapshot + Flight Recorder dumps (hang/suspects.h).
  kHangCollectiveMismatch,
  kHangMissingFromCollective,
  kHangUnresponsiveRank,
  kHangDataLoaderWait,
  kHangStackOutlier,
  kHangStuckInCollective,
  // Run comparison (compare/): a difference between BASE and NEW beyond noise.
  kCompareRegression,
  kCompareImprovement,
  kCount
};

struct FindingKindInfo {
  FindingKind kind;
  std::string_view id;           // stable: the JSON report's `kind`
  uint8_t default_severity;      // a Severity (finding.h)
  std::string_view source;       // "cluster", "telemetry", "compare", "hang"
  std::string_view description;  // one sentence for the docs table
};

std::span<const FindingKindInfo> FindingKindTable();
const FindingKindInfo& KindInfo(FindingKind kind);
std::string_view FindingKindId(FindingKind kind);
std::optional<FindingKind> FindingKindFromId(std::string_view id);

}  // namespace rankscope
