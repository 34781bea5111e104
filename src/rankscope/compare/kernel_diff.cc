#include "rankscope/compare/kernel_diff.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace rankscope::compare {

std::vector<KernelDiffRow> BuildKernelRows(const CompareSummary& base, const CompareSummary& neu) {
  const double kb = std::max<uint32_t>(1, base.steps.kept()), kn = std::max<uint32_t>(1, neu.steps.kept());
  std::map<std::string, KernelDiffRow> rows;
  for (const KernelRow& k : base.kernels) {
    KernelDiffRow& r = rows[base.names.Get(k.name)];
    r.kernel_class = KernelClassName(k.cls);
    r.base_count += static_cast<double>(k.count) / kb;
    r.base_ns += static_cast<double>(k.ns) / kb;
  }
  for (const KernelRow& k : neu.kernels) {
    KernelDiffRow& r = rows[neu.names.Get(k.name)];
    r.kernel_class = KernelClassName(k.cls);
    r.new_count += static_cast<double>(k.count) / kn;
    r.new_ns += static_cast<double>(k.ns) / kn;
  }
  std::vector<KernelDiffRow> out;
  for (auto& [name, r] : rows) {
    r.name = name;
    r.status = r.base_count > 0 && r.new_count > 0 ? "both" : r.base_count > 0 ? "removed" : "added";
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const KernelDiffRow& a, const KernelDiffRow& b) {
    return std::fabs(a.new_ns - a.base_ns) > std::fabs(b.new_ns - b.base_ns);
  });
  return out;
}

std::vector<KernelClassRow> BuildKernelClassRows(const CompareSummary& base, const CompareSummary& neu) {
  std::array<KernelClassRow, kNumKernelClasses> rows;
  for (int c = 0; c < kNumKernelClasses; ++c) {
    rows[c].kernel_class = KernelClassName(static_cast<KernelClass>(c));
    rows[c].label = KernelClassLabel(static_cast<KernelClass>(c));
  }
  auto add = [&](const CompareSummary& s, bool is_new) {
    const double k = std::max<uint32_t>(1, s.steps.kept());
    std::array<std::vector<std::string>, kNumKernelClasses> top;
    for (const KernelRow& kr : s.kernels) {  // by time
      KernelClassRow& r = rows[static_cast<int>(kr.cls)];
      (is_new ? r.new_count : r.base_count) += static_cast<double>(kr.count) / k;
      (is_new ? r.new_ns : r.base_ns) += static_cast<double>(kr.ns) / k;
      ++(is_new ? r.new_names : r.base_names);
      if (top[static_cast<int>(kr.cls)].size() < 3) top[static_cast<int>(kr.cls)].push_back(s.names.Get(kr.name));
    }
    for (int c = 0; c < kNumKernelClasses; ++c) {
      (is_new ? rows[c].new_top : rows[c].base_top) = fmt::format("{}", fmt::join(top[c], "; "));
    }
  };
  add(base, false);
  add(neu, true);
  std::vector<KernelClassRow> out;
  for (KernelClassRow& r : rows) {
    if (r.base_count > 0 || r.new_count > 0) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace rankscope::compare
