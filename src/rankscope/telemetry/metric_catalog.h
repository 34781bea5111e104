// The catalog of every metric rankscoped exports: name, type, labels and help text. Names are
// stable (dashboards depend on them); docs/telemetry.md lists the same table and a test checks
// that the two agree and that monitors log nothing outside the catalog.
#pragma once

#include <span>
#include <string_view>

namespace rankscope::telemetry {

enum class MetricType { kGauge, kCounter };

struct MetricDef {
  std::string_view name;
  MetricType type;
  std::string_view labels;  // besides `host`, comma separated, for the docs
  std::string_view help;
};

std::span<const MetricDef> AllMetrics();
const MetricDef* FindMetric(std::string_view name);
// Position in the catalog (metrics are rendered in catalog order); npos when unknown.
size_t MetricOrder(std::string_view name);

}  // namespace rankscope::telemetry
