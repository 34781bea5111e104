#include "rankscope/compare/module_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rankscope/compare/delta_attribution.h"

namespace rankscope::compare {
namespace {

void Fill(const CompareSummary& s, uint32_t m, bool is_new, ModuleRow* row) {
  const ModuleNode& n = s.modules[m];
  const double k = std::max<uint32_t>(1, s.steps.kept());
  auto set = [&](double* base_field, double* new_field, double value) { *(is_new ? new_field : base_field) = value / k; };
  set(&row->base_count, &row->new_count, static_cast<double>(n.count));
  set(&row->base_host_ns, &row->new_host_ns, static_cast<double>(n.host_ns));
  set(&row->base_host_self_ns, &row->new_host_self_ns, static_cast<double>(n.host_self_ns));
  set(&row->base_device_ns, &row->new_device_ns, static_cast<double>(n.device_total_ns));
  set(&row->base_device_self_ns, &row->new_device_self_ns, static_cast<double>(n.device_self_ns));
  set(&row->base_backward_host_ns, &row->new_backward_host_ns, static_cast<double>(n.backward_host_ns));
  set(&row->base_backward_device_ns, &row->new_backward_device_ns, static_cast<double>(n.backward_device_ns));
  set(&row->base_attributed_ns, &row->new_attributed_ns, n.attributed_total_ns);
  if (row->source.empty() && n.source != 0) row->source = s.names.Get(n.source);
}

// Operators directly in a module (their parent is not in it), with their |Δ| of attributed time.
std::vector<std::string> TopOperators(const CompareSummary& base, const CompareSummary& neu, uint32_t bm, uint32_t nm,
                                      const TreeAlignment& ops) {
  struct Entry {
    std::string name;
    double delta;
  };
  std::vector<Entry> entries;
  const double kb = std::max<uint32_t>(1, base.steps.kept()), kn = std::max<uint32_t>(1, neu.steps.kept());
  auto top_in = [](const CompareSummary& s, uint32_t node, uint32_t module) {
    const OpNode& n = s.ops[node];
    return n.forward == kNoIndex && n.module == module && (n.parent == kNoIndex || s.ops[n.parent].module != module);
  };
  if (nm != kNoIndex) {
    for (uint32_t n = 0; n < neu.ops.size(); ++n) {
      if (!top_in(neu, n, nm)) continue;
      const uint32_t b = ops.new_to_base[n];
      const double bv = b == kNoIndex ? 0 : base.ops[b].attributed_total_ns / kb;
      entries.push_back({fmt::format("{}{}", neu.names.Get(neu.ops[n].name), b == kNoIndex ? " (added)" : ""),
                         neu.ops[n].attributed_total_ns / kn - bv});
    }
  }
  if (bm != kNoIndex) {
    for (uint32_t b = 0; b < base.ops.size(); ++b) {
      if (!top_in(base, b, bm) || ops.base_to_new[b] != kNoIndex) continue;
      entries.push_back({fmt::format("{} (removed)", base.names.Get(base.ops[b].name)), -base.ops[b].attributed_total_ns / kb});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return std::fabs(a.delta) > std::fabs(b.delta); });
  std::vector<std::string> out;
  for (size_t i = 0; i < entries.size() && i < 3; ++i) out.push_back(entries[i].name);
  return out;
}

void Walk(const CompareSummary& base, const CompareSummary& neu, const TreeAlignment& mods, const TreeAlignment& ops,
          uint32_t b, uint32_t n, uint32_t depth, std::vector<ModuleRow>* rows) {
  if (depth > 0) {
    ModuleRow row;
    row.depth = depth;
    row.status = b == kNoIndex ? "added" : n == kNoIndex ? "removed" : "same";
    const CompareSummary& named = n != kNoIndex ? neu : base;
    const uint32_t m = n != kNoIndex ? n : b;
    row.name = named.names.Get(named.modules[m].name);
    row.path = ModulePath(named, m);
    if (n != kNoIndex) Fill(neu, n, true, &row);
    if (b != kNoIndex) Fill(base, b, false, &row);
    row.top_operators = TopOperators(base, neu, b, n, ops);
    rows->push_back(std::move(row));
  }
  const std::vector<uint32_t> empty;
  const std::vector<uint32_t>& bc = b != kNoIndex ? base.modules[b].children : empty;
  const std::vector<uint32_t>& nc = n != kNoIndex ? neu.modules[n].children : empty;
  size_t i = 0, j = 0;
  while (i < bc.size() || j < nc.size()) {
    if (i < bc.size() && (n == kNoIndex || mods.base_to_new[bc[i]] == kNoIndex)) {
      Walk(base, neu, mods, ops, bc[i++], kNoIndex, depth + 1, rows);
    } else if (j < nc.size() && (b == kNoIndex || mods.new_to_base[nc[j]] == kNoIndex)) {
      Walk(base, neu, mods, ops, kNoIndex, nc[j++], depth + 1, rows);
    } else if (i < bc.size() && j < nc.size()) {
      Walk(base, neu, mods, ops, bc[i++], nc[j++], depth + 1, rows);
    } else {
      break;
    }
  }
}

}  // namespace

std::vector<ModuleRow> BuildModuleRows(const CompareSummary& base, const CompareSummary& neu,
                                       const TreeAlignment& modules, const TreeAlignment& ops) {
  std::vector<ModuleRow> rows;
  if (base.modules.empty() && neu.modules.empty()) return rows;
  Walk(base, neu, modules, ops, base.modules.empty() ? kNoIndex : 0, neu.modules.empty() ? kNoIndex : 0, 0, &rows);
  return rows;
}

}  // namespace rankscope::compare
