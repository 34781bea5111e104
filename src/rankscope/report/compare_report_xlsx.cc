#include <xlsxwriter.h>

#include <algorithm>
#include <memory>

#include "rankscope/report/compare_report_files.h"
#include "rankscope/report/compare_tables.h"

namespace rankscope {
namespace {

struct WorkbookCloser {
  void operator()(lxw_workbook* wb) const {
    if (wb) workbook_close(wb);
  }
};

// Formats shared by every sheet.
struct Formats {
  lxw_format* header;
  lxw_format* title;
  lxw_format* ms;         // milliseconds, 3 decimals
  lxw_format* count;
  lxw_format* share;      // percentage
  lxw_format* bytes;
  lxw_format* rate;
  lxw_format* ms_bad;     // DIFF of a regression
  lxw_format* ms_good;    // DIFF of an improvement
  lxw_format* text_bad;
  lxw_format* text_good;
  std::vector<lxw_format*> indent;  // text indented by tree depth
};

Formats MakeFormats(lxw_workbook* wb) {
  Formats f{};
  auto make = [&](const char* num, bool bold = false, uint32_t bg = 0, uint32_t fg = 0) {
    lxw_format* x = workbook_add_format(wb);
    if (num) format_set_num_format(x, num);
    if (bold) format_set_bold(x);
    if (bg) format_set_bg_color(x, bg);
    if (fg) format_set_font_color(x, fg);
    return x;
  };
  f.header = make(nullptr, true, 0xD9E1F2);
  format_set_text_wrap(f.header);
  f.title = make(nullptr, true);
  f.ms = make("0.000");
  f.count = make("0.##");
  f.share = make("0.0%");
  f.bytes = make("#,##0");
  f.rate = make("0.00");
  f.ms_bad = make("0.000", true, 0xFFC7CE, 0x9C0006);
  f.ms_good = make("0.000", true, 0xC6EFCE, 0x006100);
  f.text_bad = make(nullptr, false, 0xFFC7CE, 0x9C0006);
  f.text_good = make(nullptr, false, 0xC6EFCE, 0x006100);
  for (int d = 0; d <= 15; ++d) {
    lxw_format* x = workbook_add_format(wb);
    format_set_indent(x, static_cast<uint8_t>(d));
    f.indent.push_back(x);
  }
  return f;
}

// Excel sheet names: at most 31 characters, none of []:*?/\ .
std::string SheetName(std::string name) {
  for (char& c : name) {
    if (std::string_view("[]:*?/\\").find(c) != std::string_view::npos) c = '_';
  }
  return name.substr(0, 31);
}

std::string Header(const Column& c) {
  switch (c.unit) {
    case ColumnUnit::kNs: return c.title + " (ms)";
    case ColumnUnit::kBytes: return c.title + " (bytes)";
    default: return c.title;
  }
}

Status WriteSheet(lxw_workbook* wb, const Formats& f, const Table& t) {
  lxw_worksheet* ws = workbook_add_worksheet(wb, SheetName(t.name).c_str());
  if (!ws) return InvalidArgument("--xlsx: cannot add the sheet {}", t.name);
  worksheet_write_string(ws, 0, 0, t.title.c_str(), f.title);
  const lxw_row_t header_row = 1;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    worksheet_write_string(ws, header_row, static_cast<lxw_col_t>(c), Header(t.columns[c]).c_str(), f.header);
    const bool wide = t.columns[c].unit == ColumnUnit::kText;
    worksheet_set_column(ws, static_cast<lxw_col_t>(c), static_cast<lxw_col_t>(c), wide ? 28 : 12, nullptr);
  }
  worksheet_set_row(ws, header_row, 30, nullptr);
  bool first_text_seen = false;
  size_t indent_column = 0;
  for (size_t c = 0; c < t.columns.size() && !first_text_seen; ++c) {
    if (t.columns[c].unit == ColumnUnit::kText) first_text_seen = true, indent_column = c;
  }
  // Excel holds at most 1,048,576 rows; the tables are bounded well below that.
  for (size_t r = 0; r < t.rows.size() && r < 1'000'000; ++r) {
    const TableRow& row = t.rows[r];
    const auto xr = static_cast<lxw_row_t>(header_row + 1 + r);
    for (size_t c = 0; c < t.columns.size() && c < row.cells.size(); ++c) {
      const Column& col = t.columns[c];
      const auto xc = static_cast<lxw_col_t>(c);
      const Cell& cell = row.cells[c];
      if (const auto* s = std::get_if<std::string>(&cell)) {
        lxw_format* fmt = nullptr;
        if (c == indent_column && row.depth > 0) fmt = f.indent[std::min<size_t>(row.depth, f.indent.size() - 1)];
        if (col.diff && row.verdict != 0) fmt = row.verdict > 0 ? f.text_bad : f.text_good;
        worksheet_write_string(ws, xr, xc, s->c_str(), fmt);
      } else if (const auto* v = std::get_if<double>(&cell)) {
        double value = *v;
        lxw_format* fmt = nullptr;
        switch (col.unit) {
          case ColumnUnit::kNs:
            value /= 1e6;
            fmt = col.diff && row.verdict != 0 ? (row.verdict > 0 ? f.ms_bad : f.ms_good) : f.ms;
            break;
          case ColumnUnit::kCount: fmt = f.count; break;
          case ColumnUnit::kShare: fmt = f.share; break;
          case ColumnUnit::kBytes: fmt = f.bytes; break;
          case ColumnUnit::kRate: fmt = f.rate; break;
          case ColumnUnit::kText: break;
        }
        worksheet_write_number(ws, xr, xc, value, fmt);
      }
    }
  }
  worksheet_freeze_panes(ws, header_row + 1, 0);
  if (!t.columns.empty()) {
    worksheet_autofilter(ws, header_row, 0, static_cast<lxw_row_t>(header_row + std::max<size_t>(t.rows.size(), 1)),
                         static_cast<lxw_col_t>(t.columns.size() - 1));
  }
  return OkStatus();
}

}  // namespace

Status WriteCompareXlsx(const compare::JobComparison& job, const std::string& path) {
  lxw_workbook_options options = {};
  options.constant_memory = LXW_FALSE;
  std::unique_ptr<lxw_workbook, WorkbookCloser> wb(workbook_new_opt(path.c_str(), &options));
  if (!wb) return InvalidArgument("--xlsx {}: cannot create the workbook", path);
  const Formats f = MakeFormats(wb.get());
  for (const Table& t : CompareTables(job)) RANKSCOPE_RETURN_IF_ERROR(WriteSheet(wb.get(), f, t));
  const lxw_error err = workbook_close(wb.release());
  if (err != LXW_NO_ERROR) return InvalidArgument("--xlsx {}: {}", path, lxw_strerror(err));
  return OkStatus();
}

}  // namespace rankscope
