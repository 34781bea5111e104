#include "rankscope/cluster/function_outliers.h"

#include <algorithm>
#include <cctype>
#include <array>
#include <map>

#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

using Sample = FunctionSample;

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

struct FunctionKey {
  FunctionKind kind;
  std::string name, detail;
  auto operator<=>(const FunctionKey&) const = default;
};

class Collector {
 public:
  Collector(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics)
      : ranks_(ranks), metrics_(metrics), complete_(ranks.size()) {}

  void Collect() {
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      const RankSummary& s = ranks_[r];
      AddTable(r, FunctionKind::kKernel, s.kernels, true);
      AddTable(r, FunctionKind::kMemoryOp, s.memory_ops, false);
      AddTable(r, FunctionKind::kRuntimeCall, s.runtime_calls, false);
      AddTable(r, FunctionKind::kCpuOp, s.cpu_ops, false);
      AddTable(r, FunctionKind::kPythonPath, s.python_paths, false);
      AddCollectives(r);
    }
  }

  // Every rank with a complete table that lacks the function ran it for 0 ns.
  std::vector<Sample> SamplesWithZeros(const FunctionKey& key, std::vector<Sample> samples) const {
    std::vector<bool> seen(ranks_.size(), false);
    for (const Sample& s : samples) seen[s.rank] = true;
    for (uint32_t r = 0; r < ranks_.size(); ++r) {
      if (!seen[r] && complete_[r][static_cast<int>(key.kind)]) samples.push_back({r, 0, 0, 0});
    }
    return samples;
  }

  std::map<FunctionKey, std::vector<Sample>>& samples() { return samples_; }

 private:
  double Steps(uint32_t r) const { return metrics_[r].steps > 0 ? static_cast<double>(metrics_[r].steps) : 1.0; }

  void AddTable(uint32_t r, FunctionKind kind, const FunctionTable& t, bool keep_detail) {
    complete_[r][static_cast<int>(kind)] = t.omitted_rows == 0;
    for (const FunctionStat& f : t.rows) {
      std::string name = kind == FunctionKind::kPythonPath ? WithoutAddresses(f.name) : f.name;
      std::vector<Sample>& v = samples_[{kind, std::move(name), keep_detail ? f.detail : ""}];
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
    complete_[r][static_cast<int>(FunctionKind::kCollective)] = true;
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
  std::vector<std::array<bool, 6>> complete_;
  std::map<FunctionKey, std::vector<Sample>> samples_;
};

// Drops a Python path when a deeper path of the same rank explains 90 % of its excess.
void KeepDeepestPythonPaths(std::vector<FunctionOutlier>* out) {
  std::vector<bool> drop(out->size(), false);
  for (size_t i = 0; i < out->size(); ++i) {
    const FunctionOutlier& p = (*out)[i];
    if (p.kind != FunctionKind::kPythonPath) continue;
    for (const FunctionOutlier& q : *out) {
      if (q.kind == FunctionKind::kPythonPath && q.rank == p.rank && q.name.size() > p.name.size() &&
          q.name.starts_with(p.name + "|") && q.excess_ns >= 0.9 * p.excess_ns) {
        drop[i] = true;
        break;
      }
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < out->size(); ++i) {
    if (drop[i]) continue;
    if (k != i) (*out)[k] = std::move((*out)[i]);
    ++k;
  }
  out->resize(k);
}

}  // namespace

std::string_view FunctionKindName(FunctionKind k) {
  switch (k) {
    case FunctionKind::kKernel: return "kernel";
    case FunctionKind::kMemoryOp: return "memory_op";
    case FunctionKind::kRuntimeCall: return "runtime_call";
    case FunctionKind::kCpuOp: return "cpu_op";
    case FunctionKind::kPythonPath: return "python_path";
    case FunctionKind::kCollective: return "collective";
  }
  return "kernel";
}

std::vector<FunctionSamples> CollectFunctionSamples(const std::vector<RankSummary>& ranks,
                                                    const std::vector<RankMetrics>& metrics) {
  Collector c(ranks, metrics);
  c.Collect();
  std::vector<FunctionSamples> out;
  out.reserve(c.samples().size());
  for (auto& [key, raw] : c.samples()) {
    std::vector<Sample> samples = c.SamplesWithZeros(key, std::move(raw));
    std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.rank < b.rank; });
    out.push_back({key.kind, key.name, key.detail, std::move(samples)});
  }
  return out;
}

std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<RankSummary>& ranks,
                                                  const std::vector<RankMetrics>& metrics, const OutlierRule& rule,
                                                  double min_excess_ns) {
  std::vector<FunctionOutlier> out;
  for (const FunctionSamples& f : CollectFunctionSamples(ranks, metrics)) {
    const FunctionKey key{f.kind, f.name, f.detail};
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
      out.push_back({key.kind, key.name, key.detail, s.rank, s.value_ns, stats.median, rule.Threshold(stats), excess,
                     s.calls, call_stats.median, s.per_call_ns, median_per_call, samples.size()});
    }
  }
  KeepDeepestPythonPaths(&out);
  std::sort(out.begin(), out.end(), [](const FunctionOutlier& a, const FunctionOutlier& b) {
    return a.excess_ns != b.excess_ns ? a.excess_ns > b.excess_ns : a.rank < b.rank;
  });
  return out;
}

}  // namespace rankscope
