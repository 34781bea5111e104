// The job's parallel layout and stage comparison in the report (cluster/layout.h,
// cluster/parallel_findings.h): terminal lines and the JSON `cluster.layout` object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "rankscope/cluster/layout.h"
#include "rankscope/cluster/parallel_findings.h"

namespace rankscope {

// Indented lines, "" when there is nothing to say (no groups, no notes).
std::string LayoutText(const JobLayout& layout, const ParallelAnalysis& parallel, const std::string& per_unit);

nlohmann::json LayoutJson(const JobLayout& layout, const ParallelAnalysis& parallel);

}  // namespace rankscope
