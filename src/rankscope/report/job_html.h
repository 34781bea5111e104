// The HTML report of an analysed job (`rankscope analyze ... --html FILE`): every view document
// (view_data.h) inlined in the web UI page (html_report.h).
#pragma once

#include <string>

#include "rankscope/base/status.h"
#include "rankscope/report/analysis_report.h"

namespace rankscope {

// `report` must hold every rank the cluster diagnosis saw (write it before --rank narrows it).
Status WriteJobHtml(const JobReport& report, const std::string& path);

}  // namespace rankscope
