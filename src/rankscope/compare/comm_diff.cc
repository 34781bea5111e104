#include "rankscope/compare/comm_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace rankscope::compare {

std::vector<CommDiffRow> BuildCommRows(const CompareSummary& base, const CompareSummary& neu) {
  using Key = std::tuple<std::string, std::string, int, bool>;
  std::map<Key, CommDiffRow> rows;
  auto add = [&](const CompareSummary& s, bool is_new) {
    const double k = std::max<uint32_t>(1, s.steps.kept());
    for (const CommRow& c : s.comm) {
      CommDiffRow& r = rows[{c.op, c.dtype, c.bucket, c.on_gpu}];
      r.op = c.op;
      r.dtype = c.dtype;
      r.size = SizeBucketLabel(c.bucket);
      r.on_gpu = c.on_gpu;
      std::string algo = c.algorithm.empty() ? c.protocol : c.protocol.empty() ? c.algorithm : c.algorithm + "/" + c.protocol;
      if (c.group_size > 0) algo += fmt::format("{}n={}", algo.empty() ? "" : " ", c.group_size);
      (is_new ? r.new_algorithm : r.base_algorithm) = algo;
      (is_new ? r.new_count : r.base_count) += static_cast<double>(c.count) / k;
      (is_new ? r.new_ns : r.base_ns) += static_cast<double>(c.time_ns) / k;
      (is_new ? r.new_exposed_ns : r.base_exposed_ns) += c.exposed_ns / k;
      (is_new ? r.new_bytes : r.base_bytes) += static_cast<double>(c.bytes) / k;
      (is_new ? r.new_algbw_gbps : r.base_algbw_gbps) = c.algbw_gbps;
      (is_new ? r.new_busbw_gbps : r.base_busbw_gbps) = c.busbw_gbps;
    }
  };
  add(base, false);
  add(neu, true);
  std::vector<CommDiffRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  std::sort(out.begin(), out.end(), [](const CommDiffRow& a, const CommDiffRow& b) {
    return std::fabs(a.new_exposed_ns - a.base_exposed_ns) + std::fabs(a.new_ns - a.base_ns) >
           std::fabs(b.new_exposed_ns - b.base_exposed_ns) + std::fabs(b.new_ns - b.base_ns);
  });
  return out;
}

}  // namespace rankscope::compare
