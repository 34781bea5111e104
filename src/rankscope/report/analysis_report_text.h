// Terminal rendering of `rankscope analyze`: per rank, sections in the order of
// docs/definitions.md, each table worst first, at most 100 columns wide.
#pragma once

#include <string>

#include "rankscope/report/analysis_report.h"

namespace rankscope {

struct TextOptions {
  size_t top = 10;     // rows per table
  bool color = false;  // ANSI colour (only on a terminal)
  double flag_share = kFlagShare;
};

std::string RenderRankReport(const RankSummary& rank, const TextOptions& options);

// One line per rank, for a directory of ranks.
std::string RenderRankOverview(const std::vector<RankSummary>& ranks, const TextOptions& options);

}  // namespace rankscope
