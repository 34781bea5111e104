// The terminal report's "Findings" section: every finding of the job (cluster diagnosis and
// node telemetry), worst first, each with its cost, evidence and next step. At most 100 columns.
#pragma once

#include <string>
#include <vector>

#include "rankscope/findings/finding.h"
#include "rankscope/report/analysis_report_text.h"

namespace rankscope {

struct FindingsSectionContext {
  // What the section says when there is no finding (e.g. "no rank, node or function stands
  // out from its peers by the rule above").
  std::string none;
  // The cluster's what-if over every slow rank and node: printed under the findings when > 0.
  double total_saving_ns = 0, total_step_ns = 0, total_estimated_step_ns = 0;
  // Every finding about ranks fixed at once (cluster/cost_model.h): printed from 2 findings.
  size_t all_findings = 0;
  std::vector<int64_t> all_ranks;
  double all_saving_ns = 0, all_step_ns = 0, all_estimated_step_ns = 0;
};

std::string RenderFindingsSection(const std::vector<Finding>& findings, const FindingsSectionContext& context,
                                  const TextOptions& options);

}  // namespace rankscope
