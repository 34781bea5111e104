#include "rankscope/analysis/memory_usage.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace rankscope {
namespace {

std::vector<MemoryPeak> Peaks(const TraceModel& m, const Window& w) {
  std::map<std::pair<int32_t, int32_t>, MemoryPeak> by_device;
  for (const MemoryEvent& e : m.memory) {
    MemoryPeak& p = by_device[{e.device_type, e.device_id}];
    p.device_type = e.device_type;
    p.device_id = e.device_id;
    ++p.events;
    p.trace_peak_allocated = std::max(p.trace_peak_allocated, e.total_allocated);
    if (!w.Contains(e.ts)) continue;
    p.peak_allocated = std::max(p.peak_allocated, e.total_allocated);
    p.peak_reserved = std::max(p.peak_reserved, e.total_reserved);
  }
  std::vector<MemoryPeak> out;
  for (auto& [key, p] : by_device) out.push_back(p);
  return out;
}

// Bytes allocated in W inside each CPU op (innermost op on the allocating thread).
std::vector<OpAllocation> Allocators(const TraceModel& m, const Window& w, size_t top) {
  struct Op {
    uint32_t track;
    int64_t start, end;
    StringId name;
  };
  if (m.memory.empty()) return {};
  const SliceTable& s = m.slices;
  std::vector<Op> ops;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == ActivityKind::kHostOp) ops.push_back({s.track[i], s.ts[i], s.ts[i] + s.dur[i], s.name[i]});
  }
  // Outer ops first at equal start, so the stack nests.
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
    return a.track != b.track ? a.track < b.track : a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<const MemoryEvent*> allocs;
  for (const MemoryEvent& e : m.memory) {
    if (e.bytes > 0 && w.Contains(e.ts)) allocs.push_back(&e);
  }
  std::sort(allocs.begin(), allocs.end(), [](const MemoryEvent* a, const MemoryEvent* b) {
    return a->track != b->track ? a->track < b->track : a->ts < b->ts;
  });
  std::unordered_map<StringId, OpAllocation> by_op;
  std::vector<const Op*> stack;
  size_t next = 0;
  uint32_t track = 0xFFFFFFFFu;
  for (const MemoryEvent* e : allocs) {
    if (e->track != track) {  // a new thread: restart the walk at its first op
      track = e->track;
      stack.clear();
      next = static_cast<size_t>(std::lower_bound(ops.begin(), ops.end(), track,
                                                  [](const Op& o, uint32_t t) { return o.track < t; }) - ops.begin());
    }
    while (next < ops.size() && ops[next].track == track && ops[next].start <= e->ts) {
      while (!stack.empty() && stack.back()->end <= ops[next].start) stack.pop_back();
      stack.push_back(&ops[next++]);
    }
    while (!stack.empty() && stack.back()->end <= e->ts) stack.pop_back();
    if (stack.empty()) continue;
    OpAllocation& a = by_op[stack.back()->name];
    ++a.count;
    a.bytes += e->bytes;
  }
  std::vector<OpAllocation> out;
  for (auto& [name, a] : by_op) {
    a.op = std::string(m.Str(name));
    out.push_back(std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const OpAllocation& a, const OpAllocation& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace

MemorySummary AnalyzeMemory(const TraceModel& m, const Window& w, size_t top_ops) {
  MemorySummary out;
  out.devices = Peaks(m, w);
  out.top_allocators = Allocators(m, w, top_ops);
  return out;
}

}  // namespace rankscope
