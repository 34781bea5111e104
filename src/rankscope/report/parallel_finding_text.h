// The words of the parallelism-aware findings (cluster/parallel_findings.h): slow_stage,
// slow_worker and per_step_imbalance, and their stage / step-imbalance evidence. Called from
// finding_text.cc, which owns the other kinds.
#pragma once

#include <string>

#include "rankscope/findings/finding.h"

namespace rankscope {

bool IsParallelFinding(FindingKind kind);
std::string ParallelFindingTitle(const Finding& f);
std::string ParallelNextSentence(const Finding& f);
std::string ParallelEvidenceSentence(const Evidence& e, const Finding& f);  // kStage, kStepImbalance

}  // namespace rankscope
