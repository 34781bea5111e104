// RankSummary: everything rankscope keeps about one rank after analysing its trace (the "map"
// output of the data flow, docs/architecture.md). The trace model is dropped once this exists, so
// the summary is bounded: tables keep their worst rows (kDefaultMaxRows) plus every row above
// 0.1 % of the window, at most kMaxKeptRows (definitions.h), and count the rest.
//
// Cluster diagnosis reduces over these summaries. What it can rely on:
//  - steps: per-step absolute start/end (ns since the unix epoch), CPU and GPU phase times,
//    the GPU work each step launched (busy, compute, communication);
//  - window: W in absolute ns, its length, GPU busy/exposed time per class;
//  - function tables (kernels, memory ops, runtime calls, CPU ops, Python paths, collective
//    types) with count, total, median, p99, bottleneck and in-window time, keyed by name +
//    detail, so the same function can be found on every rank;
//  - collective instances: op, process group, sequence number (when the trace has one) and
//    order within the group, step, absolute start/end and launch time, bytes, for matching
//    instances across ranks and estimating clock offsets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/analysis/definitions.h"
#include "rankscope/analysis/window.h"
#include "rankscope/ingest/rank_resolver.h"

namespace rankscope {

enum class StepPhase : uint8_t { kDataLoading = 0, kForward, kBackward, kOptimizer, kOther };
inline constexpr int kNumStepPhases = 5;
std::string_view StepPhaseName(StepPhase p);

struct StepSummary {
  int64_t number = -1;
  int64_t start_ns = 0;  // absolute
  int64_t end_ns = 0;
  std::array<int64_t, kNumStepPhases> cpu_phase_ns{};  // sums to end - start
  // GPU work launched during the step: busy time of that work, per phase of its launch.
  std::array<int64_t, kNumStepPhases> gpu_phase_ns{};
  int64_t gpu_busy_ns = 0;     // union of the activities the step launched
  int64_t compute_ns = 0;      // ... of its compute kernels
  int64_t communication_ns = 0;
  int64_t gpu_start_ns = -1;   // absolute span of that work; -1 when it launched none
  int64_t gpu_end_ns = -1;
  int64_t host_compute_ns = 0;  // union of CPU ops on the training threads within the step
  // Exposed time of the collectives the step launched (communication that nothing hides: the
  // time the rank waits for its peers); cluster diagnosis subtracts it from the duration.
  int64_t comm_exposed_ns = 0;
  // Host time blocked until GPU work was done (host_gpu_waits.h): how much of the step GPU work
  // can have set.
  int64_t host_gpu_wait_ns = 0;
  // What the step computed (work_signature.h): equal on two ranks that ran the same operators on
  // the same input shapes; 0 when the trace has no shapes.
  uint64_t work_signature = 0;
  int64_t shaped_ops = 0;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

// One row of a function table.
struct FunctionStat {
  std::string name;
  std::string detail;  // kernels: "grid|block"; Python paths: the thread; else empty
  ActivityClass cls = ActivityClass::kNone;  // GPU functions only
  uint64_t count = 0;     // instances that start in W
  int64_t total_ns = 0;   // their summed duration
  int64_t median_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
  int64_t in_window_ns = 0;   // Σ |instance ∩ W| (proportion = in_window_ns / |W|)
  double bottleneck_ns = 0;   // bottleneck ratio = bottleneck_ns / |W|
  int64_t bytes = -1;         // memory ops: bytes moved by the counted instances
  bool wait = false;          // blocked, not working (analysis/wait_functions.h); Python paths: the leaf
  uint64_t stalls = 0;        // calls that stalled (definitions.h kStallFactor)
  int64_t stall_ns = 0;       // ... their time beyond the p99 call
};

struct FunctionTable {
  std::vector<FunctionStat> rows;  // worst first: bottleneck, then in-window time
  uint64_t omitted_rows = 0;       // rows left out (below kKeepShare of |W| and not among the worst)
  int64_t omitted_in_window_ns = 0;
  int64_t omitted_max_in_window_ns = 0;  // the largest in-window time of an omitted row (0: none)
  uint64_t instances = 0;          // all instances counted (kept rows or not)
};

struct GpuSummary {
  std::array<int64_t, kNumActivityClasses> busy_ns{};
  std::array<int64_t, kNumActivityClasses> exposed_ns{};
  int64_t busy_ns_all = 0;  // busy(all GPU activity) within W
  int64_t idle_ns = 0;
  int64_t comm_compute_overlap_ns = 0;  // |communication ∩ compute|
  std::vector<int32_t> devices;
  uint64_t activities = 0;
};

struct StreamIdle {
  int32_t device = -1;
  int32_t stream = -1;
  int64_t busy_ns = 0;  // within W
  int64_t host_wait_ns = 0;
  int64_t kernel_wait_ns = 0;
  int64_t other_ns = 0;
  int64_t edge_ns = 0;  // before the stream's first activity / after its last
  uint64_t gaps = 0;
};

struct LaunchDelayStats {
  std::string api;  // the launch call's name ("" for all of them together)
  uint64_t count = 0;
  int64_t mean_ns = 0;
  int64_t median_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
  int64_t launch_call_mean_ns = 0;  // mean duration of the launch call itself
};

// Launch-delay histogram bucket upper bounds (ns); the last bucket is open.
inline constexpr std::array<int64_t, 5> kLaunchDelayBuckets = {10'000, 100'000, 1'000'000, 10'000'000,
                                                               100'000'000};

struct QueueDepth {
  int32_t device = -1;
  int32_t stream = -1;
  int64_t max_depth = 0;
  double mean_depth = 0;     // time-weighted over W
  int64_t empty_ns = 0;      // time in W with nothing queued
};

struct LaunchSummary {
  LaunchDelayStats all;
  std::vector<LaunchDelayStats> by_api;
  std::array<uint64_t, kLaunchDelayBuckets.size() + 1> histogram{};
  uint64_t unlinked_activities = 0;  // GPU activity in W without a launch call
  std::vector<QueueDepth> queues;
};

// A collective type: op + algorithm + protocol + dtype.
struct CollectiveType {
  std::string op;         // canonical: all_reduce, all_gather, ..., or the kernel's short name
  std::string algorithm;  // RING, TREE, ... (from the kernel name)
  std::string protocol;   // LL, LL128, SIMPLE
  std::string dtype;
  int64_t group_size = -1;
  bool on_gpu = true;     // a GPU kernel; false for CPU collectives (gloo)
  uint64_t count = 0;
  int64_t total_ns = 0, median_ns = 0, p99_ns = 0, max_ns = 0;
  int64_t bytes = -1;          // total over instances with a known size
  double algbw_gbps = 0;       // median over instances with a known size (GB/s = 1e9 B/s)
  double busbw_gbps = 0;
  double exposed_ns = 0;       // instants the type owns (not hidden by compute)
  int64_t busy_ns = 0;         // |union of its instances ∩ W|
  int64_t overlap_ns = 0;      // |union ∩ compute|
};

struct CollectiveInstance {
  int64_t start_ns = 0;   // absolute
  int64_t end_ns = 0;
  int64_t launch_ns = -1; // absolute start of the launching CPU call, when linked
  int64_t bytes = -1;
  int64_t seq = -1;       // the profiler's sequence number, when recorded
  int64_t step = -1;      // profiler step it was launched in
  uint32_t type = 0;      // index into RankSummary::collective_types
  uint32_t group = 0;     // index into RankSummary::process_groups
  uint32_t index_in_group = 0;  // order among this rank's instances of the group
  int32_t stream = -1;    // GPU stream, or -1 for CPU collectives
  int32_t peer = -1;      // a point-to-point transfer's other end (global rank), when the trace says
};
static_assert(sizeof(CollectiveInstance) == 72, "CollectiveInstance is kept per instance: keep it small");

struct ProcessGroupRef {
  std::string name;   // "Process Group Name" ("0"), or "" when the trace does not say
  std::string desc;   // "default_pg", ...
  std::string ranks;  // "[0, 1]" as written
  int64_t size = -1;
};

struct MemoryPeak {
  int32_t device_type = -1;  // 0 CPU, 1 CUDA, ...
  int32_t device_id = -1;
  int64_t peak_allocated = -1;  // bytes, over events in W
  int64_t peak_reserved = -1;
  int64_t trace_peak_allocated = -1;  // over the whole trace
  uint64_t events = 0;
};

struct OpAllocation {
  std::string op;
  uint64_t count = 0;
  int64_t bytes = 0;
};

struct MemorySummary {
  std::vector<MemoryPeak> devices;
  std::vector<OpAllocation> top_allocators;  // by bytes allocated inside the op, in W
};

struct RankSummary {
  // Identity.
  std::string path;
  RankAssignment rank;
  bool rank_resolved = false;
  std::optional<int64_t> distributed_rank;
  std::optional<int64_t> world_size;
  std::string backend;
  std::string host_name;
  std::vector<std::string> device_names;
  int64_t time_origin_ns = 0;  // absolute = origin + trace clock
  CpuSchedWindow cpu_sched;    // the recorded window's CPU run and run-queue wait, when the trace has it

  // W.
  WindowMode window_mode = WindowMode::kSteps;
  int64_t window_start_ns = 0;  // absolute
  int64_t window_end_ns = 0;
  int64_t window_ns() const { return window_end_ns - window_start_ns; }
  std::vector<StepSummary> steps;  // steps inside W
  uint64_t steps_in_trace = 0;
  std::string step_source = "profiler_step";  // derived_steps.h: where the steps come from
  std::string step_marker;                     // "repeating_pattern": the repeating name

  bool has_gpu = false;
  GpuSummary gpu;
  FunctionTable kernels;          // by name + grid|block
  FunctionTable kernel_names;     // by name alone (every launch shape together)
  FunctionTable kernels_by_op;    // GPU time of the kernels each CPU op launched, by the op's name
  FunctionTable memory_ops;
  FunctionTable runtime_calls;
  FunctionTable cpu_ops;
  FunctionTable python_paths;
  uint32_t collector_threads = 0;  // threads of rankscope's collector, left out of python_paths
  FunctionTable untraced;  // gaps with nothing recorded, by the slices around them (untraced_time.h)

  std::vector<CollectiveType> collective_types;
  std::vector<ProcessGroupRef> process_groups;
  // distributedInfo.pg_config: every group this rank belongs to, used by collectives or not
  // (cluster/layout.h reads the job's parallel layout from it).
  std::vector<ProcessGroupRef> pg_config;
  std::vector<CollectiveInstance> collectives;
  uint64_t omitted_collectives = 0;
  int64_t host_compute_ns = 0;            // CPU-only traces: union of CPU ops on training threads
  int64_t comm_host_overlap_ns = 0;       // CPU collectives ∩ host compute
  int64_t comm_busy_ns = 0;               // union of collective instances within W

  std::vector<StreamIdle> idle_by_stream;
  int64_t kernel_wait_threshold_ns = kDefaultKernelWaitThresholdNs;
  LaunchSummary launch;
  MemorySummary memory;

  std::vector<std::string> warnings;
  uint64_t skipped_events = 0;
  uint64_t trace_events = 0;
  int64_t ingest_ns = 0;    // wall time to read the file
  int64_t analysis_ns = 0;  // wall time to build this summary
};

// The rank's exposed communication in W: the time it waited for its peers, from every collective
// its trace has (communication kernels on the GPU timeline; CPU collectives on the host).
double CommunicationExposedNs(const RankSummary& r);

}  // namespace rankscope
