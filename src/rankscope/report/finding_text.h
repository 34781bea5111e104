// The words of a finding: its title, cost line, evidence sentences and next step, written from
// the facts the rules recorded (findings/finding.h). The terminal report prints these; the JSON
// report carries them beside the numbers. One sentence per kind lives here and nowhere else.
#pragma once

#include <string>
#include <vector>

#include "rankscope/findings/finding.h"

namespace rankscope {

struct FindingWords {
  std::string title;                  // one sentence
  std::string cost;                   // "cost 48.6 ms/step (43.2% of the step): ..."
  std::vector<std::string> evidence;  // one sentence per evidence item
  std::string next;                   // what to look at next
};

FindingWords DescribeFinding(const Finding& f);

// One evidence item as a sentence; `unit` is the finding's cost unit ("step" or "window").
std::string DescribeEvidence(const Evidence& e, const Finding& f);

// "kernel", "CPU op", "Python path", ... for a function kind id (function_outliers.h).
std::string FunctionKindWords(std::string_view kind_id);
// "data loading", "forward", ... for a phase id ("data_loading", ...).
std::string PhaseWords(std::string_view phase_id);

}  // namespace rankscope
