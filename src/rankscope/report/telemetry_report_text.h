// Terminal rendering of node telemetry over a traced window and of its findings, shared by
// `rankscope telemetry` and the "Node telemetry" section of `rankscope analyze`.
#pragma once

#include <string>
#include <vector>

#include "rankscope/analysis/telemetry_join.h"

namespace rankscope {

std::string RenderNodeTelemetry(const analysis::NodeWindowTelemetry& node);

}  // namespace rankscope
