#include "rankscope/report/layout_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "rankscope/report/text_format.h"

namespace rankscope {

std::string LayoutText(const JobLayout& layout, const ParallelAnalysis& parallel, const std::string& per_unit) {
  if (layout.groups.empty() && layout.notes.empty()) return "";
  std::string out;
  std::map<std::string_view, std::pair<size_t, size_t>> roles;  // role -> (groups, size)
  for (const LayoutGroup& g : layout.groups) {
    auto& [n, size] = roles[GroupRoleName(g.role)];
    ++n;
    size = std::max(size, g.ranks.size());
  }
  std::string summary;
  for (const auto& [role, v] : roles) {
    summary += fmt::format("{}{} {} group(s) of {}", summary.empty() ? "" : "; ", v.first, role, v.second);
  }
  out += fmt::format("  from {}: {}; {} pipeline stage(s), data-parallel size {}\n", layout.source, summary,
                     layout.stages, layout.data_parallel);
  if (layout.has_pipeline()) {
    for (const StageStats& s : parallel.stages) {
      out += fmt::format("  stage {}: ranks {}; own work {}{}, communication wait {}{}\n", s.stage,
                         fmt::join(s.ranks, ","), FormatNs(s.local_ns), per_unit, FormatNs(s.comm_wait_ns), per_unit);
    }
    if (parallel.microbatches > 0) out += fmt::format("  ~{:.0f} micro-batches per step\n", parallel.microbatches);
  }
  for (const std::string& n : layout.notes) out += "  note: " + n + "\n";
  return out;
}

nlohmann::json LayoutJson(const JobLayout& layout, const ParallelAnalysis& parallel) {
  nlohmann::json groups = nlohmann::json::array();
  for (const LayoutGroup& g : layout.groups) {
    groups.push_back({{"name", g.name}, {"desc", g.desc}, {"ranks", g.ranks}, {"role", GroupRoleName(g.role)},
                      {"classified_by", g.classified_by}, {"untraced_ranks", g.untraced}});
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const StageStats& s : parallel.stages) {
    stages.push_back({{"stage", s.stage}, {"ranks", s.ranks}, {"local_ns", static_cast<int64_t>(s.local_ns)},
                      {"comm_wait_ns", static_cast<int64_t>(s.comm_wait_ns)}});
  }
  return {{"source", layout.source},         {"groups", groups},
          {"stages", layout.stages},         {"data_parallel", layout.data_parallel},
          {"stage_of_rank", layout.stage},   {"data_index_of_rank", layout.data_index},
          {"stage_times", stages},           {"microbatches", parallel.microbatches},
          {"notes", layout.notes}};
}

}  // namespace rankscope
