// The rules of the hang analysis: who is stuck, where and why, as findings (facts only; the
// words are report/hang_report_text.cc's). In order of precedence:
//  1. a collective whose op, sizes or dtypes differ between members (hang_collective_mismatch);
//  2. ranks missing from a collective the other members wait in (hang_missing_from_collective),
//     or, when such a rank's collector did not answer, hang_unresponsive_rank, and when its main
//     thread waits for its DataLoader, hang_dataloader_wait;
//  3. ranks that did not answer and are not named above (hang_unresponsive_rank);
//  4. ranks whose main thread is not where the majority is (hang_stack_outlier);
//  5. a collective every member entered and none completed (hang_stuck_in_collective).
// A later collective whose missing ranks all wait in an earlier anomaly is a consequence, not a
// cause, and is evidence at most. When no rank is stalled only mismatches are reported.
#pragma once

#include <vector>

#include "rankscope/findings/finding.h"

namespace rankscope::hang {

struct HangAnalysis;

std::vector<Finding> FindSuspects(const HangAnalysis& analysis);

}  // namespace rankscope::hang
