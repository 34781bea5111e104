// The hang report: terminal text and JSON (schema "rankscope.hang/1", docs/hang.md) of a
// hang::HangAnalysis — what each rank was doing, grouped; the suspects and why; the collective
// each group waits in; the next thing to look at. The sentences of the hang finding kinds live
// here (rules in hang/suspects.cc produce only facts).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/findings/finding.h"
#include "rankscope/hang/hang_analysis.h"

namespace rankscope {

std::string HangReportText(const hang::HangAnalysis& analysis, bool color);
nlohmann::json HangReportJson(const hang::HangAnalysis& analysis);

// One sentence for a hang finding, and one for its next step.
std::string HangFindingSentence(const Finding& f);
std::string HangNextStepSentence(const Finding& f);

}  // namespace rankscope
