// The comparison as files for scripts and spreadsheets: one CSV file per table (--csv DIR) and
// an Excel workbook with one sheet per table (--xlsx FILE, written with libxlsxwriter), both from
// compare_tables.h. Failures come back as a Status naming the file.
#pragma once

#include <string>

#include "rankscope/base/status.h"
#include "rankscope/compare/compare_result.h"

namespace rankscope {

// DIR/<table>.csv for every table; DIR is created if missing. Times in integer ns per step.
Status WriteCompareCsv(const compare::JobComparison& job, const std::string& dir);

// One sheet per table; times in ms, BASE / NEW / DIFF side by side, DIFF cells of regressions
// (beyond the noise band) red and of improvements green; header row frozen, filters on.
Status WriteCompareXlsx(const compare::JobComparison& job, const std::string& path);

}  // namespace rankscope
