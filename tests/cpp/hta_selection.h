// Test-only: HTA's row selection (../shared/traces/README.md, quirk 7, and HTA's
// Trace._filter_irrelevant_gpu_kernels), so that our analyses can be compared with HTA's numbers
// on the same rows. With >= 2 distinct ProfilerStep#N names HTA keeps CPU-side rows that start
// before the last ProfilerStep's ts (by default) or no later than the last ProfilerStep's end
// (include_last_profiler_step=True) -- GPU-timeline copies of ProfilerStep count as CPU-side --
// and GPU rows whose correlation matches a kept CPU row. A "GPU row" for this rule has
// stream >= 0 and correlation >= 0, or is an Event Sync / Context Sync.
#pragma once

#include <set>
#include <unordered_set>

#include "rankscope/analysis/window.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope::testing {

inline bool HtaIsGpuRow(const TraceModel& m, size_t i) {
  const SliceTable& s = m.slices;
  const GpuActivityInfo* g = m.GpuInfo(i);
  if (g != nullptr && g->stream >= 0 && s.correlation[i] >= 0) return true;
  const std::string_view name = m.Str(s.name[i]);
  return s.kind[i] == ActivityKind::kDeviceSync && (name == "Event Sync" || name == "Context Sync");
}

// Keeps the rows HTA keeps; returns false when HTA keeps everything (< 2 steps).
inline bool ApplyHtaRowSelection(TraceModel* m, bool include_last_step) {
  SliceTable& s = m->slices;
  std::set<int64_t> steps;
  int64_t last_start = INT64_MIN, last_end = INT64_MIN;
  for (size_t i = 0; i < s.size(); ++i) {
    if (auto n = ProfilerStepNumber(m->Str(s.name[i]))) {
      steps.insert(*n);
      last_start = std::max(last_start, s.ts[i]);
      last_end = std::max(last_end, s.ts[i] + s.dur[i]);
    }
  }
  if (steps.size() < 2) return false;
  std::vector<bool> keep(s.size(), false);
  std::unordered_set<int64_t> kept_correlations;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!HtaIsGpuRow(*m, i) && (include_last_step ? s.ts[i] <= last_end : s.ts[i] < last_start)) {
      keep[i] = true;
      if (s.correlation[i] >= 0) kept_correlations.insert(s.correlation[i]);
    }
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (HtaIsGpuRow(*m, i)) keep[i] = kept_correlations.count(s.correlation[i]) > 0;
  }
  // Rebuild the slice table and the tables that point into it.
  SliceTable out;
  std::vector<GpuActivityInfo> gpu;
  std::vector<PythonFrameInfo> python;
  std::vector<uint32_t> new_index(s.size(), kNoDetail);
  for (size_t i = 0; i < s.size(); ++i) {
    if (!keep[i]) continue;
    new_index[i] = static_cast<uint32_t>(out.size());
    out.ts.push_back(s.ts[i]);
    out.dur.push_back(s.dur[i]);
    out.name.push_back(s.name[i]);
    out.track.push_back(s.track[i]);
    out.kind.push_back(s.kind[i]);
    out.correlation.push_back(s.correlation[i]);
    out.external_id.push_back(s.external_id[i]);
    uint32_t detail = kNoDetail;
    if (s.detail[i] != kNoDetail && IsDeviceActivity(s.kind[i])) {
      detail = static_cast<uint32_t>(gpu.size());
      gpu.push_back(m->gpu[s.detail[i]]);
    } else if (s.detail[i] != kNoDetail && s.kind[i] == ActivityKind::kPythonFrame) {
      detail = static_cast<uint32_t>(python.size());
      python.push_back(m->python[s.detail[i]]);
    }
    out.detail.push_back(detail);
  }
  std::vector<CollectiveInfo> collectives;
  for (CollectiveInfo c : m->collectives) {
    if (new_index[c.slice] == kNoDetail) continue;
    c.slice = new_index[c.slice];
    collectives.push_back(c);
  }
  m->slices = std::move(out);
  m->gpu = std::move(gpu);
  m->python = std::move(python);
  m->collectives = std::move(collectives);
  return true;
}

}  // namespace rankscope::testing
