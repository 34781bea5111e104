#include "rankscope/report/findings_report_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rankscope/report/finding_text.h"
#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

std::string Section(const Style& s, std::string_view title, std::string_view note) {
  std::string out = "\n" + s.Bold(std::string(title));
  if (!note.empty()) out += "  " + s.Dim(std::string(note));
  return out + "\n";
}

std::string RenderOne(size_t n, const Finding& f, const Style& s) {
  const FindingWords w = DescribeFinding(f);
  const std::string head = fmt::format("{:>2}. ", n);
  std::string out = WrapLines(w.title, " " + head.substr(0, 3) + " ", "    ");
  if (f.cost.method != CostMethod::kNone) {
    std::string cost = WrapLines(w.cost, "    ", "      ");
    cost.pop_back();  // colour the lines, not the final newline
    out += (f.cost.saving_ns > 0 ? s.Red(cost) : s.Dim(cost)) + "\n";
  }
  for (const std::string& e : w.evidence) out += WrapLines(e, "      - ", "        ");
  if (!w.next.empty()) out += WrapLines("next: " + w.next, "    ", "      ");
  return out;
}

}  // namespace

std::string RenderFindingsSection(const std::vector<Finding>& findings, const FindingsSectionContext& context,
                                  const TextOptions& options) {
  const Style s(options.color);
  if (findings.empty()) return Section(s, "Findings", "") + WrapLines(context.none, "  ", "  ");
  std::string out = Section(s, "Findings", "worth most first; cost = step time saved if fixed");
  for (size_t i = 0; i < findings.size() && i < options.top; ++i) out += RenderOne(i + 1, findings[i], s);
  if (findings.size() > options.top) out += fmt::format("  ... {} more in the JSON report\n", findings.size() - options.top);
  if (context.total_saving_ns > 0) {
    out += "\n" + WrapLines(fmt::format("What-if: with every slow rank and node like the median rank, the step would "
                                        "take {} instead of {} ({:.1f}% less)",
                                        FormatNs(context.total_estimated_step_ns), FormatNs(context.total_step_ns),
                                        100 * context.total_saving_ns / context.total_step_ns),
                            "  ", "  ");
  }
  if (context.all_findings >= 2 && context.all_saving_ns > 0 && context.all_step_ns > 0) {
    out += "\n" + WrapLines(fmt::format("What-if: fixing the {} findings about ranks {} together, the step "
                                        "would take {} instead of {} ({:.1f}% less); each finding's own cost above "
                                        "leaves the others in place",
                                        context.all_findings, fmt::join(context.all_ranks, ", "),
                                        FormatNs(context.all_estimated_step_ns), FormatNs(context.all_step_ns),
                                        100 * context.all_saving_ns / context.all_step_ns),
                            "  ", "  ");
  }
  return out;
}

}  // namespace rankscope
