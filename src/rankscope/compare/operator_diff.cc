#include "rankscope/compare/operator_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "rankscope/compare/delta_attribution.h"

namespace rankscope::compare {
namespace {

std::string KernelList(const CompareSummary& s, const OpNode& n) {
  std::string out;
  for (const KernelUse& k : n.kernels) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} x{}", s.names.Get(k.name), k.count);
  }
  if (n.launches > 0 && n.kernels.empty()) out = fmt::format("{} activities", n.launches);
  return out;
}

class RowWriter {
 public:
  RowWriter(const CompareSummary& base, const CompareSummary& neu, const TreeAlignment& ops,
            std::optional<int64_t> max_kernels, size_t max_rows)
      : base_(base), neu_(neu), ops_(ops), max_kernels_(max_kernels), max_rows_(max_rows),
        kb_(std::max<uint32_t>(1, base.steps.kept())), kn_(std::max<uint32_t>(1, neu.steps.kept())) {
    changed_new_ = Changed(neu_, ops_.new_to_base, true);
    changed_base_ = Changed(base_, ops_.base_to_new, false);
  }

  void Walk(uint32_t b, uint32_t n, uint32_t depth) {
    if (rows_.size() >= max_rows_) return;
    if (depth > 0) {
      Emit(b, n, depth);
      if (!Expand(b, n)) return;
      rows_.back().expanded = true;
    }
    const std::vector<uint32_t> empty;
    const std::vector<uint32_t>& bc = b != kNoIndex ? base_.ops[b].children : empty;
    const std::vector<uint32_t>& nc = n != kNoIndex ? neu_.ops[n].children : empty;
    size_t i = 0, j = 0;
    while (i < bc.size() || j < nc.size()) {
      if (i < bc.size() && (b == kNoIndex || n == kNoIndex || ops_.base_to_new[bc[i]] == kNoIndex)) {
        Walk(bc[i++], kNoIndex, depth + 1);
      } else if (j < nc.size() && (b == kNoIndex || n == kNoIndex || ops_.new_to_base[nc[j]] == kNoIndex)) {
        Walk(kNoIndex, nc[j++], depth + 1);
      } else if (i < bc.size() && j < nc.size()) {
        Walk(bc[i++], nc[j++], depth + 1);
      } else {
        break;
      }
    }
  }

  std::vector<OperatorRow> rows() { return std::move(rows_); }

 private:
  // Nodes with an added / removed / reshaped descendant (or that are one).
  std::vector<bool> Changed(const CompareSummary& s, const std::vector<uint32_t>& partner, bool is_new) {
    std::vector<bool> changed(s.ops.size(), false);
    for (size_t k = s.ops.size(); k-- > 1;) {
      const OpNode& node = s.ops[k];
      bool self = partner[k] == kNoIndex;
      if (!self) {
        const OpNode& other = is_new ? base_.ops[partner[k]] : neu_.ops[partner[k]];
        const std::string& a = s.names.Get(node.shapes);
        const std::string& b = (is_new ? base_ : neu_).names.Get(other.shapes);
        self = node.shapes != 0 && other.shapes != 0 && a != b && !node.shapes_vary && !other.shapes_vary;
      }
      if (self || changed[k]) {
        changed[k] = true;
        if (node.parent != kNoIndex) changed[node.parent] = true;
      }
    }
    return changed;
  }

  bool Expand(uint32_t b, uint32_t n) const {
    if (b == kNoIndex || n == kNoIndex) return false;  // an added / removed subtree is one row
    const OpNode& bn = base_.ops[b];
    const OpNode& nn = neu_.ops[n];
    if (bn.kind != OpKind::kCpuOp || nn.kind != OpKind::kCpuOp) return true;
    if (changed_base_[b] || changed_new_[n]) return true;
    if (max_kernels_ && (static_cast<int64_t>(bn.launches_total) > *max_kernels_ * static_cast<int64_t>(kb_) ||
                         static_cast<int64_t>(nn.launches_total) > *max_kernels_ * static_cast<int64_t>(kn_))) {
      return true;
    }
    return false;
  }

  void Emit(uint32_t b, uint32_t n, uint32_t depth) {
    OperatorRow row;
    row.depth = depth;
    const CompareSummary& named = n != kNoIndex ? neu_ : base_;
    const uint32_t node = n != kNoIndex ? n : b;
    row.name = named.names.Get(named.ops[node].name);
    if (b != kNoIndex && n != kNoIndex && base_.names.Get(base_.ops[b].name) != row.name) {
      row.name = fmt::format("{} -> {}", base_.names.Get(base_.ops[b].name), row.name);
    }
    row.path = OpPath(named, node);
    row.phase = StepPhaseName(named.ops[node].phase);
    const OpNode& on = named.ops[node];
    const uint32_t module = on.forward != kNoIndex ? named.ops[on.forward].module : on.module;
    if (module != kNoIndex) row.module = ModulePath(named, module);
    if (b != kNoIndex) Fill(base_, b, kb_, &row.base_count, &row.base_host_ns, &row.base_device_ns, &row.base_attributed_ns, &row.base_shapes, &row.base_kernels);
    if (n != kNoIndex) Fill(neu_, n, kn_, &row.new_count, &row.new_host_ns, &row.new_device_ns, &row.new_attributed_ns, &row.new_shapes, &row.new_kernels);
    if (b == kNoIndex) {
      row.status = "added";
    } else if (n == kNoIndex) {
      row.status = "removed";
    } else if (!row.base_shapes.empty() && !row.new_shapes.empty() && row.base_shapes != row.new_shapes &&
               !base_.ops[b].shapes_vary && !neu_.ops[n].shapes_vary) {
      row.status = ShapeDims(row.base_shapes) != ShapeDims(row.new_shapes) ? "shapes" : "dtypes";
    } else {
      row.status = "same";
    }
    rows_.push_back(std::move(row));
  }

  static void Fill(const CompareSummary& s, uint32_t node, double k, double* count, double* host, double* device,
                   double* attributed, std::string* shapes, std::string* kernels) {
    const OpNode& n = s.ops[node];
    *count = static_cast<double>(n.count) / k;
    *host = static_cast<double>(n.host_ns) / k;
    *device = static_cast<double>(n.device_total_ns) / k;
    *attributed = n.attributed_total_ns / k;
    if (n.shapes != 0) *shapes = s.names.Get(n.shapes);
    *kernels = KernelList(s, n);
  }

  const CompareSummary& base_;
  const CompareSummary& neu_;
  const TreeAlignment& ops_;
  std::optional<int64_t> max_kernels_;
  size_t max_rows_;
  double kb_, kn_;
  std::vector<bool> changed_new_, changed_base_;
  std::vector<OperatorRow> rows_;
};

struct NameTotals {
  uint64_t count = 0;
  double host = 0, self = 0, device = 0, attributed = 0;
};

// Per name over a template; nested instances of one name count once in the inclusive time.
std::map<std::string, NameTotals> TotalsByName(const CompareSummary& s, const std::unordered_map<std::string, std::string>* rename) {
  std::map<std::string, NameTotals> out;
  for (uint32_t k = 0; k < s.ops.size(); ++k) {
    const OpNode& n = s.ops[k];
    if (n.kind == OpKind::kRank || n.kind == OpKind::kThread) continue;
    std::string name = s.names.Get(n.name);
    if (rename) {
      if (auto it = rename->find(name); it != rename->end()) name = it->second;
    }
    NameTotals& t = out[name];
    t.count += n.count;
    bool nested = false;
    for (uint32_t p = n.parent; p != kNoIndex && !nested; p = s.ops[p].parent) nested = s.ops[p].name == n.name;
    if (!nested) t.host += static_cast<double>(n.host_ns);
    t.self += static_cast<double>(n.self_ns);
    t.device += static_cast<double>(n.device_ns);
    t.attributed += n.attributed_host_ns + n.attributed_device_ns;
  }
  return out;
}

}  // namespace

std::vector<OperatorRow> BuildOperatorRows(const CompareSummary& base, const CompareSummary& neu,
                                           const TreeAlignment& ops, std::optional<int64_t> max_kernels,
                                           size_t max_rows) {
  RowWriter w(base, neu, ops, max_kernels, max_rows);
  if (!base.ops.empty() && !neu.ops.empty()) w.Walk(0, 0, 0);
  return w.rows();
}

std::vector<OperatorStatRow> BuildOperatorStats(const CompareSummary& base, const CompareSummary& neu,
                                                const AlignOptions& options) {
  std::unordered_map<std::string, std::string> rename(options.op_map.begin(), options.op_map.end());
  const auto b = TotalsByName(base, &rename);
  const auto n = TotalsByName(neu, nullptr);
  const double kb = std::max<uint32_t>(1, base.steps.kept()), kn = std::max<uint32_t>(1, neu.steps.kept());
  std::vector<OperatorStatRow> rows;
  auto row_for = [&](const std::string& name, const NameTotals* bt, const NameTotals* nt) {
    OperatorStatRow r;
    r.name = name;
    r.status = bt && nt ? "both" : bt ? "removed" : "added";
    if (bt) {
      r.base_count = bt->count / kb, r.base_host_ns = bt->host / kb, r.base_self_ns = bt->self / kb;
      r.base_device_ns = bt->device / kb, r.base_attributed_ns = bt->attributed / kb;
    }
    if (nt) {
      r.new_count = nt->count / kn, r.new_host_ns = nt->host / kn, r.new_self_ns = nt->self / kn;
      r.new_device_ns = nt->device / kn, r.new_attributed_ns = nt->attributed / kn;
    }
    rows.push_back(std::move(r));
  };
  for (const auto& [name, t] : b) {
    auto it = n.find(name);
    row_for(name, &t, it == n.end() ? nullptr : &it->second);
  }
  for (const auto& [name, t] : n) {
    if (!b.count(name)) row_for(name, nullptr, &t);
  }
  std::sort(rows.begin(), rows.end(), [](const OperatorStatRow& x, const OperatorStatRow& y) {
    return std::fabs(x.new_self_ns + x.new_device_ns - x.base_self_ns - x.base_device_ns) >
           std::fabs(y.new_self_ns + y.new_device_ns - y.base_self_ns - y.base_device_ns);
  });
  return rows;
}

}  // namespace rankscope::compare
