// Longest common subsequence of two symbol sequences (operator names in call order), for
// aligning two runs' operator and module trees.
//
// Common prefix and suffix are matched first; the middle with Myers' O((N+M)·D) algorithm,
// which is fast when the sequences are similar (D = number of insertions and deletions). When D
// would exceed `max_edits` (two unrelated sequences), the k-th occurrence of each symbol in A
// is paired with its k-th occurrence in B and the pairs are reduced to an increasing chain
// (longest increasing subsequence): a common subsequence, not always the longest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rankscope::compare {

struct LcsResult {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (index in a, index in b), increasing in both
  bool exact = true;  // false when the fallback was used
};

LcsResult LongestCommonSubsequence(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                                   size_t max_edits = 1000);

}  // namespace rankscope::compare
