// The ranked list of differences: the attribution cells of both runs (CompareSummary) grouped by
// cause, so that one change in the job is one difference, and the differences add up to the
// step-time delta.
//
// Each paired or unpaired operator gets a cause (docs/compare.md "Attribution"):
//   added / removed  an operator only in one run, with its subtree and its backward operators
//                    (linked by the fwdbwd flow); grouped by name and module;
//   shapes           a pair whose input shapes differ, with its subtree and backward operators;
//                    one difference for the run (a batch or width change touches many operators);
//   dtypes           a pair whose input types differ with the same shapes (precision), plus the
//                    casts added or removed with it;
//   same work        a pair with the same shapes: grouped by module (nn.Module, backward ops by
//                    their forward op's module), else by the top-level operator it runs under.
// Cells that are not operators: communication (per op and dtype), host time outside operators
// (per step phase), GPU work without a launching operator (per kernel class).
//
// A difference is beyond noise when |Δ| exceeds the rank pair's noise band. Same-work differences
// that are each within noise but together exceed it become one "many small" difference.
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/op_alignment.h"

namespace rankscope::compare {

// Each difference's BASE and NEW values are per-step means over the run's kept steps of the
// difference's cells: the step time it accounts for. The cells of a step add up to its duration,
// so the differences add up to the step-time delta (a difference of mean steps) exactly. A
// stall in one step (the OS descheduling the process inside an operator) moves the operator it
// hit by stall / steps, which the noise band (at least three standard errors of the step delta,
// from the same steps) always exceeds: it never makes a difference beyond noise on its own.
// (Medians over steps, used before, did not add up: on a loaded machine a change that made the
// step longer also made its waits for a CPU longer and more skewed, and the medians left up to a
// third of the change's cost in a "variation" remainder.)
struct AttributionResult {
  std::vector<Difference> differences;  // by |Δ|, at most max_differences
  double explained_ns = 0;              // Σ of the differences beyond noise
  double differences_total_ns = 0;      // Σ of the differences kept (all of them: the step delta)
  double aligned_share = 0;  // BASE's operator cells in paired operators / all BASE operator cells
};

AttributionResult AttributeDelta(const CompareSummary& base, const CompareSummary& neu, const TreeAlignment& ops,
                                 double noise_ns, size_t max_differences = 100);

// "nn.Module path" of a module node ("Net_0/Sequential_0/Linear_1").
std::string ModulePath(const CompareSummary& s, uint32_t module);
// "[step] > DistributedDataParallel.forward > aten::linear".
std::string OpPath(const CompareSummary& s, uint32_t node);
// The parts of a "dims|types" shapes text.
std::string_view ShapeDims(std::string_view shapes);
std::string_view ShapeTypes(std::string_view shapes);

}  // namespace rankscope::compare
