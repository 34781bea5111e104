// The report without the per-rank tables: the same fields and numbers as the JSON report (the
// same writer makes them), minus what grows with functions and instances. At 1024 ranks the full
// report is ~170 MB; this is a few MB.
#include "rankscope/report/analysis_report.h"
#include "rankscope/report/view_data.h"

namespace rankscope {
namespace {

// Per-rank sections left out of the overview (the rank's own page has them).
constexpr const char* kHeavyRankFields[] = {"kernels", "memory_ops", "cuda_runtime", "cpu_ops", "python_functions",
                                            "communication", "idle", "launch", "memory"};

nlohmann::json Light(nlohmann::json rank) {
  for (const char* f : kHeavyRankFields) rank.erase(f);
  return rank;
}

}  // namespace

nlohmann::json ReportOverviewJson(nlohmann::json head, const std::vector<RankSummary>& ranks, double flag_share) {
  nlohmann::json out = std::move(head);
  nlohmann::json light = nlohmann::json::array();
  for (const RankSummary& r : ranks) light.push_back(Light(RankSummaryToJson(r, flag_share)));
  out["ranks"] = std::move(light);
  if (out.contains("cluster") && out["cluster"].is_object()) {
    // Instances are the timeline's; the counts stay.
    out["cluster"]["collectives"].erase("instances");
  }
  out["overview"] = true;
  return out;
}

nlohmann::json ReportOverviewFromReport(const nlohmann::json& report) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : report.items()) {
    if (k == "ranks") continue;
    out[k] = v;
  }
  nlohmann::json light = nlohmann::json::array();
  if (report.contains("ranks") && report["ranks"].is_array()) {
    for (const auto& r : report["ranks"]) light.push_back(r.is_object() ? Light(r) : r);
  }
  out["ranks"] = std::move(light);
  if (out.contains("cluster") && out["cluster"].is_object() && out["cluster"].contains("collectives") &&
      out["cluster"]["collectives"].is_object()) {
    out["cluster"]["collectives"].erase("instances");
  }
  out["overview"] = true;
  return out;
}

}  // namespace rankscope
