// What `rankscope compare` found: per rank pair a RankComparison (overall breakdown, the ranked
// differences, operator / module / kernel / communication / memory tables), and for the job the
// pairing of ranks, the median and slowest rank, which ranks changed, and the findings. The
// report renderers (report/compare_report_*.cc) read only this. Times are ns per step (means
// over each run's kept steps); docs/compare.md defines every number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/findings/finding.h"

namespace rankscope::compare {

inline constexpr const char* kCompareSchema = "rankscope.compare/1";

// Step times of one run of one rank.
struct StepStats {
  uint32_t kept = 0;
  std::vector<int64_t> dropped;   // step numbers left out as slow outliers
  double mean_ns = 0;
  double sd_ns = 0;               // sample standard deviation over kept steps
  double drift_ns = 0;            // |mean of the first half - mean of the second half|
};

// One row of the overall breakdown (both runs per step, the difference).
struct OverallRow {
  std::string key;       // stable id: "step", "gpu.gemm", "comm.exposed", "phase.forward", ...
  std::string label;     // "GEMM / matmul"
  std::string group;     // "step", "gpu_compute", "communication", "memory", "gpu_idle", "host"
  double base_ns = 0, new_ns = 0;
  double base_count = -1, new_count = -1;  // per step; -1 = not a counted row
  bool regression = false;   // slower by more than the noise band
  bool improvement = false;  // faster by more than the noise band
  double delta_ns() const { return new_ns - base_ns; }
};

// Statements about the whole comparison that the report puts in words.
enum class ObservationKind : uint8_t {
  kGpuChangedStepDidNot,   // GPU busy time changed beyond noise, the step did not: host-bound
  kStepChangedGpuDidNot,   // the step changed beyond noise, GPU busy time did not: the host changed
  kNoDifference,           // the step-time difference is within noise
  kDifferentHardware,      // device names differ: kernels are compared by class, operators by name
  kFewOperatorsAligned,    // little of BASE's time aligns with NEW's: different models?
  kAlignmentApproximate,   // an LCS fell back to occurrence matching
  kNoGpu,                  // CPU-only traces
  kNoStacks,               // one run lacks Python stacks: no module comparison
  kNoShapes,               // --use-input-shapes but a run lacks shapes
};
std::string_view ObservationKindName(ObservationKind k);

struct Observation {
  ObservationKind kind;
  // kGpuChangedStepDidNot: Δ GPU busy; kStepChangedGpuDidNot: Δ step; kFewOperatorsAligned: share;
  // kDifferentHardware: 1 when the GPU vendors differ (AMD and NVIDIA)
  double value = 0;
  double reference = 0;  // kGpuChangedStepDidNot: Δ step; kStepChangedGpuDidNot: Δ GPU busy
  double extra = 0;      // kGpuChangedStepDidNot: GPU idle share of NEW's step
  std::string base_text, new_text;  // kDifferentHardware: device names
};

// Why a difference exists (the cause a group of attribution cells shares).
enum class Cause : uint8_t {
  kAdded,          // operators only in NEW (with their backward ops)
  kRemoved,        // operators only in BASE
  kShapes,         // paired operators whose input shapes differ
  kDtypes,         // paired operators whose input types differ (precision), with the casts added for it
  kSameWork,       // paired operators with the same shapes that take longer / shorter
  kManySmall,      // many same-work differences, each within noise, together beyond it
  kCommunication,  // exposed communication of a collective (op, dtype)
  kHostGap,        // host time outside any operator, by step phase
  kUnlinkedGpu,    // GPU work with no launching operator, by kernel class
};
std::string_view CauseName(Cause c);

struct DiffPart {
  std::string where;  // operator path, module, phase, size bucket...
  double base_ns = 0, new_ns = 0;
};

struct Difference {
  Cause cause = Cause::kSameWork;
  std::string subject;       // operator name, module path, collective, phase, kernel class
  std::string subject_kind;  // "operator", "module", "collective", "phase", "kernel_class", "operators"
  std::string phase;         // where it happens, when one phase dominates
  std::string before, after; // shapes / dtypes / counts where they say what changed
  double base_ns = 0, new_ns = 0;          // per step
  double base_host_ns = 0, new_host_ns = 0;  // of which host-side (priority 2-6 cells)
  double base_count = 0, new_count = 0;      // operator instances per step (operators)
  bool beyond_noise = false;
  uint32_t cells = 0;
  std::vector<DiffPart> parts;  // the largest contributions, by |Δ|
  double delta_ns() const { return new_ns - base_ns; }
};

struct OperatorRow {
  uint32_t depth = 0;
  bool expanded = false;     // its children follow as rows (they split its time)
  std::string name;          // BASE's name for pairs (NEW's when renamed: "old -> new")
  std::string path;          // names from the thread root, " > "-joined
  std::string status;        // "same", "shapes", "dtypes", "added", "removed"
  std::string module;        // innermost module path, or ""
  std::string phase;
  double base_count = 0, new_count = 0;    // per step
  double base_host_ns = 0, new_host_ns = 0;  // inclusive host time
  double base_device_ns = 0, new_device_ns = 0;  // GPU time of kernels it and its children launched
  double base_attributed_ns = 0, new_attributed_ns = 0;  // its subtree's cells (wall time it costs)
  std::string base_shapes, new_shapes;
  std::string base_kernels, new_kernels;   // "name ×count; ..." of the kernels it launched itself
};

struct OperatorStatRow {
  std::string name;
  std::string status;        // "both", "added", "removed"
  double base_count = 0, new_count = 0;
  double base_host_ns = 0, new_host_ns = 0;     // Σ inclusive (nested instances of the same name counted once)
  double base_self_ns = 0, new_self_ns = 0;
  double base_device_ns = 0, new_device_ns = 0;
  double base_attributed_ns = 0, new_attributed_ns = 0;
};

struct ModuleRow {
  uint32_t depth = 0;
  std::string path;          // "Net_0/Sequential_0/Linear_1" (NEW's names for pairs)
  std::string name;
  std::string status;        // "same", "added", "removed"
  std::string source;        // "file.py(line): forward"
  double base_count = 0, new_count = 0;
  double base_host_ns = 0, new_host_ns = 0;          // forward, inclusive
  double base_host_self_ns = 0, new_host_self_ns = 0;
  double base_device_ns = 0, new_device_ns = 0;      // forward GPU time, total
  double base_device_self_ns = 0, new_device_self_ns = 0;
  double base_backward_host_ns = 0, new_backward_host_ns = 0;
  double base_backward_device_ns = 0, new_backward_device_ns = 0;
  double base_attributed_ns = 0, new_attributed_ns = 0;  // forward + backward cells, total
  std::vector<std::string> top_operators;  // its operators with the largest |Δ attributed|
};

struct KernelDiffRow {
  std::string name;
  std::string kernel_class;
  std::string status;        // "both", "added", "removed"
  double base_count = 0, new_count = 0;
  double base_ns = 0, new_ns = 0;
};

struct KernelClassRow {
  std::string kernel_class, label;
  double base_count = 0, new_count = 0;
  double base_ns = 0, new_ns = 0;
  uint32_t base_names = 0, new_names = 0;  // distinct kernels
  std::string base_top, new_top;           // the heaviest kernel names, side by side
};

struct CommDiffRow {
  std::string op, dtype, size;   // size bucket label
  bool on_gpu = true;
  std::string base_algorithm, new_algorithm;  // algorithm/protocol as decoded
  double base_count = 0, new_count = 0;
  double base_ns = 0, new_ns = 0;
  double base_exposed_ns = 0, new_exposed_ns = 0;
  double base_bytes = 0, new_bytes = 0;
  double base_algbw_gbps = 0, new_algbw_gbps = 0;
  double base_busbw_gbps = 0, new_busbw_gbps = 0;
};

struct MemoryRow {
  std::string name;          // operator
  double base_allocs = 0, new_allocs = 0;      // per step
  double base_bytes = 0, new_bytes = 0;        // allocated per step
  double base_peak = -1, new_peak = -1;        // max total allocated seen inside it
};

struct MemoryPeakRow {
  std::string device;        // "CPU", "cuda:0"
  double base_peak = -1, new_peak = -1;
  double base_reserved = -1, new_reserved = -1;
};

struct RankComparison {
  int64_t base_rank = -1, new_rank = -1;
  std::string base_path, new_path;
  std::vector<std::string> base_devices, new_devices;
  StepStats base_steps, new_steps;
  double delta_ns = 0;
  double noise_ns = 0;       // the noise band (docs/compare.md "Noise")
  bool beyond_noise = false;
  std::vector<OverallRow> overall;
  std::vector<Observation> observations;
  std::vector<Difference> differences;  // ranked by |Δ|; they add up to delta_ns
  double explained_ns = 0;   // Σ of the differences beyond noise
  double unexplained_ns = 0; // delta - explained: the differences within noise (and variation_ns)
  double variation_ns = 0;   // delta - Σ of the listed differences: those past the list, rounding
  double aligned_share = 0;  // share of BASE's attributed time in paired operators
  bool detailed = false;     // the tables below are filled
  std::vector<OperatorRow> operators;
  std::vector<OperatorStatRow> operator_stats;
  std::vector<ModuleRow> modules;
  std::vector<KernelDiffRow> kernels;
  std::vector<KernelClassRow> kernel_classes;
  std::vector<CommDiffRow> communication;
  std::vector<MemoryRow> memory;
  std::vector<MemoryPeakRow> memory_peaks;
  bool has_memory = false;   // both runs have memory events
  std::vector<std::string> warnings;
};

struct CompareOptionsEcho {
  std::string steps;
  std::optional<int64_t> rank;
  bool use_input_shapes = false;
  std::vector<std::string> op_map;
  std::optional<int64_t> max_kernels;
  bool keep_outlier_steps = false;
};

struct JobComparison {
  std::vector<std::string> base_inputs, new_inputs;
  CompareOptionsEcho options;
  std::vector<int64_t> base_ranks, new_ranks;  // rank numbers present
  std::vector<RankComparison> ranks;           // per compared rank pair, by rank
  // Job level (two or more ranks): the rank with the median NEW-minus-BASE step delta and the
  // slowest rank of each run (by mean step time).
  int64_t median_rank = -1;
  int64_t base_slowest_rank = -1, new_slowest_rank = -1;
  double base_median_step_ns = 0, new_median_step_ns = 0;   // median over ranks of mean step time
  double base_slowest_step_ns = 0, new_slowest_step_ns = 0;
  double base_comm_wait_ns = -1, new_comm_wait_ns = -1;     // median rank's wait for peers (cluster arrival)
  std::vector<int64_t> changed_ranks;    // |Δ| beyond the rank's noise band
  std::vector<int64_t> focus_ranks;      // ranks with full tables (detailed)
  std::vector<Finding> findings;
  std::vector<std::string> warnings;
  std::string baseline_note;             // compare --baseline: where the baseline came from
};

}  // namespace rankscope::compare
