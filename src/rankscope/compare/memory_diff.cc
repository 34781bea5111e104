#include "rankscope/compare/memory_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace rankscope::compare {

std::vector<MemoryRow> BuildMemoryRows(const CompareSummary& base, const CompareSummary& neu, size_t max_rows) {
  std::map<std::string, MemoryRow> rows;
  auto add = [&](const CompareSummary& s, bool is_new) {
    const double k = std::max<uint32_t>(1, s.steps.kept());
    for (const OpNode& n : s.ops) {
      if (n.allocs == 0) continue;
      MemoryRow& r = rows[s.names.Get(n.name)];
      (is_new ? r.new_allocs : r.base_allocs) += static_cast<double>(n.allocs) / k;
      (is_new ? r.new_bytes : r.base_bytes) += static_cast<double>(n.alloc_bytes) / k;
      double& peak = is_new ? r.new_peak : r.base_peak;
      peak = std::max(peak, static_cast<double>(n.peak_allocated));
    }
  };
  add(base, false);
  add(neu, true);
  std::vector<MemoryRow> out;
  for (auto& [name, r] : rows) {
    r.name = name;
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const MemoryRow& a, const MemoryRow& b) {
    return std::fabs(a.new_bytes - a.base_bytes) > std::fabs(b.new_bytes - b.base_bytes);
  });
  if (out.size() > max_rows) out.resize(max_rows);
  return out;
}

std::vector<MemoryPeakRow> BuildMemoryPeaks(const CompareSummary& base, const CompareSummary& neu) {
  std::map<std::pair<int32_t, int32_t>, MemoryPeakRow> rows;
  auto add = [&](const CompareSummary& s, bool is_new) {
    for (const MemoryPeak& p : s.rank.memory_peaks) {
      MemoryPeakRow& r = rows[{p.device_type, p.device_id}];
      r.device = p.device_type == 0 ? "CPU" : fmt::format("{}:{}", p.device_type == 1 ? "cuda" : "device", p.device_id);
      (is_new ? r.new_peak : r.base_peak) = static_cast<double>(p.peak_allocated);
      (is_new ? r.new_reserved : r.base_reserved) = static_cast<double>(p.peak_reserved);
    }
  };
  add(base, false);
  add(neu, true);
  std::vector<MemoryPeakRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace rankscope::compare
