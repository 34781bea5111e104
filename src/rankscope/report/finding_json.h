// Findings in the JSON report: every fact a rule recorded (kind, severity, ranks, hosts, subject,
// cost with its method, evidence quantities, next step) beside the words finding_text.cc writes
// for them. docs/report-schema.md documents the shape; docs/findings.md every kind.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "rankscope/findings/finding.h"

namespace rankscope {

nlohmann::json FindingToJson(const Finding& f);
nlohmann::json FindingsToJson(const std::vector<Finding>& findings);

}  // namespace rankscope
