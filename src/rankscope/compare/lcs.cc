#include "rankscope/compare/lcs.h"

#include <algorithm>
#include <unordered_map>

namespace rankscope::compare {
namespace {

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

// Myers' greedy forward algorithm on a[a0, a0+n) and b[b0, b0+m); false when more than
// max_edits edits are needed. Pairs are appended in increasing order.
bool Myers(const std::vector<uint64_t>& a, size_t a0, size_t n, const std::vector<uint64_t>& b, size_t b0, size_t m,
           size_t max_edits, Pairs* out) {
  const auto N = static_cast<int64_t>(n), M = static_cast<int64_t>(m);
  const int64_t limit = std::min<int64_t>(N + M, static_cast<int64_t>(max_edits));
  // snapshots[d] holds V[-d..d] after round d (V[k] = furthest x on diagonal k).
  std::vector<std::vector<int64_t>> snapshots;
  std::vector<int64_t> v(2 * limit + 3, 0);
  const int64_t off = limit + 1;
  int64_t found = -1;
  for (int64_t d = 0; d <= limit && found < 0; ++d) {
    for (int64_t k = -d; k <= d; k += 2) {
      int64_t x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      int64_t y = x - k;
      while (x < N && y < M && a[a0 + x] == b[b0 + y]) ++x, ++y;
      v[off + k] = x;
      if (x >= N && y >= M) found = d;
    }
    snapshots.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  if (found < 0) return false;
  auto at = [&](int64_t d, int64_t k) { return snapshots[d][k + d]; };
  Pairs reversed;
  int64_t x = N, y = M;
  for (int64_t d = found; d > 0; --d) {
    const int64_t k = x - y;
    const bool down = k == -d || (k != d && at(d - 1, k - 1) < at(d - 1, k + 1));
    const int64_t prev_k = down ? k + 1 : k - 1;
    const int64_t prev_x = at(d - 1, prev_k), prev_y = prev_x - prev_k;
    const int64_t mid_x = down ? prev_x : prev_x + 1, mid_y = mid_x - k;
    while (x > mid_x && y > mid_y) {
      --x, --y;
      reversed.emplace_back(static_cast<uint32_t>(a0 + x), static_cast<uint32_t>(b0 + y));
    }
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    --x, --y;
    reversed.emplace_back(static_cast<uint32_t>(a0 + x), static_cast<uint32_t>(b0 + y));
  }
  out->insert(out->end(), reversed.rbegin(), reversed.rend());
  return true;
}

// The k-th occurrence of a symbol in A with its k-th in B, then the longest chain increasing in
// both (patience sorting on the B index).
void ByOccurrence(const std::vector<uint64_t>& a, size_t a0, size_t n, const std::vector<uint64_t>& b, size_t b0,
                  size_t m, Pairs* out) {
  std::unordered_map<uint64_t, std::vector<uint32_t>> in_b;
  for (size_t j = 0; j < m; ++j) in_b[b[b0 + j]].push_back(static_cast<uint32_t>(b0 + j));
  std::unordered_map<uint64_t, size_t> used;
  Pairs candidates;
  for (size_t i = 0; i < n; ++i) {
    auto it = in_b.find(a[a0 + i]);
    if (it == in_b.end()) continue;
    size_t& k = used[a[a0 + i]];
    if (k < it->second.size()) candidates.emplace_back(static_cast<uint32_t>(a0 + i), it->second[k++]);
  }
  // Longest strictly increasing subsequence of candidates[].second.
  std::vector<size_t> tails, prev(candidates.size(), SIZE_MAX);
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto pos = std::lower_bound(tails.begin(), tails.end(), candidates[i].second,
                                [&](size_t t, uint32_t v) { return candidates[t].second < v; });
    if (pos != tails.begin()) prev[i] = *(pos - 1);
    if (pos == tails.end()) {
      tails.push_back(i);
    } else {
      *pos = i;
    }
  }
  Pairs chain;
  for (size_t i = tails.empty() ? SIZE_MAX : tails.back(); i != SIZE_MAX; i = prev[i]) chain.push_back(candidates[i]);
  out->insert(out->end(), chain.rbegin(), chain.rend());
}

}  // namespace

LcsResult LongestCommonSubsequence(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, size_t max_edits) {
  LcsResult r;
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  for (size_t i = 0; i < prefix; ++i) r.pairs.emplace_back(static_cast<uint32_t>(i), static_cast<uint32_t>(i));
  const size_t n = a.size() - prefix - suffix, m = b.size() - prefix - suffix;
  if (n > 0 && m > 0 && !Myers(a, prefix, n, b, prefix, m, max_edits, &r.pairs)) {
    ByOccurrence(a, prefix, n, b, prefix, m, &r.pairs);
    r.exact = false;
  }
  for (size_t i = 0; i < suffix; ++i) {
    r.pairs.emplace_back(static_cast<uint32_t>(a.size() - suffix + i), static_cast<uint32_t>(b.size() - suffix + i));
  }
  return r;
}

}  // namespace rankscope::compare
