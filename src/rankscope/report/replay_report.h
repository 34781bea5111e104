// The replayed what-if in the report (cluster/step_replay.h): terminal lines and the JSON
// `cluster.replay` object.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/cluster/step_replay.h"

namespace rankscope {

std::string ReplayText(const StepReplay& replay, const std::string& per_unit);
nlohmann::json ReplayJson(const StepReplay& replay);

}  // namespace rankscope
