#include "rankscope/ingest/trace_model.h"

#include <fmt/format.h>

namespace rankscope {

std::string_view ActivityKindName(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kNone: return "none";
    case ActivityKind::kOther: return "other";
    case ActivityKind::kHostOp: return "host_op";
    case ActivityKind::kAnnotation: return "annotation";
    case ActivityKind::kDeviceAnnotation: return "device_annotation";
    case ActivityKind::kPythonFrame: return "python_frame";
    case ActivityKind::kRuntimeCall: return "runtime_call";
    case ActivityKind::kDriverCall: return "driver_call";
    case ActivityKind::kDeviceKernel: return "device_kernel";
    case ActivityKind::kDeviceMemcpy: return "device_memcpy";
    case ActivityKind::kDeviceMemset: return "device_memset";
    case ActivityKind::kDeviceSync: return "device_sync";
    case ActivityKind::kInstant: return "instant";
    case ActivityKind::kProfilerSpan: return "profiler_span";
    case ActivityKind::kProfilerOverhead: return "profiler_overhead";
    case ActivityKind::kFlow: return "flow";
    case ActivityKind::kCount: break;
  }
  return "?";
}

bool IsC10dPointToPointOp(std::string_view name) {
  return name == "c10d::send" || name == "c10d::recv_" || name == "c10d::recv_any_source_";
}

std::string_view CollectiveAnnotationOp(std::string_view name) {
  for (std::string_view prefix : {"gloo:", "nccl:", "rccl:", "hccl:", "mpi:", "ucc:", "xccl:"}) {
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) return name.substr(prefix.size());
  }
  return {};
}

void SliceTable::reserve(size_t n) {
  ts.reserve(n);
  dur.reserve(n);
  name.reserve(n);
  track.reserve(n);
  kind.reserve(n);
  correlation.reserve(n);
  external_id.reserve(n);
  detail.reserve(n);
}

size_t SliceTable::MemoryBytes() const {
  return ts.capacity() * sizeof(int64_t) + dur.capacity() * sizeof(int64_t) +
         name.capacity() * sizeof(StringId) + track.capacity() * sizeof(uint32_t) +
         kind.capacity() * sizeof(ActivityKind) + correlation.capacity() * sizeof(int64_t) +
         external_id.capacity() * sizeof(int64_t) + detail.capacity() * sizeof(uint32_t);
}

void SkipCounts::Add(const std::string& reason, uint64_t offset) {
  Entry& e = by_reason[reason];
  if (e.count++ == 0) e.first_offset = offset;
}

uint64_t SkipCounts::total() const {
  uint64_t n = 0;
  for (const auto& [reason, entry] : by_reason) n += entry.count;
  return n;
}

std::string TraceModel::JsonIdText(const JsonId& id) const {
  if (id.is_string) return std::string(strings.Get(static_cast<StringId>(id.value)));
  return fmt::format("{}", id.value);
}

size_t TraceModel::MemoryBytes() const {
  return strings.MemoryBytes() + slices.MemoryBytes() + gpu.capacity() * sizeof(GpuActivityInfo) +
         python.capacity() * sizeof(PythonFrameInfo) + collectives.capacity() * sizeof(CollectiveInfo) +
         op_shapes.capacity() * sizeof(OpShape) + op_work.capacity() * sizeof(OpWork) + p2p_peers.capacity() * sizeof(P2pPeer) +
         (forward_ops.capacity() + backward_ops.capacity()) * sizeof(uint32_t) +
         instants.ts.capacity() * (sizeof(int64_t) + sizeof(StringId) + sizeof(uint32_t) + sizeof(ActivityKind)) +
         memory.capacity() * sizeof(MemoryEvent) + flows.capacity() * sizeof(FlowEvent) +
         tracks.capacity() * sizeof(Track) + processes.capacity() * sizeof(Process);
}

}  // namespace rankscope
