#include <algorithm>

#include "rankscope/findings/finding.h"
#include "rankscope/findings/finding_kind.h"

namespace rankscope {
namespace {

constexpr uint8_t kInfo = static_cast<uint8_t>(Severity::kInfo);
constexpr uint8_t kWarning = static_cast<uint8_t>(Severity::kWarning);
constexpr uint8_t kCritical = static_cast<uint8_t>(Severity::kCritical);

// In FindingKind order (checked below). Descriptions are for docs/findings.md.
constexpr FindingKindInfo kTable[] = {
    {FindingKind::kSlowNode, "slow_node", kWarning, "cluster",
     "Two or more ranks of one host, at least half of its ranks, spend more time per step on their own work than the "
     "median rank and the others wait for them: something the host's ranks share (CPU, memory, network, power, "
     "cooling). Also every rank of a host running work (a function called more often) that no rank of another host "
     "runs, found by the calls where the ranks' times are too noisy; information (`added_work`, no saving) when "
     "nobody measurably waits for it."},
    {FindingKind::kSlowRank, "slow_rank", kWarning, "cluster",
     "One rank spends more time per step on its own work (local time) than the median rank, arrives late at its "
     "collectives in most steps, and the others wait for it: its GPU, its data, its process."},
    {FindingKind::kSlowFunction, "slow_function", kWarning, "cluster",
     "A function (kernel, memory op, runtime call, CPU op, Python path, or collective) takes longer per step on some "
     "ranks than on their peers, or runs there and not on most ranks (work of their own: told as such), on ranks no "
     "slow rank or node finding covers; costed by the step time saved if it ran there as on the median rank."},
    {FindingKind::kExtraWork, "extra_work", kInfo, "cluster",
     "A rank spends more time per step than its peers in a phase or function, but no peer measurably waits for it "
     "(it does not set the pace, or the difference is within the ranks' normal spread): reported with the time it "
     "adds and no saving, below every costed finding — unless the per-step what-if (`cluster/cost_model.h`: the "
     "rank's excess removed in every step, each step's time recomputed as its slowest rank's) shows a saving of at "
     "least the minimum cost, which is then its cost."},
    {FindingKind::kCpuContention, "cpu_contention", kInfo, "cluster",
     "A step-to-step imbalance among data-parallel ranks (it would have been a per_step_imbalance finding) that the "
     "host's scheduler can make: the ranks wait for a CPU in the run queue, per step, at least half as long as the "
     "slowest rank of a step exceeds the median. The host's CPUs are oversubscribed (other processes, too many "
     "threads); the imbalance is not attributed to the input. Needs the collector's record of CPU run and wait in "
     "the traces (`rankscope_cpu_sched`); no saving is claimed."},
    {FindingKind::kUnevenTiming, "uneven_timing", kInfo, "cluster",
     "A step-to-step imbalance among data-parallel ranks (it would have been a per_step_imbalance finding) in which "
     "the ranks' work did not change relative to each other from step to step — every rank ran the same operators "
     "on the same input shapes in each step compared, each rank the same ones in every step, or the slowest rank "
     "of most steps its peers' ones or its own usual ones (the steps' work signatures, from record_shapes): the "
     "input is not the cause; the time goes to something outside the work (CPU scheduling, a device several ranks "
     "share, garbage collection, clocks). No saving is claimed."},
    {FindingKind::kStalledCalls, "stalled_calls", kInfo, "cluster",
     "Functions abnormal on a rank only through a few calls that stalled — each over 10x the function's p99 call "
     "and 1 ms longer, at most one every other step — while its other calls took what its peers' took: the thread "
     "was held off its CPU during them (preempted on a host with more threads than cores, a page fault, a pause), "
     "not running slower code. No saving is claimed: no change to the function recovers the time."},
    {FindingKind::kSlowStage, "slow_stage", kWarning, "cluster",
     "A pipeline stage spends more time per step on its own work (median over its ranks) than the other stages: a "
     "partition imbalance; the other stages wait for it once per micro-batch (the bubble it causes)."},
    {FindingKind::kSlowWorker, "slow_worker", kWarning, "cluster",
     "A rank spends more time per step on its own work than the other ranks of its pipeline stage: its pipeline "
     "column and its data-parallel peers wait for it."},
    {FindingKind::kPerStepImbalance, "per_step_imbalance", kWarning, "cluster",
     "Among the data-parallel ranks of a stage, the slowest rank changes from step to step and exceeds the step's "
     "median by the margin in most steps while the ranks' medians are close: input or sequence-length imbalance."},
    {FindingKind::kInputPipelineBound, "input_pipeline_bound", kWarning, "telemetry",
     "The GPUs are mostly idle while the host CPU is saturated: the training steps wait for input."},
    {FindingKind::kInputPipelineCpuBound, "input_pipeline_cpu_bound", kWarning, "telemetry",
     "The host CPU is saturated and a large share of it goes to DataLoader worker processes."},
    {FindingKind::kHostCpuSaturated, "host_cpu_saturated", kWarning, "telemetry",
     "The host CPU is saturated during the traced window, not mainly by DataLoader workers."},
    {FindingKind::kGpuMostlyIdle, "gpu_mostly_idle", kInfo, "telemetry",
     "The GPUs are mostly idle and the host CPU is not saturated: the ranks wait on something else."},
    {FindingKind::kCpuSteal, "cpu_steal", kWarning, "telemetry",
     "The hypervisor takes a notable share of the CPU time (steal)."},
    {FindingKind::kIoWait, "io_wait", kWarning, "telemetry", "The CPUs wait on disk I/O a notable share of the time."},
    {FindingKind::kHostMemoryFull, "host_memory_full", kWarning, "telemetry",
     "Host memory is nearly full at the peak of the window."},
    {FindingKind::kGpuMemoryFull, "gpu_memory_full", kWarning, "telemetry",
     "A GPU's memory is nearly full at the peak of the window."},
    {FindingKind::kHangCollectiveMismatch, "hang_collective_mismatch", kCritical, "hang",
     "Members of a process group called different collectives at the same sequence number (op, sizes or dtypes differ, from the Flight Recorder): the ranks in the minority are named; the others wait for a call that never matches."},
    {FindingKind::kHangMissingFromCollective, "hang_missing_from_collective", kCritical, "hang",
     "The other members of a process group wait in a collective that these ranks never entered (Flight Recorder); their stacks say where they are instead."},
    {FindingKind::kHangUnresponsiveRank, "hang_unresponsive_rank", kCritical, "hang",
     "The rank's collector did not answer the snapshot (a thread holds the GIL in C) and its stack was taken from outside with py-spy: the native frames say which C call it is stuck in."},
    {FindingKind::kHangDataLoaderWait, "hang_dataloader_wait", kCritical, "hang",
     "The rank is missing from a collective its peers wait in because its main thread waits for a batch from its DataLoader (a stuck or dead worker)."},
    {FindingKind::kHangStackOutlier, "hang_stack_outlier", kWarning, "hang",
     "The rank's main thread is somewhere else than the majority's, and no Flight Recorder evidence explains it: the frame where the stacks part ways."},
    {FindingKind::kHangStuckInCollective, "hang_stuck_in_collective", kWarning, "hang",
     "Every member entered the same collective and none completed it: no rank is missing; the transport (network, a dead peer process, the communication library) is the suspect."},
    {FindingKind::kCompareRegression, "compare_regression", kWarning, "compare",
     "NEW is slower than BASE per step by a difference beyond the step-to-step noise, with its cause (operators "
     "added or removed, input shapes or types changed, the same work slower, communication, host time outside "
     "operators); costed by the difference, what reverting it is worth."},
    {FindingKind::kCompareImprovement, "compare_improvement", kInfo, "compare",
     "NEW is faster than BASE per step by a difference beyond the step-to-step noise, with its cause; no saving."},
};
static_assert(std::size(kTable) == static_cast<size_t>(FindingKind::kCount), "one table row per FindingKind");

constexpr bool InOrder() {
  for (size_t i = 0; i < std::size(kTable); ++i) {
    if (static_cast<size_t>(kTable[i].kind) != i) return false;
  }
  return true;
}
static_assert(InOrder(), "kTable rows are in FindingKind order");

}  // namespace

std::span<const FindingKindInfo> FindingKindTable() { return kTable; }

const FindingKindInfo& KindInfo(FindingKind kind) { return kTable[static_cast<size_t>(kind)]; }

std::string_view FindingKindId(FindingKind kind) { return KindInfo(kind).id; }

std::optional<FindingKind> FindingKindFromId(std::string_view id) {
  for (const FindingKindInfo& k : kTable) {
    if (k.id == id) return k.kind;
  }
  return std::nullopt;
}

}  // namespace rankscope
