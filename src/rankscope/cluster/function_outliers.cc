#include "rankscope/cluster/function_outliers.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "rankscope/analysis/stats.h"
#include "rankscope/cluster/path_key.h"
#include "rankscope/cluster/wrapped_paths.h"

namespace rankscope {
namespace {

using Sample = FunctionValue;

// A function's identity, viewing strings that outlive the collection (the summaries' rows, or
// the collector's own copies). Ordered like (kind, name, detail) as strings compare.
struct FunctionKeyView {
  FunctionKind kind;
  std::string_view name, detail;
  bool operator==(const FunctionKeyView&) const = default;
  auto operator<=>(const FunctionKeyView&) const = default;
};

struct FunctionKeyHash {
  size_t operator()(const FunctionKeyView& k) const {
    const size_t h = std::hash<std::string_view>()(k.name) * 0x9E3779B97F4A7C15ull;
    return h ^ (std::hash<std::string_view>()(k.detail) + static_cast<size_t>(k.kind) + (h >> 7));
  }
};

// What a rank's table says about a function it lacks.
enum class Missing : uint8_t { kZero, kUnknown };

// Every function of every rank: found by hashing views of the rows' strings (one lookup per row,
// no copy), listed at the end in key order.
class Collector {
 public:
  struct Entry {
    FunctionKeyView key;  // views `name`/`detail` below or the summaries' strings
    std::string owned_name, owned_detail;  // when no summary string outlives the collection
    bool wait = false;
    std::vector<Sample> samples;
  };

  Collector(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics, double min_excess_ns)
      : ranks_(ranks), metrics_(metrics), min_excess_ns_(min_excess_ns), missing_(ranks.size()) {}

  void Collect() {
    FindUnsizedCollectives();
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      const RankSummary& s = ranks_[r];
      AddTable(r, FunctionKind::kKernel, s.kernels, /*keep_detail=*/true);
      AddTable(r, FunctionKind::kKernel, s.kernel_names, /*keep_detail=*/false);
      AddTable(r, FunctionKind::kKernelsOfOp, s.kernels_by_op, false);
      AddTable(r, FunctionKind::kMemoryOp, s.memory_ops, false);
      AddTable(r, FunctionKind::kRuntimeCall, s.runtime_calls, false);
      AddTable(r, FunctionKind::kCpuOp, s.cpu_ops, false);
      AddTable(r, FunctionKind::kPythonPath, s.python_paths, false);
      AddTable(r, FunctionKind::kUntraced, s.untraced, false);
      AddCollectives(r);
    }
  }

  // A rank whose table lacks the function ran it for 0 ns, as far as a finding can tell, when
  // every row its table omitted is small.
  std::vector<Sample> SamplesWithZeros(Entry& e) const {
    std::vector<Sample> samples = std::move(e.samples);
    std::vector<bool> seen(ranks_.size(), false);
    for (const Sample& s : samples) seen[s.rank] = true;
    const int slot = Slot(e.key.kind, e.key.detail.empty());
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      if (!seen[r] && missing_[r][slot] == Missing::kZero) samples.push_back({r, 0, 0, 0});
    }
    return samples;
  }

  // The entries in key order (kind, then name, then detail).
  std::vector<Entry*> InKeyOrder() {
    std::vector<Entry*> out;
    out.reserve(entries_.size());
    for (Entry& e : entries_) out.push_back(&e);
    std::sort(out.begin(), out.end(), [](const Entry* a, const Entry* b) { return a->key < b->key; });
    return out;
  }

 private:
  // One slot per table: kernels by name + shape and by name alone are two tables of one kind.
  static constexpr int kSlots = 9;
  static int Slot(FunctionKind kind, bool no_detail) {
    return kind == FunctionKind::kKernel && no_detail ? kSlots - 1 : static_cast<int>(kind);
  }
  double Steps(uint32_t r) const { return metrics_[r].steps > 0 ? static_cast<double>(metrics_[r].steps) : 1.0; }

  // The entry of a key; `name`/`detail` are copied into it when they are not the summaries'.
  Entry& Find(FunctionKeyView key, bool copy_name, bool copy_detail) {
    auto it = index_.find(key);
    if (it != index_.end()) return *it->second;
    Entry& e = entries_.emplace_back();
    if (copy_name) key.name = e.owned_name = std::string(key.name);
    if (copy_detail) key.detail = e.owned_detail = std::string(key.detail);
    e.key = key;
    index_.emplace(key, &e);
    return e;
  }

  void AddTable(uint32_t r, FunctionKind kind, const FunctionTable& t, bool keep_detail) {
    const double bound = static_cast<double>(t.omitted_max_in_window_ns) / Steps(r);
    missing_[r][Slot(kind, !keep_detail)] =
        t.omitted_rows == 0 || bound <= 0.1 * min_excess_ns_ ? Missing::kZero : Missing::kUnknown;
    std::string masked;
    for (const FunctionStat& f : t.rows) {
      const bool mask = kind == FunctionKind::kPythonPath && NeedsPathKey(f.name);
      if (mask) masked = PathKey(f.name);
      Entry& entry = Find({kind, mask ? std::string_view(masked) : std::string_view(f.name),
                           keep_detail ? std::string_view(f.detail) : std::string_view()},
                          /*copy_name=*/mask, /*copy_detail=*/false);
      if (f.wait) entry.wait = true;
      // A Python path on a second thread adds to the first.
      AddSample(&entry.samples, {r, static_cast<double>(f.in_window_ns) / Steps(r),
                                 static_cast<double>(f.count) / Steps(r), f.median_ns,
                                 static_cast<float>(static_cast<double>(f.stall_ns) / Steps(r)),
                                 static_cast<float>(static_cast<double>(f.stalls) / Steps(r))});
    }
  }

  // A rank's sample of an entry, or more of it when the rank's last sample there is this rank's.
  static void AddSample(std::vector<Sample>* v, const Sample& s) {
    if (!v->empty() && v->back().rank == s.rank) {
      v->back().Add(s);
    } else {
      v->push_back(s);
    }
  }

  // A collective type's detail in the key: "float ring LL n=8 gpu" (with_size), "float ring LL gpu".
  static std::string CollectiveDetail(const CollectiveType& t, bool with_size) {
    std::string detail = t.dtype;
    if (!t.algorithm.empty()) detail += " " + t.algorithm;
    if (!t.protocol.empty()) detail += " " + t.protocol;
    if (with_size && t.group_size > 0) detail += " n=" + std::to_string(t.group_size);
    return detail + (t.on_gpu ? " gpu" : " cpu");
  }

  // The collective types some rank does not know the group size of: a rank in process groups of
  // several sizes whose trace does not say which group a collective ran in (gloo on CPU records
  // no "Group size"). Their types are compared without the size on every rank, or that rank's
  // collectives would be missing from its peers' key and extra under its own.
  void FindUnsizedCollectives() {
    for (const RankSummary& s : ranks_) {
      for (const CollectiveType& t : s.collective_types) {
        if (t.group_size <= 0) unsized_.insert(t.op + " " + CollectiveDetail(t, false));
      }
    }
  }

  void AddCollectives(uint32_t r) {
    missing_[r][static_cast<int>(FunctionKind::kCollective)] = Missing::kZero;
    for (const CollectiveType& t : ranks_[r].collective_types) {
      std::string detail = CollectiveDetail(t, false);
      if (!unsized_.contains(t.op + " " + detail)) detail = CollectiveDetail(t, true);
      // Several group sizes under one key add up.
      AddSample(&Find({FunctionKind::kCollective, t.op, detail}, /*copy_name=*/false, true).samples,
                {r, static_cast<double>(t.busy_ns) / Steps(r), static_cast<double>(t.count) / Steps(r), t.median_ns});
    }
  }

  const std::vector<RankSummary>& ranks_;
  const std::vector<RankMetrics>& metrics_;
  double min_excess_ns_;
  std::vector<std::array<Missing, kSlots>> missing_;
  std::set<std::string> unsized_;  // "op detail-without-size" of the collective types above
  std::deque<Entry> entries_;  // stable: the index and the keys view into them
  std::unordered_map<FunctionKeyView, Entry*, FunctionKeyHash> index_;
};

// A part (a callee, one shape, one kernel) explains a whole when it carries 80 % of its excess:
// the rest is overhead around it (a profiled call, a launch) or small parts elsewhere.
constexpr double kExplainsShare = 0.8;

bool Explains(const FunctionOutlier& part, const FunctionOutlier& whole) {
  return part.rank == whole.rank && part.excess_ns >= kExplainsShare * whole.excess_ns;
}

// Whether outlier `p` is the level that explains its excess (see the header): the deepest Python
// path; the kernel shape when it explains its name, else the name; a CPU op's kernels only when
// no kernel explains them; a CPU op unless a reported Python path of its rank carries the same
// excess (80-110 %: a hook's extra work inside autograd's evaluate_function is the hook's).
bool IsExplainingLevel(const FunctionOutlier& p, const std::vector<FunctionOutlier>& all) {
  auto any = [&](auto pred) { return std::any_of(all.begin(), all.end(), pred); };
  switch (p.kind) {
    case FunctionKind::kPythonPath:
      return !any([&](const FunctionOutlier& q) {
        return q.kind == FunctionKind::kPythonPath && CallPathHolds(p.name, q.name) &&
               Explains(q, p);
      });
    case FunctionKind::kKernel:
      if (p.detail.empty()) {
        return !any([&](const FunctionOutlier& q) {
          return q.kind == FunctionKind::kKernel && !q.detail.empty() && q.name == p.name && Explains(q, p);
        });
      }
      return !any([&](const FunctionOutlier& q) {
        return q.kind == FunctionKind::kKernel && q.detail.empty() && q.name == p.name && q.rank == p.rank &&
               !Explains(p, q);
      });
    case FunctionKind::kKernelsOfOp:
      return !any([&](const FunctionOutlier& q) { return q.kind == FunctionKind::kKernel && Explains(q, p); });
    case FunctionKind::kCpuOp:  // the same time seen from the user's code: the Python path says more
      return !any([&](const FunctionOutlier& q) {
        return q.kind == FunctionKind::kPythonPath && Explains(q, p) && q.excess_ns <= 1.1 * p.excess_ns &&
               IsExplainingLevel(q, all);
      });
    default:
      return true;
  }
}

void ChooseLevels(std::vector<FunctionOutlier>* out) {
  const std::vector<FunctionOutlier> all = *out;
  std::vector<FunctionOutlier> kept;
  for (FunctionOutlier& f : *out) {
    if (IsExplainingLevel(f, all)) kept.push_back(std::move(f));
  }
  *out = std::move(kept);
}

// Whether `value` (sample i of `values`) is abnormal among them and by at least `min_excess_ns`.
bool Abnormal(const std::vector<double>& values, size_t i, const RobustStats& stats, const OutlierRule& rule,
              double min_excess_ns) {
  const RobustStats against = ComparedWith(values, i, stats);
  return rule.IsHigh(values[i], against) && values[i] - against.median >= min_excess_ns;
}

// Whether a rank calls a function as often as its peers (within 10 %): only then can a few
// stalled calls be all that sets it apart; with calls of its own it does work they do not.
bool SameCalls(double calls, double median_calls) {
  return median_calls > 0 && std::abs(calls - median_calls) <= 0.1 * median_calls;
}

// Flags the ranks of `samples` whose time in `f` is abnormal among them (function_outliers.h).
void CompareAmong(const FunctionSamples& f, const std::vector<Sample>& samples, const OutlierRule& rule,
                  double min_excess_ns, std::vector<FunctionOutlier>* out) {
  std::vector<double> values, calls;
  std::vector<int64_t> per_call;
  for (const Sample& s : samples) {
    values.push_back(s.value_ns);
    calls.push_back(s.calls);
    if (s.calls > 0) per_call.push_back(s.per_call_ns);
  }
  const RobustStats stats = ComputeRobustStats(values);
  const RobustStats call_stats = ComputeRobustStats(calls);
  // The values without the stalled calls' time, made when an abnormal rank has stalled calls.
  std::vector<double> steady;
  RobustStats steady_stats;
  const int64_t median_per_call = Quantile(per_call, 0.5);
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (!Abnormal(values, i, stats, rule, min_excess_ns)) continue;
    const RobustStats against = ComparedWith(values, i, stats);
    FunctionOutlier o{f.kind, f.name, f.detail, s.rank, s.value_ns, against.median, rule.Threshold(against),
                      s.value_ns - against.median, s.calls, ComparedWith(calls, i, call_stats).median, s.per_call_ns,
                      median_per_call, samples.size(), f.wait};
    o.stall_ns = s.stall_ns;
    o.stalls = s.stalls;
    if (s.stall_ns > 0 && s.stalls <= kMaxStallsPerStep && SameCalls(o.calls, o.median_calls)) {
      if (steady.empty()) {
        for (const Sample& t : samples) steady.push_back(t.value_ns - t.stall_ns);
        steady_stats = ComputeRobustStats(steady);
      }
      o.stalled = !Abnormal(steady, i, steady_stats, rule, min_excess_ns);
      o.steady_median_ns = ComparedWith(steady, i, steady_stats).median;
    }
    out->push_back(std::move(o));
  }
}

}  // namespace

bool CallPathHolds(std::string_view outer, std::string_view inner) {
  return inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '|';
}

std::string_view FunctionKindName(FunctionKind k) {
  switch (k) {
    case FunctionKind::kKernel: return "kernel";
    case FunctionKind::kMemoryOp: return "memory_op";
    case FunctionKind::kRuntimeCall: return "runtime_call";
    case FunctionKind::kCpuOp: return "cpu_op";
    case FunctionKind::kPythonPath: return "python_path";
    case FunctionKind::kCollective: return "collective";
    case FunctionKind::kKernelsOfOp: return "kernels_of_op";
    case FunctionKind::kUntraced: return "untraced";
  }
  return "kernel";
}

std::vector<FunctionSamples> CollectFunctionSamples(const std::vector<RankSummary>& ranks,
                                                    const std::vector<RankMetrics>& metrics, double min_excess_ns) {
  Collector c(ranks, metrics, min_excess_ns);
  c.Collect();
  const std::vector<Collector::Entry*> entries = c.InKeyOrder();
  std::vector<FunctionSamples> out;
  out.reserve(entries.size());
  for (Collector::Entry* e : entries) {
    std::vector<Sample> samples = c.SamplesWithZeros(*e);
    std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.rank < b.rank; });
    out.push_back({e->key.kind, std::string(e->key.name), std::string(e->key.detail), e->wait, std::move(samples)});
  }
  AlignWrappedPaths(&out);
  return out;
}

std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<RankSummary>& ranks,
                                                  const std::vector<RankMetrics>& metrics, const OutlierRule& rule,
                                                  double min_excess_ns) {
  return FindFunctionOutliers(CollectFunctionSamples(ranks, metrics, min_excess_ns), rule, min_excess_ns);
}

std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<FunctionSamples>& functions,
                                                  const OutlierRule& rule, double min_excess_ns,
                                                  const std::vector<int64_t>& stage_of) {
  // Stages of four ranks or more are compared on their own (the robust rule needs that many);
  // smaller ones together, leaving out the stages that do not run the function.
  std::map<int64_t, size_t> stage_size;
  for (int64_t s : stage_of) ++stage_size[s];
  const bool within_stage = !stage_of.empty() && std::all_of(stage_size.begin(), stage_size.end(),
                                                            [](const auto& s) { return s.second >= 4; });
  std::vector<FunctionOutlier> out;
  for (const FunctionSamples& f : functions) {
    if (stage_of.empty()) {
      CompareAmong(f, f.samples, rule, min_excess_ns, &out);
      continue;
    }
    if (within_stage) {
      std::map<int64_t, std::vector<Sample>> by_stage;
      for (const Sample& s : f.samples) by_stage[stage_of[s.rank]].push_back(s);
      for (const auto& [stage, samples] : by_stage) CompareAmong(f, samples, rule, min_excess_ns, &out);
      continue;
    }
    std::set<int64_t> running;
    for (const Sample& s : f.samples) {
      if (s.value_ns > 0) running.insert(stage_of[s.rank]);
    }
    std::vector<Sample> samples;
    for (const Sample& s : f.samples) {
      if (running.count(stage_of[s.rank]) > 0) samples.push_back(s);
    }
    CompareAmong(f, samples, rule, min_excess_ns, &out);
  }
  ChooseLevels(&out);
  std::sort(out.begin(), out.end(), [](const FunctionOutlier& a, const FunctionOutlier& b) {
    return a.excess_ns != b.excess_ns ? a.excess_ns > b.excess_ns : a.rank < b.rank;
  });
  return out;
}

}  // namespace rankscope
