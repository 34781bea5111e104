// Where monitors put their values (Dynolog's split: a monitor samples, a logger records).
// A monitor never knows whether its values go to the ring buffer, /metrics or a test.
#pragma once

#include <string_view>

#include "rankscope/telemetry/series.h"

namespace rankscope::telemetry {

class Logger {
 public:
  virtual ~Logger() = default;
  // `metric` must be a name of the catalog (metric_catalog.h).
  virtual void Log(std::string_view metric, const Labels& labels, double value) = 0;
};

}  // namespace rankscope::telemetry
