// /metrics: the latest values in the Prometheus text exposition format (version 0.0.4):
// "# HELP" and "# TYPE" once per metric, then one line per series, every series labelled with
// the node's `host`. Metrics come in catalog order, series sorted by their labels, so two
// scrapes of the same state are byte-identical.
#pragma once

#include <string>
#include <vector>

#include "rankscope/telemetry/telemetry_store.h"

namespace rankscope::telemetry {

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string RenderPrometheus(const std::vector<SeriesValue>& values, const std::string& host);

// Shortest text that reads back as the same double; whole numbers without exponent or point.
std::string FormatValue(double v);

}  // namespace rankscope::telemetry
