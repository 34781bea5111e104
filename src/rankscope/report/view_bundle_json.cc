// Every view document of one job in one object: what an HTML report carries inline. Timelines
// are kept for up to max_embedded_timelines steps (the middle ones of those present on every
// rank); the page says when a step's timeline was left out.
#include <algorithm>

#include "rankscope/report/view_data.h"

namespace rankscope {

nlohmann::json ViewBundleJson(nlohmann::json head, const std::vector<RankSummary>& ranks,
                              const ClusterDiagnosis* cluster, const std::vector<std::string>& sidecars,
                              double flag_share, const ViewLimits& limits) {
  nlohmann::json out = {{"schema", kViewsSchema}, {"view", "bundle"}};
  out["overview"] = ReportOverviewJson(std::move(head), ranks, flag_share);
  if (cluster) {
    const std::vector<int64_t> steps = TimelineSteps(ranks);
    nlohmann::json timelines = nlohmann::json::object();
    const size_t keep = std::min(steps.size(), limits.max_embedded_timelines);
    const size_t first = (steps.size() - keep) / 2;
    for (size_t i = first; i < first + keep; ++i) {
      timelines[std::to_string(steps[i])] = TimelineJson(ranks, *cluster, steps[i], limits);
    }
    out["timeline_steps"] = steps;
    out["default_step"] = steps.empty() ? nlohmann::json(nullptr) : nlohmann::json(steps[(steps.size() - 1) / 2]);
    out["timelines"] = std::move(timelines);
    out["matrix"] = CommMatrixJson(ranks, *cluster, limits);
    out["functions"] = FunctionSpreadJson(ranks, *cluster, limits);
  }
  out["telemetry"] = TelemetrySeriesJson(sidecars, ranks, limits);
  return out;
}

}  // namespace rankscope
