// The JSON form of a comparison: schema "rankscope.compare/1", documented in
// docs/compare-schema.md and docs/compare-schema.json. Times are integer ns per step (means over
// each run's kept steps); counts per step keep their fraction.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "rankscope/compare/compare_result.h"

namespace rankscope {

nlohmann::json CompareToJson(const compare::JobComparison& job);
void WriteCompareJson(const compare::JobComparison& job, std::ostream& out);

}  // namespace rankscope
