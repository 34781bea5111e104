#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "rankscope/report/compare_report_files.h"
#include "rankscope/report/compare_tables.h"

namespace rankscope {
namespace {

// RFC 4180: quote a field that holds a comma, quote or line break; double the quotes.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvCell(const Cell& cell, ColumnUnit unit) {
  if (const auto* s = std::get_if<std::string>(&cell)) return CsvField(*s);
  if (const auto* v = std::get_if<double>(&cell)) {
    if (unit == ColumnUnit::kNs || unit == ColumnUnit::kBytes) return fmt::format("{}", std::llround(*v));
    if (*v == std::floor(*v) && std::fabs(*v) < 1e15) return fmt::format("{}", static_cast<int64_t>(*v));
    return fmt::format("{:.6g}", *v);
  }
  return "";
}

}  // namespace

Status WriteCompareCsv(const compare::JobComparison& job, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument("--csv {}: cannot create the directory: {}", dir, ec.message());
  for (const Table& t : CompareTables(job)) {
    const std::string path = (std::filesystem::path(dir) / (t.name + ".csv")).string();
    std::ofstream out(path, std::ios::binary);
    for (size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << t.columns[c].id;
    out << "\r\n";
    for (const TableRow& row : t.rows) {
      for (size_t c = 0; c < t.columns.size(); ++c) {
        out << (c ? "," : "") << (c < row.cells.size() ? CsvCell(row.cells[c], t.columns[c].unit) : "");
      }
      out << "\r\n";
    }
    out.close();
    if (!out) return InvalidArgument("--csv: cannot write {}", path);
  }
  return OkStatus();
}

}  // namespace rankscope
