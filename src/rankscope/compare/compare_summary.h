// CompareSummary: what `rankscope compare` keeps about one rank of one run, built from the rank's
// TraceModel and its RankSummary on the engine's map worker (engine/analyze_job.h, RankHook), so
// the model is dropped once this exists; everything here is bounded (nodes, kernels per node,
// kernel names, buckets). The RankSummary itself stays in the engine's JobReport.
//
// Steps: the profiled steps of W (--steps A:B selects them by position), minus slow outlier steps (a step
// longer than median + max(3 x 1.4826 x MAD, 10 % of the median) — a one-time stall of the
// machine, not the run's behaviour; --keep-outlier-steps keeps them). Every number below is a
// sum over the kept steps; per-step values are those sums divided by `steps.kept`.
//
// Operator tree: the CPU operators (cpu_op) and annotations (user_annotation) of every kept
// step, merged into one template: an instance's key is its path of (name, occurrence among its
// siblings of that name) from the step's root, so the same operator in every step is one node.
// The step thread's operators hang under node 1 ("[step]"); every other thread that runs
// operators in the steps gets its own root ("[thread] <its first operator>"). Node 0 is the
// rank.
//
// Attribution (docs/compare.md "Attribution"): every instant of a kept step is given to exactly
// one cell, by priority:
//   1. GPU activity (compute > communication > memory > sync; k activities of the winning class
//      share an instant 1/k each): compute, memory and sync go to the operator that launched them
//      (else to "unlinked GPU work" of their kernel class), communication to its collective;
//   2. the step thread inside a CPU op: that op (the innermost);
//   3. another training thread inside a CPU op: that op;
//   4. a CPU collective in flight (gloo): that collective (communication the host waits for);
//   5. the step thread inside an annotation only (DataLoader, Optimizer.step, forward...): that
//      annotation;
//   6. the step thread outside any operator: "host time outside operators" of the step phase.
// So the cells of a step add up to its duration exactly, in both runs, and the differences of
// their per-step means add up to the step-time delta.
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/analysis/classifier.h"
#include "rankscope/analysis/rank_summary.h"
#include "rankscope/base/status.h"
#include "rankscope/compare/kernel_class.h"
#include "rankscope/compare/name_table.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope::compare {

inline constexpr uint32_t kNoIndex = 0xFFFFFFFFu;

enum class OpKind : uint8_t { kRank, kThread, kCpuOp, kAnnotation };
std::string_view OpKindName(OpKind k);

// A kernel (or memory op) an operator launched directly.
struct KernelUse {
  uint32_t name = 0;  // NameTable
  KernelClass cls = KernelClass::kElementwise;
  uint64_t count = 0;
  int64_t ns = 0;     // summed duration
};

struct OpNode {
  uint32_t name = 0;            // NameTable
  uint32_t occurrence = 0;      // among its siblings of that name (its key: parent, name, occurrence)
  uint32_t shapes = 0;          // NameTable: "dims|types" of its first instance; 0 = not recorded
  uint32_t parent = kNoIndex;
  std::vector<uint32_t> children;  // in call order
  OpKind kind = OpKind::kCpuOp;
  StepPhase phase = StepPhase::kOther;  // phase of the step at its first instance's start
  bool shapes_vary = false;     // its instances had different shapes
  uint16_t depth = 0;
  uint32_t module = kNoIndex;   // innermost nn.Module of its first instance (ModuleNode)
  uint32_t forward = kNoIndex;  // a backward op: the forward op it belongs to (fwdbwd flow)
  uint64_t count = 0;           // instances over the kept steps
  int64_t host_ns = 0;          // Σ inclusive duration
  int64_t self_ns = 0;          // Σ duration minus its children's
  // GPU work it launched itself (its children's is theirs).
  uint64_t launches = 0;
  int64_t device_ns = 0;        // Σ duration of those activities
  std::vector<KernelUse> kernels;  // by time, at most kMaxKernelsPerNode (the rest in `launches`)
  // Memory events ([memory], profile_memory=True) inside it (not inside a child).
  uint64_t allocs = 0;
  int64_t alloc_bytes = 0;      // Σ positive sizes
  int64_t freed_bytes = 0;      // Σ negative sizes, as a positive number
  int64_t peak_allocated = -1;  // max "Total Allocated" seen inside it
  // Attribution (see the file comment), Σ over kept steps, of the node itself (not children).
  double attributed_host_ns = 0;
  double attributed_device_ns = 0;
  // Filled at the end: the node and its descendants.
  int64_t device_total_ns = 0;
  uint64_t launches_total = 0;
  double attributed_total_ns = 0;
};

// nn.Module frames of the Python stacks (with_stack=True), merged like operators: a module's key
// is its path of names ("Linear_1" = the profiler's "nn.Module: Linear_1") from the outermost.
struct ModuleNode {
  uint32_t name = 0;          // NameTable, without "nn.Module: "
  uint32_t parent = kNoIndex;
  std::vector<uint32_t> children;  // in call order
  uint32_t source = 0;        // NameTable: "file.py(line): forward" of its forward(), or 0
  uint64_t count = 0;         // calls in the kept steps
  int64_t host_ns = 0;        // Σ durations of its frames (forward, inclusive)
  int64_t host_self_ns = 0;   // ... minus its child modules'
  // Sums over the operators whose innermost module this is (self) / it or a descendant (total).
  int64_t device_self_ns = 0, device_total_ns = 0;                  // forward ops' GPU work
  int64_t backward_host_ns = 0, backward_device_ns = 0;              // their backward ops (self)
  double attributed_self_ns = 0, attributed_total_ns = 0;           // forward + backward
  uint16_t depth = 0;
};

// Per kept step sums of the overall breakdown.
struct Breakdown {
  std::array<double, kNumKernelClasses> class_ns{};   // Σ |activity ∩ step| per kernel class
  std::array<double, kNumKernelClasses> class_count{};  // activities starting in a step
  double gpu_busy_ns = 0;        // union of all GPU activity within the steps
  double gpu_idle_ns = 0;
  double idle_host_bound_ns = 0; // idle gaps whose next activity was launched after the gap began
  double idle_other_ns = 0;
  double comm_busy_ns = 0;       // union of collectives (GPU kernels, or CPU collectives) within the steps
  double comm_exposed_ns = 0;    // instants attributed to communication (priority 1 or 4)
  double memory_exposed_ns = 0;  // instants owned by memcpy/memset
  std::array<double, kNumStepPhases> phase_ns{};  // CPU-side phases (RankSummary)
  double host_outside_ops_ns = 0;  // cells of priority 6
  double unlinked_gpu_ns = 0;      // GPU work without a launching operator
};

// One communication row: a collective type of one size bucket.
struct CommRow {
  std::string op, algorithm, protocol, dtype;
  int64_t group_size = -1;
  bool on_gpu = true;
  int bucket = -1;          // message size bucket (SizeBucketLabel), -1 = size unknown
  uint64_t count = 0;       // instances starting in a kept step
  int64_t time_ns = 0;      // Σ durations
  int64_t bytes = 0;        // Σ bytes of the sized ones
  double exposed_ns = 0;    // attributed (priority 1 for GPU, 4 for CPU collectives)
  double algbw_gbps = 0;    // median over sized, timed instances
  double busbw_gbps = 0;
};

// "<1 KiB", "1-16 KiB", ... : powers of 16 from 1 KiB.
std::string SizeBucketLabel(int bucket);
int SizeBucket(int64_t bytes);

// One kernel name over the kept steps.
struct KernelRow {
  uint32_t name = 0;
  KernelClass cls = KernelClass::kElementwise;
  uint64_t count = 0;
  int64_t ns = 0;
};

// What compare needs of the rank's RankSummary after the build.
struct RankFacts {
  std::string path;
  int64_t rank = -1;                        // resolved by the engine (JobReport)
  bool has_gpu = false;
  std::vector<std::string> device_names;    // deviceProperties (every device of the host)
  std::vector<MemoryPeak> memory_peaks;     // per device, over W
  std::vector<std::string> warnings;
};

struct CompareSummary {
  RankFacts rank;
  NameTable names;
  struct Steps {
    std::vector<int64_t> numbers;    // kept steps (ProfilerStep#N)
    std::vector<int64_t> durations;  // ns, same order
    std::vector<int64_t> dropped;    // step numbers left out as slow outliers
    uint32_t kept() const { return static_cast<uint32_t>(numbers.size()); }
  } steps;
  std::vector<OpNode> ops;       // [0] = rank, [1] = the step thread
  std::vector<ModuleNode> modules;  // [0] = a virtual root ("" ) when any module exists
  bool has_stacks = false;       // python_function events were recorded
  bool has_shapes = false;       // CPU ops carried input shapes
  bool has_memory = false;       // [memory] events in the kept steps
  uint64_t folded_instances = 0; // instances folded into their parent (node cap)
  Breakdown breakdown;
  // Cells without an operator, Σ over kept steps.
  std::array<double, kNumStepPhases> gap_ns{};                 // priority 6, by phase
  std::array<double, kNumKernelClasses> unlinked_ns{};         // priority 1 without a launching op
  std::vector<CommRow> comm;                                   // exposed_ns = their cells
  std::vector<KernelRow> kernels;  // by time, at most kMaxKernelNames; the rest summed into `other_kernels`
  KernelRow other_kernels;
  std::vector<std::string> warnings;
  int64_t build_ns = 0;          // wall time to build this (after AnalyzeRank)
};

struct SummaryOptions {
  bool keep_outlier_steps = false;
  // --steps A:B of compare: positions among the run's profiled steps (0 = its first), inclusive;
  // two runs rarely share step numbers.
  std::optional<int64_t> first_step, last_step;
  size_t max_nodes = 200'000;       // operator template nodes; deeper instances fold into their parent
  size_t max_kernels_per_node = 8;
  size_t max_kernel_names = 5'000;
};

// `rank` must be AnalyzeRank's summary of `model` (its steps define the steps compared), and
// `intermediates` (optional) what AnalyzeRank computed on the way (reused, not recomputed; the
// GPU activities are taken). Fails when W has no profiler steps.
StatusOr<CompareSummary> BuildCompareSummary(const TraceModel& model, const RankSummary& rank,
                                             const CommPatterns* patterns, const SummaryOptions& options,
                                             RankIntermediates* intermediates = nullptr);

}  // namespace rankscope::compare
