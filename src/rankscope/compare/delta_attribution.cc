#include "rankscope/compare/delta_attribution.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

namespace rankscope::compare {
namespace {

// The host side of a collective: the process group's call (c10d::allreduce_, ...) and the
// profiler's record_param_comms. Their time is communication, like the collective's exposed time.
bool IsCollectiveCall(std::string_view name) {
  return name.substr(0, 6) == "c10d::" || name == "record_param_comms" || name.substr(0, 5) == "gloo:" ||
         name.substr(0, 5) == "nccl:";
}

bool IsCast(std::string_view name) {
  static constexpr std::string_view kCasts[] = {"aten::to", "aten::_to_copy", "aten::copy_", "aten::type_as",
                                                "aten::_autocast_to_reduced_precision",
                                                "aten::_autocast_to_full_precision"};
  for (std::string_view c : kCasts) {
    if (name == c) return true;
  }
  return name.find("ToCopyBackward") != std::string_view::npos;
}

// One difference being assembled.
struct Item {
  Difference d;
  std::map<std::string, DiffPart> parts;
  std::array<double, kNumStepPhases> phase_delta{};
  double best_pair_delta = -1;  // shapes / dtypes: the pair whose before/after is shown
};

class Grouper {
 public:
  Grouper(const CompareSummary& base, const CompareSummary& neu, const TreeAlignment& ops)
      : base_(base), neu_(neu), ops_(ops), kb_(std::max<uint32_t>(1, base.steps.kept())),
        kn_(std::max<uint32_t>(1, neu.steps.kept())) {}

  void Run() {
    MarkReshapedBelow();
    ClassifyNew();
    ClassifyBase();
    FoldCasts();
    AddOtherCells();
  }

  std::vector<Item>& items() { return items_; }
  double aligned_share() const { return base_total_ > 0 ? base_paired_ / base_total_ : 0; }

 private:
  static bool Root(const OpNode& n) { return n.kind == OpKind::kRank || n.kind == OpKind::kThread; }

  uint32_t ItemFor(Cause cause, const std::string& subject, const std::string& kind) {
    const std::string key = fmt::format("{}|{}", CauseName(cause), subject);
    auto [it, inserted] = index_.try_emplace(key, items_.size());
    if (inserted) {
      Item item;
      item.d.cause = cause;
      item.d.subject = subject;
      item.d.subject_kind = kind;
      items_.push_back(std::move(item));
    }
    return static_cast<uint32_t>(it->second);
  }

  // Module of an operator: its own or its forward op's (backward ops), else the nearest
  // ancestor's; kNoIndex when none.
  static uint32_t ModuleOf(const CompareSummary& s, uint32_t node) {
    for (uint32_t k = node; k != kNoIndex && !Root(s.ops[k]); k = s.ops[k].parent) {
      const OpNode& n = s.ops[k];
      const uint32_t m = n.forward != kNoIndex ? s.ops[n.forward].module : n.module;
      if (m != kNoIndex && m != 0) return m;
    }
    return kNoIndex;
  }

  // The unit a same-work operator is grouped under: its module, else its top-level operator.
  static std::pair<std::string, std::string> Unit(const CompareSummary& s, uint32_t node) {
    const uint32_t m = ModuleOf(s, node);
    if (m != kNoIndex) return {ModulePath(s, m), "module"};
    uint32_t top = node;
    while (s.ops[top].parent != kNoIndex && !Root(s.ops[s.ops[top].parent])) top = s.ops[top].parent;
    return {s.names.Get(s.ops[top].name), "operator"};
  }

  // Whether an unpaired child of the node is a cast (autocast adds aten::to under aten::linear).
  bool CastsChanged(const CompareSummary& s, uint32_t node, const std::vector<uint32_t>& partner) const {
    for (uint32_t c : s.ops[node].children) {
      if (partner[c] == kNoIndex && IsCast(s.names.Get(s.ops[c].name))) return true;
    }
    return false;
  }

  // "aten::matmul in Net_0": an added or removed operator and where (its module, else the
  // top-level operator it runs in; just its name at the top level).
  static std::string AddedSubject(const CompareSummary& s, uint32_t node) {
    const std::string& name = s.names.Get(s.ops[node].name);
    const std::string unit = Unit(s, node).first;
    return unit == name ? name : name + " in " + unit;
  }

  // A paired operator's own cause: shapes, dtypes (its input types differ, or it casts its
  // inputs in one run only) or same work.
  Cause PairCause(uint32_t b, uint32_t n) const {
    const OpNode& bn = base_.ops[b];
    const OpNode& nn = neu_.ops[n];
    const bool casts = CastsChanged(base_, b, ops_.base_to_new) || CastsChanged(neu_, n, ops_.new_to_base);
    if (bn.shapes == 0 || nn.shapes == 0 || bn.shapes_vary || nn.shapes_vary) {
      return casts ? Cause::kDtypes : Cause::kSameWork;
    }
    const std::string& bs = base_.names.Get(bn.shapes);
    const std::string& ns = neu_.names.Get(nn.shapes);
    if (ShapeDims(bs) != ShapeDims(ns)) return Cause::kShapes;
    if (ShapeTypes(bs) != ShapeTypes(ns) || casts) return Cause::kDtypes;
    return Cause::kSameWork;
  }

  static bool Inherited(Cause c) {
    return c == Cause::kAdded || c == Cause::kRemoved || c == Cause::kShapes || c == Cause::kDtypes ||
           c == Cause::kCommunication;
  }

  // Item of `node` given its own cause, its parent's item and its forward op's item.
  uint32_t Place(const CompareSummary& s, const std::vector<uint32_t>& item_of, uint32_t node, Cause own,
                 const std::string& subject_if_new_root) {
    const OpNode& n = s.ops[node];
    if (n.parent != kNoIndex && !Root(s.ops[n.parent]) && item_of[n.parent] != kNoIndex &&
        Inherited(items_[item_of[n.parent]].d.cause)) {
      return item_of[n.parent];
    }
    if (n.forward != kNoIndex && n.forward < node && item_of[n.forward] != kNoIndex &&
        Inherited(items_[item_of[n.forward]].d.cause)) {
      return item_of[n.forward];
    }
    if (IsCollectiveCall(s.names.Get(n.name))) return ItemFor(Cause::kCommunication, "collectives", "collective");
    switch (own) {
      case Cause::kShapes: return ItemFor(Cause::kShapes, "input shapes", "operators");
      case Cause::kDtypes: return ItemFor(Cause::kDtypes, "input types (precision)", "operators");
      case Cause::kAdded:
      case Cause::kRemoved: return ItemFor(own, subject_if_new_root, "operator");
      default: {
        auto [unit, kind] = Unit(s, node);
        return ItemFor(Cause::kSameWork, unit, kind);
      }
    }
  }

  void Add(uint32_t item, const CompareSummary& s, uint32_t node, bool is_new, const std::string& where) {
    const OpNode& n = s.ops[node];
    const double k = is_new ? kn_ : kb_;
    const double cells = (n.attributed_host_ns + n.attributed_device_ns) / k;
    Item& it = items_[item];
    DiffPart& part = it.parts[where];
    part.where = where;
    (is_new ? it.d.new_ns : it.d.base_ns) += cells;
    (is_new ? it.d.new_host_ns : it.d.base_host_ns) += n.attributed_host_ns / k;
    (is_new ? part.new_ns : part.base_ns) += cells;
    it.phase_delta[static_cast<int>(n.phase)] += is_new ? cells : -cells;
    ++it.d.cells;
  }

  std::string Where(const CompareSummary& s, uint32_t node, Cause cause) {
    if (cause == Cause::kCommunication) {  // the host side of collectives: by call
      uint32_t call = node;
      while (s.ops[call].parent != kNoIndex && !Root(s.ops[s.ops[call].parent]) &&
             !IsCollectiveCall(s.names.Get(s.ops[call].name))) {
        call = s.ops[call].parent;
      }
      return "host: " + s.names.Get(s.ops[call].name);
    }
    if (cause == Cause::kShapes || cause == Cause::kDtypes || cause == Cause::kAdded || cause == Cause::kRemoved) {
      return Unit(s, node).first;
    }
    return s.names.Get(s.ops[node].name);
  }

  // NEW nodes with a pair whose input shapes differ in their subtree. Parents precede their
  // children in the template, so one backward pass sees every child before its parent.
  void MarkReshapedBelow() {
    reshaped_below_.assign(neu_.ops.size(), false);
    for (uint32_t n = static_cast<uint32_t>(neu_.ops.size()); n-- > 0;) {
      const OpNode& node = neu_.ops[n];
      if (Root(node)) continue;
      const uint32_t b = ops_.new_to_base[n];
      if (b != kNoIndex && PairCause(b, n) == Cause::kShapes) reshaped_below_[n] = true;
      if (reshaped_below_[n] && node.parent != kNoIndex) reshaped_below_[node.parent] = true;
    }
  }

  // A paired annotation (DataLoader's __next__, DDP's forward) records no shapes of its own: the
  // Python between its operators is the work that feeds them. When operators below it changed
  // their input shapes, its time is that change's too — a 4x batch makes the DataLoader fetch 4x
  // the samples (4x the Python, and more aten::select calls, which then inherit the cause).
  Cause OwnCause(uint32_t b, uint32_t n) const {
    const Cause own = PairCause(b, n);
    const OpNode& node = neu_.ops[n];
    if (own == Cause::kSameWork && node.kind == OpKind::kAnnotation && node.shapes == 0 && reshaped_below_[n]) {
      return Cause::kShapes;
    }
    return own;
  }

  void ClassifyNew() {
    new_item_.assign(neu_.ops.size(), kNoIndex);
    for (uint32_t n = 0; n < neu_.ops.size(); ++n) {
      const OpNode& node = neu_.ops[n];
      if (Root(node)) continue;
      const uint32_t b = ops_.new_to_base[n];
      const Cause own = b == kNoIndex ? Cause::kAdded : OwnCause(b, n);
      const uint32_t item = Place(neu_, new_item_, n, own, AddedSubject(neu_, n));
      new_item_[n] = item;
      Item& it = items_[item];
      const Cause cause = it.d.cause;
      Add(item, neu_, n, true, Where(neu_, n, cause));
      const bool root = (node.parent == kNoIndex || new_item_[node.parent] != item) &&
                        (node.forward == kNoIndex || new_item_[node.forward] != item);
      if (cause == Cause::kAdded && own == Cause::kAdded && root) {
        it.d.new_count += static_cast<double>(node.count) / kn_;
      }
      if (b != kNoIndex && (own == Cause::kShapes || own == Cause::kDtypes) && cause == own && node.shapes != 0) {
        // The example shown: a forward operator (its shapes say what changed) with the largest
        // change, before any backward one.
        const double delta = std::fabs(node.attributed_total_ns / kn_ - base_.ops[b].attributed_total_ns / kb_) +
                             (node.forward == kNoIndex && node.phase != StepPhase::kBackward ? 1e15 : 0);
        if (delta > it.best_pair_delta) {
          it.best_pair_delta = delta;
          const std::string& bs = base_.names.Get(base_.ops[b].shapes);
          const std::string& ns = neu_.names.Get(node.shapes);
          const bool types_differ = ShapeTypes(bs) != ShapeTypes(ns);
          if (own == Cause::kShapes || types_differ) {
            it.d.before = fmt::format("{} {}", base_.names.Get(base_.ops[b].name),
                                      own == Cause::kShapes ? ShapeDims(bs) : ShapeTypes(bs));
            it.d.after = fmt::format("{} {}", neu_.names.Get(node.name), own == Cause::kShapes ? ShapeDims(ns) : ShapeTypes(ns));
          } else {
            it.best_pair_delta = -1;  // casts only: keep looking for a pair whose types say it
          }
        }
      }
    }
  }

  void ClassifyBase() {
    base_item_.assign(base_.ops.size(), kNoIndex);
    for (uint32_t b = 0; b < base_.ops.size(); ++b) {
      const OpNode& node = base_.ops[b];
      if (Root(node)) continue;
      const double cells = node.attributed_host_ns + node.attributed_device_ns;
      base_total_ += cells;
      const uint32_t n = ops_.base_to_new[b];
      uint32_t item;
      if (n != kNoIndex) {
        base_paired_ += cells;
        item = new_item_[n];
        if (item == kNoIndex) continue;  // cannot happen: every non-root NEW node has an item
      } else {
        item = Place(base_, base_item_, b, Cause::kRemoved, AddedSubject(base_, b));
        if (items_[item].d.cause == Cause::kRemoved && (node.parent == kNoIndex || base_item_[node.parent] != item) &&
            (node.forward == kNoIndex || base_item_[node.forward] != item)) {
          items_[item].d.base_count += static_cast<double>(node.count) / kb_;
        }
      }
      base_item_[b] = item;
      const Cause cause = items_[item].d.cause;
      // Parts are keyed by NEW's names, so that both sides meet in one part: a pair by its NEW
      // node, a removed operator inside a changed pair by that pair's NEW node.
      std::string where;
      if (n != kNoIndex) {
        where = Where(neu_, n, cause);
      } else {
        uint32_t anchor = b;
        while (anchor != kNoIndex && ops_.base_to_new[anchor] == kNoIndex) anchor = base_.ops[anchor].parent;
        const bool inherited = cause != Cause::kRemoved && anchor != kNoIndex && !Root(base_.ops[anchor]);
        where = inherited ? Where(neu_, ops_.base_to_new[anchor], cause) : Where(base_, b, cause);
      }
      Add(item, base_, b, false, where);
    }
  }

  // The casts that come with a precision change belong to it.
  void FoldCasts() {
    auto dtypes = index_.find(fmt::format("{}|input types (precision)", CauseName(Cause::kDtypes)));
    if (dtypes == index_.end()) return;
    Item& target = items_[dtypes->second];
    for (Item& it : items_) {
      if ((it.d.cause != Cause::kAdded && it.d.cause != Cause::kRemoved) || it.d.cells == 0) continue;
      const std::string name = it.d.subject.substr(0, it.d.subject.find(" in "));
      if (!IsCast(name)) continue;
      target.d.base_ns += it.d.base_ns;
      target.d.new_ns += it.d.new_ns;
      target.d.base_host_ns += it.d.base_host_ns;
      target.d.new_host_ns += it.d.new_host_ns;
      target.d.cells += it.d.cells;
      for (int p = 0; p < kNumStepPhases; ++p) target.phase_delta[p] += it.phase_delta[p];
      const std::string where = fmt::format("{} {}", CauseName(it.d.cause), it.d.subject);
      DiffPart& part = target.parts[where];
      part.where = where;
      part.base_ns += it.d.base_ns;
      part.new_ns += it.d.new_ns;
      it.d.cells = 0;  // emptied
      it.d.base_ns = it.d.new_ns = 0;
    }
  }

  void AddOtherCells() {
    // Communication per op and dtype, parts per size bucket.
    auto add_comm = [&](const CompareSummary& s, bool is_new) {
      const double k = is_new ? kn_ : kb_;
      for (size_t r = 0; r < s.comm.size(); ++r) {
        const CommRow& row = s.comm[r];
        Item& it = items_[ItemFor(Cause::kCommunication, "collectives", "collective")];
        const std::string where = fmt::format("{}{}{} {}", row.op, row.dtype.empty() ? "" : " ", row.dtype,
                                              SizeBucketLabel(row.bucket));
        DiffPart& part = it.parts[where];
        part.where = where;
        (is_new ? it.d.new_ns : it.d.base_ns) += row.exposed_ns / k;
        (is_new ? part.new_ns : part.base_ns) += row.exposed_ns / k;
        (is_new ? it.d.new_count : it.d.base_count) += static_cast<double>(row.count) / k;
        ++it.d.cells;
      }
    };
    add_comm(base_, false);
    add_comm(neu_, true);
    for (int p = 0; p < kNumStepPhases; ++p) {
      const double b = base_.gap_ns[p] / kb_, n = neu_.gap_ns[p] / kn_;
      if (b == 0 && n == 0) continue;
      const std::string phase(StepPhaseName(static_cast<StepPhase>(p)));
      Item& it = items_[ItemFor(Cause::kHostGap, phase, "phase")];
      DiffPart& part = it.parts[phase];
      part.where = phase;
      part.base_ns += b;
      part.new_ns += n;
      it.d.base_ns += b;
      it.d.new_ns += n;
      it.d.base_host_ns += b;
      it.d.new_host_ns += n;
      it.d.phase = StepPhaseName(static_cast<StepPhase>(p));
      ++it.d.cells;
    }
    for (int c = 0; c < kNumKernelClasses; ++c) {
      const double b = base_.unlinked_ns[c] / kb_, n = neu_.unlinked_ns[c] / kn_;
      if (b == 0 && n == 0) continue;
      const std::string label(KernelClassLabel(static_cast<KernelClass>(c)));
      Item& it = items_[ItemFor(Cause::kUnlinkedGpu, label, "kernel_class")];
      DiffPart& part = it.parts[label];
      part.where = label;
      part.base_ns += b;
      part.new_ns += n;
      it.d.base_ns += b;
      it.d.new_ns += n;
      ++it.d.cells;
    }
  }

  const CompareSummary& base_;
  const CompareSummary& neu_;
  const TreeAlignment& ops_;
  const double kb_, kn_;
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<uint32_t> new_item_, base_item_;
  std::vector<bool> reshaped_below_;
  double base_total_ = 0, base_paired_ = 0;
};

Difference Finish(Item& it) {
  Difference d = std::move(it.d);
  std::vector<DiffPart> parts;
  for (auto& [where, part] : it.parts) parts.push_back(part);
  std::sort(parts.begin(), parts.end(), [](const DiffPart& a, const DiffPart& b) {
    return std::fabs(a.new_ns - a.base_ns) > std::fabs(b.new_ns - b.base_ns);
  });
  if (parts.size() > 8) parts.resize(8);
  d.parts = std::move(parts);
  if (d.cause == Cause::kCommunication) {  // "all_reduce, broadcast": the collectives that changed most
    std::vector<std::string> ops;
    for (const DiffPart& p : d.parts) {
      std::string op = p.where.substr(0, p.where.find(' '));
      if (op == "host:") continue;
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(std::move(op));
    }
    if (ops.empty()) ops.push_back("collective calls");
    d.subject = fmt::format("{}", fmt::join(ops, ", "));
  }
  if (d.phase.empty()) {
    int best = -1;
    double best_abs = 0;
    for (int p = 0; p < kNumStepPhases; ++p) {
      if (std::fabs(it.phase_delta[p]) > best_abs) best_abs = std::fabs(it.phase_delta[p]), best = p;
    }
    if (best >= 0) d.phase = StepPhaseName(static_cast<StepPhase>(best));
  }
  return d;
}

}  // namespace

std::string ModulePath(const CompareSummary& s, uint32_t module) {
  std::vector<std::string_view> names;
  for (uint32_t m = module; m != kNoIndex && m != 0; m = s.modules[m].parent) names.push_back(s.names.Get(s.modules[m].name));
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!out.empty()) out += '/';
    out += *it;
  }
  return out;
}

std::string OpPath(const CompareSummary& s, uint32_t node) {
  std::vector<std::string_view> names;
  for (uint32_t n = node; n != kNoIndex && s.ops[n].kind != OpKind::kRank; n = s.ops[n].parent) {
    names.push_back(s.names.Get(s.ops[n].name));
  }
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!out.empty()) out += " > ";
    out += *it;
  }
  return out;
}

std::string_view ShapeDims(std::string_view shapes) { return shapes.substr(0, shapes.find('|')); }
std::string_view ShapeTypes(std::string_view shapes) {
  const size_t bar = shapes.find('|');
  return bar == std::string_view::npos ? std::string_view() : shapes.substr(bar + 1);
}

namespace {

// One difference out of several same-work differences: their sums, the largest as parts.
Difference SumOf(const std::vector<Difference>& diffs, const std::vector<size_t>& which) {
  Difference many;
  many.cause = Cause::kManySmall;
  many.subject = fmt::format("{} modules/operators, each within noise", which.size());
  many.subject_kind = "operators";
  std::vector<DiffPart> parts;
  for (size_t i : which) {
    const Difference& d = diffs[i];
    many.base_ns += d.base_ns;
    many.new_ns += d.new_ns;
    many.base_host_ns += d.base_host_ns;
    many.new_host_ns += d.new_host_ns;
    many.cells += d.cells;
    parts.push_back({d.subject, d.base_ns, d.new_ns});
  }
  std::sort(parts.begin(), parts.end(), [](const DiffPart& a, const DiffPart& b) {
    return std::fabs(a.new_ns - a.base_ns) > std::fabs(b.new_ns - b.base_ns);
  });
  if (parts.size() > 8) parts.resize(8);
  many.parts = std::move(parts);
  return many;
}

// Same-work differences each within noise.
struct SmallDifferences {
  std::vector<size_t> index;  // into the differences
  double sum = 0;
};

// Many same-work differences, each within noise, that together exceed it become one difference.
void MergeSmall(const SmallDifferences& small, double noise_ns, std::vector<Difference>* diffs) {
  if (small.index.size() <= 1 || std::fabs(small.sum) <= noise_ns) return;
  Difference many = SumOf(*diffs, small.index);
  many.beyond_noise = true;
  for (size_t k = small.index.size(); k-- > 0;) {
    diffs->erase(diffs->begin() + static_cast<std::ptrdiff_t>(small.index[k]));
  }
  diffs->push_back(std::move(many));
}

}  // namespace

AttributionResult AttributeDelta(const CompareSummary& base, const CompareSummary& neu, const TreeAlignment& ops,
                                 double noise_ns, size_t max_differences) {
  Grouper g(base, neu, ops);
  g.Run();
  AttributionResult r;
  r.aligned_share = g.aligned_share();
  std::vector<Difference> diffs;
  SmallDifferences small;
  for (Item& it : g.items()) {
    if (it.d.cells == 0) continue;
    Difference d = Finish(it);
    d.beyond_noise = std::fabs(d.delta_ns()) > noise_ns;
    if (d.cause == Cause::kSameWork && !d.beyond_noise) {
      small.index.push_back(diffs.size());
      small.sum += d.delta_ns();
    }
    diffs.push_back(std::move(d));
  }
  MergeSmall(small, noise_ns, &diffs);
  std::stable_sort(diffs.begin(), diffs.end(), [](const Difference& a, const Difference& b) {
    return std::fabs(a.delta_ns()) > std::fabs(b.delta_ns());
  });
  for (const Difference& d : diffs) {
    if (d.beyond_noise) r.explained_ns += d.delta_ns();
  }
  if (diffs.size() > max_differences) diffs.resize(max_differences);
  for (const Difference& d : diffs) r.differences_total_ns += d.delta_ns();
  r.differences = std::move(diffs);
  return r;
}

}  // namespace rankscope::compare
