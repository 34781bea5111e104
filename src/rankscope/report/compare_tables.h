// The comparison as tables, one per comparison (overall, differences, operators, operator
// statistics, modules, kernels, kernel classes, communication, memory, ranks, findings): the one
// source of the CSV files (--csv) and the xlsx sheets (--xlsx), so that both always agree.
// Every table has a "rank" column; BASE / NEW / DIFF columns stand side by side.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "rankscope/compare/compare_result.h"

namespace rankscope {

enum class ColumnUnit : uint8_t {
  kText,
  kNs,     // nanoseconds per step (CSV: integer ns; xlsx: milliseconds)
  kCount,  // a count (per step where the title says so)
  kShare,  // 0..1 (xlsx: a percentage)
  kBytes,
  kRate,   // GB/s
};

struct Column {
  std::string id;     // CSV header: snake_case, "_ns" / "_bytes" suffix for the unit
  std::string title;  // xlsx header: words
  ColumnUnit unit = ColumnUnit::kText;
  bool diff = false;  // a DIFF column (NEW - BASE): highlighted on regression rows
};

using Cell = std::variant<std::monostate, std::string, double>;

struct TableRow {
  std::vector<Cell> cells;
  int8_t verdict = 0;  // +1 regression beyond noise, -1 improvement beyond noise, 0 neither
  uint8_t depth = 0;   // indentation of the first text column (trees)
};

struct Table {
  std::string name;   // CSV file name (without .csv) and xlsx sheet name
  std::string title;  // the sheet's first line
  std::vector<Column> columns;
  std::vector<TableRow> rows;
};

std::vector<Table> CompareTables(const compare::JobComparison& job);

}  // namespace rankscope
