#include "rankscope/analysis/gpu_functions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "rankscope/analysis/function_table.h"

namespace rankscope {
namespace {

struct KernelKey {
  StringId name;
  int32_t grid[3];
  int32_t block[3];
  bool operator==(const KernelKey& o) const {
    return name == o.name && std::memcmp(grid, o.grid, sizeof grid) == 0 &&
           std::memcmp(block, o.block, sizeof block) == 0;
  }
};

struct KernelKeyHash {
  size_t operator()(const KernelKey& k) const {
    size_t h = k.name;
    for (int i = 0; i < 3; ++i) h = h * 1000003u ^ static_cast<uint32_t>(k.grid[i]) ^ (static_cast<size_t>(k.block[i]) << 21);
    return h;
  }
};

}  // namespace

std::string GridBlockText(const GpuActivityInfo& g) {
  return fmt::format("[{},{},{}]|[{},{},{}]", g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2]);
}

FunctionTable BuildKernelTable(const TraceModel& m, const std::vector<GpuActivity>& acts, const GpuTimeline& t,
                               const Window& w, size_t max_rows) {
  std::unordered_map<KernelKey, uint32_t, KernelKeyHash> ids;
  std::vector<FunctionStat> rows;
  std::vector<FunctionSample> samples;
  for (size_t i = 0; i < acts.size(); ++i) {
    const GpuActivity& a = acts[i];
    if (a.cls != ActivityClass::kCompute && a.cls != ActivityClass::kCommunication) continue;
    if (!w.Touches(a.start, a.end)) continue;
    const GpuActivityInfo& g = *m.GpuInfo(a.slice);
    KernelKey key{m.slices.name[a.slice], {g.grid[0], g.grid[1], g.grid[2]}, {g.block[0], g.block[1], g.block[2]}};
    auto [it, inserted] = ids.try_emplace(key, static_cast<uint32_t>(rows.size()));
    if (inserted) {
      FunctionStat row;
      row.name = std::string(m.Str(key.name));
      row.detail = GridBlockText(g);
      row.cls = a.cls;
      rows.push_back(std::move(row));
    }
    samples.push_back({it->second, a.start, a.end, t.owned_ns[i]});
  }
  AggregateSamples(samples, w, BottleneckRule::kOwnedGpuTime, t.busy, rows);
  return FinishTable(std::move(rows), max_rows, w.length());
}

namespace {

// Kernels (compute and communication) in W, keyed by `key(activity)` -> a StringId; rows are
// named by that string.
template <typename Key>
FunctionTable KernelsBy(const TraceModel& m, const std::vector<GpuActivity>& acts, const GpuTimeline& t,
                        const Window& w, size_t max_rows, Key key) {
  std::unordered_map<StringId, uint32_t> ids;
  std::vector<FunctionStat> rows;
  std::vector<FunctionSample> samples;
  for (size_t i = 0; i < acts.size(); ++i) {
    const GpuActivity& a = acts[i];
    if (a.cls != ActivityClass::kCompute && a.cls != ActivityClass::kCommunication) continue;
    if (!w.Touches(a.start, a.end)) continue;
    const StringId name = key(a);
    if (name == StringPool::kEmptyId) continue;
    auto [it, inserted] = ids.try_emplace(name, static_cast<uint32_t>(rows.size()));
    if (inserted) {
      FunctionStat row;
      row.name = std::string(m.Str(name));
      row.cls = a.cls;
      rows.push_back(std::move(row));
    }
    samples.push_back({it->second, a.start, a.end, t.owned_ns[i]});
  }
  AggregateSamples(samples, w, BottleneckRule::kOwnedGpuTime, t.busy, rows);
  return FinishTable(std::move(rows), max_rows, w.length());
}

}  // namespace

FunctionTable BuildKernelNameTable(const TraceModel& m, const std::vector<GpuActivity>& acts, const GpuTimeline& t,
                                   const Window& w, size_t max_rows) {
  return KernelsBy(m, acts, t, w, max_rows, [&](const GpuActivity& a) { return m.slices.name[a.slice]; });
}

FunctionTable BuildKernelsByOpTable(const TraceModel& m, const std::vector<GpuActivity>& acts, const GpuTimeline& t,
                                    const Window& w, size_t max_rows) {
  std::vector<std::pair<int64_t, StringId>> op_of;  // External id -> CPU op name
  const SliceTable& s = m.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == ActivityKind::kHostOp && s.external_id[i] != kNoId) op_of.emplace_back(s.external_id[i], s.name[i]);
  }
  std::sort(op_of.begin(), op_of.end());
  return KernelsBy(m, acts, t, w, max_rows, [&](const GpuActivity& a) {
    const int64_t ext = s.external_id[a.slice];
    auto it = std::lower_bound(op_of.begin(), op_of.end(), std::make_pair(ext, StringId{0}));
    return ext != kNoId && it != op_of.end() && it->first == ext ? it->second : StringPool::kEmptyId;
  });
}

FunctionTable BuildMemoryOpTable(const TraceModel& m, const std::vector<GpuActivity>& acts, const GpuTimeline& t,
                                 const Window& w, size_t max_rows) {
  std::unordered_map<StringId, uint32_t> ids;
  std::vector<FunctionStat> rows;
  std::vector<FunctionSample> samples;
  for (size_t i = 0; i < acts.size(); ++i) {
    const GpuActivity& a = acts[i];
    if (a.cls != ActivityClass::kMemory || !w.Touches(a.start, a.end)) continue;
    const StringId name = m.slices.name[a.slice];
    auto [it, inserted] = ids.try_emplace(name, static_cast<uint32_t>(rows.size()));
    if (inserted) {
      FunctionStat row;
      row.name = std::string(m.Str(name));
      row.cls = a.cls;
      rows.push_back(std::move(row));
    }
    const int64_t bytes = m.GpuInfo(a.slice)->bytes;
    if (w.Contains(a.start) && bytes >= 0) rows[it->second].bytes = std::max<int64_t>(rows[it->second].bytes, 0) + bytes;
    samples.push_back({it->second, a.start, a.end, t.owned_ns[i]});
  }
  AggregateSamples(samples, w, BottleneckRule::kOwnedGpuTime, t.busy, rows);
  return FinishTable(std::move(rows), max_rows, w.length());
}

}  // namespace rankscope
