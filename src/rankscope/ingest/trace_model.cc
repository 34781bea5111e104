#include "rankscope/ingest/trace_model.h"

#include <fmt/format.h>

namespace rankscope {

std::string_view CategoryName(Category c) {
  switch (c) {
    case Category::kNone: return "(none)";
    case Category::kOther: return "other";
    case Category::kCpuOp: return "cpu_op";
    case Category::kUserAnnotation: return "user_annotation";
    case Category::kGpuUserAnnotation: return "gpu_user_annotation";
    case Category::kPythonFunction: return "python_function";
    case Category::kCudaRuntime: return "cuda_runtime";
    case Category::kCudaDriver: return "cuda_driver";
    case Category::kKernel: return "kernel";
    case Category::kGpuMemcpy: return "gpu_memcpy";
    case Category::kGpuMemset: return "gpu_memset";
    case Category::kCudaSync: return "cuda_sync";
    case Category::kCpuInstant: return "cpu_instant_event";
    case Category::kTrace: return "Trace";
    case Category::kOverhead: return "overhead";
    case Category::kFlow: return "flow";
    case Category::kCount: break;
  }
  return "?";
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
  category.reserve(n);
  correlation.reserve(n);
  external_id.reserve(n);
  detail.reserve(n);
}

size_t SliceTable::MemoryBytes() const {
  return ts.capacity() * sizeof(int64_t) + dur.capacity() * sizeof(int64_t) +
         name.capacity() * sizeof(StringId) + track.capacity() * sizeof(uint32_t) +
         category.capacity() * sizeof(Category) + correlation.capacity() * sizeof(int64_t) +
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
         op_shapes.capacity() * sizeof(OpShape) +
         (forward_ops.capacity() + backward_ops.capacity()) * sizeof(uint32_t) +
         instants.ts.capacity() * (sizeof(int64_t) + sizeof(StringId) + sizeof(uint32_t) + sizeof(Category)) +
         memory.capacity() * sizeof(MemoryEvent) + flows.capacity() * sizeof(FlowEvent) +
         tracks.capacity() * sizeof(Track) + processes.capacity() * sizeof(Process);
}

}  // namespace rankscope
