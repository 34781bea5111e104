// Aligning two runs' operator templates and module trees.
//
// Operators: the roots are paired, then, recursively, the children of every paired node are
// aligned in call order: first by the longest common subsequence of name and input shapes and
// types, then, in the gaps that leaves, by the longest common subsequence of names alone (an
// operator whose shapes changed is still the same operator). `--op-map OLD=NEW` renames BASE's
// operators first; with `--use-input-shapes` only the first pass runs: a pair must have the same
// shapes. Unpaired nodes are operators added in NEW or removed from BASE, with their subtree.
//
// Modules: the same on the module tree, comparing class names without the profiler's instance
// suffix ("Linear_3" ~ "Linear"), so that a module added before others of its class does not
// shift their pairing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

struct AlignOptions {
  bool use_input_shapes = false;
  std::vector<std::pair<std::string, std::string>> op_map;  // BASE name -> NEW name
};

struct TreeAlignment {
  std::vector<uint32_t> base_to_new;  // per BASE node: its NEW node, or kNoIndex
  std::vector<uint32_t> new_to_base;
  bool exact = true;                  // false when an LCS fell back to occurrence matching
};

TreeAlignment AlignOperators(const CompareSummary& base, const CompareSummary& neu, const AlignOptions& options);
TreeAlignment AlignModules(const CompareSummary& base, const CompareSummary& neu);

// "Linear_3" -> "Linear".
std::string_view ModuleClass(std::string_view name);

// Parses "OLD=NEW".
StatusOr<std::pair<std::string, std::string>> ParseOpMapping(std::string_view text);

}  // namespace rankscope::compare
