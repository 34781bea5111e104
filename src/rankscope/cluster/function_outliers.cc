#include "rankscope/cluster/function_outliers.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

using Sample = FunctionValue;

struct FunctionKey {
  FunctionKind kind;
  std::string name, detail;
  auto operator<=>(const FunctionKey&) const = default;
};

// What a rank's table says about a function it lacks.
enum class Missing : uint8_t { kZero, kUnknown };

class Collector {
 public:
  Collector(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics, double min_excess_ns)
      : ranks_(ranks), metrics_(metrics), min_excess_ns_(min_excess_ns), missing_(ranks.size()) {}

  void Collect() {
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      const RankSummary& s = ranks_[r];
      AddTable(r, FunctionKind::kKernel, s.kernels, /*keep_detail=*/true);
      AddTable(r, FunctionKind::kKernel, s.kernel_names, /*keep_detail=*/false);
      AddTable(r, FunctionKind::kKernelsOfOp, s.kernels_by_op, false);
      AddTable(r, FunctionKind::kMemoryOp, s.memory_ops, false);
      AddTable(r, FunctionKind::kRuntimeCall, s.runtime_calls, false);
      AddTable(r, FunctionKind::kCpuOp, s.cpu_ops, false);
      AddTable(r, FunctionKind::kPythonPath, s.python_paths, false);
      AddCollectives(r);
    }
  }

  // A rank whose table lacks the function ran it for 0 ns, as far as a finding can tell, when
  // every row its table omitted is small.
  std::vector<Sample> SamplesWithZeros(const FunctionKey& key, std::vector<Sample> samples) const {
    std::vector<bool> seen(ranks_.size(), false);
    for (const Sample& s : samples) seen[s.rank] = true;
    const int slot = Slot(key.kind, key.detail.empty());
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      if (!seen[r] && missing_[r][slot] == Missing::kZero) samples.push_back({r, 0, 0, 0});
    }
    return samples;
  }

  std::map<FunctionKey, std::vector<Sample>>& samples() { return samples_; }
  bool IsWait(const FunctionKey& key) const { return waits_.count(key) > 0; }

 private:
  // One slot per table: kernels by name + shape and by name alone are two tables of one kind.
  static constexpr int kSlots = 8;
  static int Slot(FunctionKind kind, bool no_detail) {
    return kind == FunctionKind::kKernel && no_detail ? kSlots - 1 : static_cast<int>(kind);
  }
  double Steps(uint32_t r) const { return metrics_[r].steps > 0 ? static_cast<double>(metrics_[r].steps) : 1.0; }

  void AddTable(uint32_t r, FunctionKind kind, const FunctionTable& t, bool keep_detail) {
    const double bound = static_cast<double>(t.omitted_max_in_window_ns) / Steps(r);
    missing_[r][Slot(kind, !keep_detail)] =
        t.omitted_rows == 0 || bound <= 0.1 * min_excess_ns_ ? Missing::kZero : Missing::kUnknown;
    for (const FunctionStat& f : t.rows) {
      std::string name = kind == FunctionKind::kPythonPath ? WithoutAddresses(f.name) : f.name;
      FunctionKey key{kind, std::move(name), keep_detail ? f.detail : ""};
      if (f.wait) waits_.insert(key);
      std::vector<Sample>& v = samples_[key];
      const double value = static_cast<double>(f.in_window_ns) / Steps(r);
      const double calls = static_cast<double>(f.count) / Steps(r);
      if (!v.empty() && v.back().rank == r) {  // a Python path on a second thread: add them up
        v.back().value_ns += value;
        v.back().calls += calls;
        v.back().per_call_ns = std::max(v.back().per_call_ns, f.median_ns);
      } else {
        v.push_back({r, value, calls, f.median_ns});
      }
    }
  }

  void AddCollectives(uint32_t r) {
    missing_[r][static_cast<int>(FunctionKind::kCollective)] = Missing::kZero;
    for (const CollectiveType& t : ranks_[r].collective_types) {
      std::string detail = t.dtype;
      if (!t.algorithm.empty()) detail += " " + t.algorithm;
      if (!t.protocol.empty()) detail += " " + t.protocol;
      if (t.group_size > 0) detail += " n=" + std::to_string(t.group_size);
      detail += t.on_gpu ? " gpu" : " cpu";
      samples_[{FunctionKind::kCollective, t.op, detail}].push_back(
          {r, static_cast<double>(t.busy_ns) / Steps(r), static_cast<double>(t.count) / Steps(r), t.median_ns});
    }
  }

  const std::vector<RankSummary>& ranks_;
  const std::vector<RankMetrics>& metrics_;
  double min_excess_ns_;
  std::vector<std::array<Missing, kSlots>> missing_;
  std::map<FunctionKey, std::vector<Sample>> samples_;
  std::set<FunctionKey> waits_;
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
        return q.kind == FunctionKind::kPythonPath && q.name.size() > p.name.size() && q.name.starts_with(p.name + "|") &&
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

}  // namespace

// Python frames of builtins name the object they are bound to ("<built-in method run_backward
// of torch._C._EngineBase object at 0x7f09102c7100>"): the address differs between processes,
// so it is dropped from the key ("at 0x?").
std::string WithoutAddresses(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (name.substr(i, 2) == "0x" && i + 2 < name.size() && std::isxdigit(static_cast<unsigned char>(name[i + 2]))) {
      out += "0x?";
      for (i += 2; i < name.size() && std::isxdigit(static_cast<unsigned char>(name[i])); ++i) {
      }
      continue;
    }
    out += name[i++];
  }
  return out;
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
  }
  return "kernel";
}

std::vector<FunctionSamples> CollectFunctionSamples(const std::vector<RankSummary>& ranks,
                                                    const std::vector<RankMetrics>& metrics, double min_excess_ns) {
  Collector c(ranks, metrics, min_excess_ns);
  c.Collect();
  std::vector<FunctionSamples> out;
  out.reserve(c.samples().size());
  for (auto& [key, raw] : c.samples()) {
    std::vector<Sample> samples = c.SamplesWithZeros(key, std::move(raw));
    std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.rank < b.rank; });
    out.push_back({key.kind, key.name, key.detail, c.IsWait(key), std::move(samples)});
  }
  return out;
}

std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<RankSummary>& ranks,
                                                  const std::vector<RankMetrics>& metrics, const OutlierRule& rule,
                                                  double min_excess_ns) {
  std::vector<FunctionOutlier> out;
  for (const FunctionSamples& f : CollectFunctionSamples(ranks, metrics, min_excess_ns)) {
    const std::vector<Sample>& samples = f.samples;
    std::vector<double> values, calls;
    std::vector<int64_t> per_call;
    for (const Sample& s : samples) {
      values.push_back(s.value_ns);
      calls.push_back(s.calls);
      if (s.calls > 0) per_call.push_back(s.per_call_ns);
    }
    const RobustStats stats = ComputeRobustStats(values);
    const RobustStats call_stats = ComputeRobustStats(calls);
    const int64_t median_per_call = Quantile(per_call, 0.5);
    for (const Sample& s : samples) {
      const double excess = s.value_ns - stats.median;
      if (!rule.IsHigh(s.value_ns, stats) || excess < min_excess_ns) continue;
      out.push_back({f.kind, f.name, f.detail, s.rank, s.value_ns, stats.median, rule.Threshold(stats), excess,
                     s.calls, call_stats.median, s.per_call_ns, median_per_call, samples.size(), f.wait});
    }
  }
  ChooseLevels(&out);
  std::sort(out.begin(), out.end(), [](const FunctionOutlier& a, const FunctionOutlier& b) {
    return a.excess_ns != b.excess_ns ? a.excess_ns > b.excess_ns : a.rank < b.rank;
  });
  return out;
}

}  // namespace rankscope
