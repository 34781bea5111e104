// The web UI's documents for a run comparison (docs/ui.md, "Compare"). The Compare view draws
// the comparison JSON itself (`rankscope compare --json`, schema rankscope.compare/1), the
// document the compare engine writes: no second rendering of its numbers. These helpers only
// wrap it so that the page opens it like any job.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope {

// A comparison's first document, in the overview's shape (view_data.h): its findings are the
// compare findings, `comparison` says where the Compare view's document comes from.
nlohmann::json CompareOverviewJson(const nlohmann::json& comparison);

// The marker an overview carries when the job has a comparison (`source`: "comparison" for a
// comparison JSON, "baseline" for a capture with the daemon's baseline-comparison), with the
// comparison's head (inputs, baseline) when it is at hand.
nlohmann::json ComparisonMarkerJson(const std::string& source, const nlohmann::json* comparison);

// A comparison JSON read from `path`: at most `max_bytes`, schema rankscope.compare/N.
StatusOr<nlohmann::json> ReadComparisonJson(const std::string& path, uint64_t max_bytes);

// `rankscope compare ... --html FILE`: the page with the comparison inlined (html_report.h).
Status WriteCompareHtml(const nlohmann::json& comparison, const std::string& path);

}  // namespace rankscope
