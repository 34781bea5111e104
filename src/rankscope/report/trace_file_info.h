// `rankscope info`: what a trace file holds, computed from its TraceModel.
//
// This is the ingestion report: rank and world, devices, time span, profiler steps, events per
// category as spelled in the file, kernels, collectives, CPU<->GPU links and everything that
// was skipped. Tests check each number against an independent count on the real traces.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rankscope/ingest/rank_resolver.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

struct CollectiveCounts {
  uint64_t kernels = 0;      // communication kernels whose name decodes to this op
  uint64_t cpu_ops = 0;      // CPU events carrying "Collective name" (record_param_comms)
  uint64_t annotations = 0;  // "nccl:all_reduce" / "gloo:all_reduce" style annotations
};

struct TraceFileInfo {
  std::string path;
  uint64_t file_bytes = 0;
  uint64_t json_bytes = 0;
  bool gzip = false;

  std::optional<int64_t> distributed_rank;  // from the file; the final rank is resolved per set
  RankAssignment rank;
  bool rank_resolved = false;
  std::optional<int64_t> world_size;
  std::string backend;
  std::string host_name;
  std::vector<DeviceProperties> devices;
  bool has_device_properties = false;
  std::vector<int32_t> active_gpus;  // devices with GPU activity in the trace
  uint64_t gpu_streams = 0;
  uint64_t cpu_threads = 0;

  bool has_span = false;
  int64_t start_ns = 0;  // absolute (unix epoch) ns of the first ph:X event
  int64_t end_ns = 0;    // absolute ns of the last ph:X end
  bool timestamps_relative = false;  // ts written relative to baseTimeNanoseconds

  uint64_t profiler_steps = 0;        // distinct N in CPU-side ProfilerStep#N
  int64_t first_step = -1, last_step = -1;
  uint64_t profiler_step_events = 0;  // every ProfilerStep#N event, GPU-side copies included

  uint64_t elements = 0;
  std::map<char, uint64_t> by_phase;
  std::map<std::string, uint64_t> by_category;  // as spelled in the file; "(none)" = no cat
  uint64_t slices = 0, instants = 0, flows = 0, memory_events = 0;

  uint64_t kernels = 0;
  uint64_t distinct_kernels = 0;
  std::map<std::string, CollectiveCounts> collectives;

  uint64_t gpu_activities = 0;
  uint64_t gpu_with_correlation = 0;
  uint64_t gpu_linked_to_launch = 0;   // correlation matches a runtime/driver call
  uint64_t gpu_with_external_id = 0;
  uint64_t gpu_linked_to_cpu_op = 0;   // External id matches a CPU op / annotation

  SkipCounts skipped;
  SkipCounts ignored_fields;
};

TraceFileInfo BuildTraceFileInfo(const TraceModel& model);

nlohmann::json TraceFileInfoToJson(const TraceFileInfo& info);
std::string RenderTraceFileInfo(const TraceFileInfo& info);

}  // namespace rankscope
