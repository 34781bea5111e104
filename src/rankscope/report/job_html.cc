#include "rankscope/report/job_html.h"

#include "rankscope/report/html_report.h"
#include "rankscope/report/view_data.h"

namespace rankscope {

Status WriteJobHtml(const JobReport& report, const std::string& path) {
  std::vector<std::string> sidecars;
  for (const auto& node : report.telemetry) sidecars.push_back(node.source);
  const nlohmann::json bundle = ViewBundleJson(ReportHeadJson(report), report.ranks,
                                               report.cluster ? &*report.cluster : nullptr, sidecars,
                                               report.options.flag_share);
  return WriteHtmlReport(bundle, path);
}

}  // namespace rankscope
