#include "rankscope/report/compare_report_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

using namespace compare;

std::string Signed(double ns) { return (ns > 0 ? "+" : ns < 0 ? "-" : "") + FormatNs(std::llround(std::fabs(ns))); }
std::string Ms(double ns) { return FormatNs(std::llround(ns)); }
std::string Percent(double delta, double base) {
  return base > 0 ? fmt::format("{:+.1f}%", 100.0 * delta / base) : "";
}

std::string Inputs(const std::vector<std::string>& inputs) {
  std::string out;
  for (const std::string& s : inputs) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string RankRange(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : fmt::format("{}", ranks[i]));
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

void Differences(const RankComparison& r, const CompareTextOptions& opt, const Style& st, std::string* out) {
  *out += st.Bold("What changed, per step") + st.Dim("  ranked by cost; the costs add up to the step delta") + "\n";
  size_t shown = 0;
  // Differences beyond noise first; when fewer than three are, the largest within noise follow
  // (marked), so that the table never hides what little there is to see.
  std::vector<const Difference*> rows;
  for (const Difference& d : r.differences) {
    if (d.beyond_noise && rows.size() < opt.top) rows.push_back(&d);
  }
  const size_t beyond = rows.size();
  for (const Difference& d : r.differences) {
    if (!d.beyond_noise && rows.size() < std::max<size_t>(beyond, 3) && rows.size() < opt.top) rows.push_back(&d);
  }
  for (const Difference* dp : rows) {
    const Difference& d = *dp;
    ++shown;
    const double share = r.delta_ns != 0 ? d.delta_ns() / r.delta_ns : 0;
    std::string line = fmt::format("  {:>2}  {:>10}  {:>6}  {}{}", shown, Signed(d.delta_ns()),
                                   r.delta_ns != 0 ? FormatShare(share) : "", DescribeDifference(d),
                                   d.beyond_noise ? "" : "  (within noise)");
    *out += (!d.beyond_noise ? st.Dim(line) : d.delta_ns() > 0 ? st.Red(line) : line) + "\n";
    if (!d.beyond_noise) continue;
    std::string where;
    for (size_t k = 0; k < d.parts.size() && k < 3; ++k) {
      const DiffPart& p = d.parts[k];
      if (d.parts.size() == 1 && p.where == d.subject) break;
      if (std::fabs(p.new_ns - p.base_ns) < 0.01 * std::fabs(d.delta_ns())) break;  // parts are by |Δ|
      where += fmt::format("{}{} {}", where.empty() ? "" : "; ", CellName(p.where, 48), Signed(p.new_ns - p.base_ns));
    }
    if (!where.empty()) *out += WrapText("where: " + where, 76, "                        ") + "\n";
    if (!d.phase.empty() && d.cause != Cause::kHostGap && d.cause != Cause::kCommunication) {
      *out += st.Dim(fmt::format("                        mostly in {}; BASE {} -> NEW {} per step", d.phase,
                                 Ms(d.base_ns), Ms(d.new_ns))) + "\n";
    }
  }
  const double rest = r.delta_ns - r.explained_ns;
  // The differences not listed above (the list may already show some within noise), so that
  // the lines add up to the delta.
  double others_ns = 0;
  size_t others = 0, others_beyond = 0;
  for (const Difference& d : r.differences) {
    if (std::find(rows.begin(), rows.end(), &d) != rows.end()) continue;
    others_ns += d.delta_ns();
    ++others;
    if (d.beyond_noise) ++others_beyond;
  }
  if (others > 0) {
    *out += fmt::format("      {:>10}          {} more difference(s), together{}\n", Signed(others_ns), others,
                        others_beyond ? fmt::format(" ({} of them beyond noise)", others_beyond) : " (each within noise)");
  }
  // Differences are per-step means, so they add up to the delta; what is left is the sum of the
  // differences past the report's list (max_differences) and rounding.
  if (std::fabs(r.variation_ns) >= 1000) {
    *out += fmt::format("      {:>10}          differences past the report's list of {}\n", Signed(r.variation_ns),
                        r.differences.size());
  }
  *out += fmt::format("    = {:>10}          the step-time delta (explained {}, unexplained {})\n", Signed(r.delta_ns),
                      Signed(r.explained_ns), Signed(rest));
}

void Overall(const RankComparison& r, const Style& st, std::string* out) {
  *out += "\n" + st.Bold("Overall breakdown, per step") + "\n";
  *out += fmt::format("  {:<40} {:>11} {:>11} {:>11} {:>8}  {:>13}\n", "", "BASE", "NEW", "DIFF", "", "count B -> N");
  std::string group;
  for (const OverallRow& row : r.overall) {
    if (row.group != group && row.key != "step") *out += "\n";
    group = row.group;
    std::string counts;
    if (row.base_count >= 0 && (row.base_count > 0 || row.new_count > 0)) {
      counts = fmt::format("{:.1f} -> {:.1f}", row.base_count, row.new_count);
    }
    const std::string line = fmt::format("  {:<40} {:>11} {:>11} {:>11} {:>8}  {:>13}", row.label, Ms(row.base_ns),
                                         Ms(row.new_ns), Signed(row.delta_ns()), Percent(row.delta_ns(), row.base_ns), counts);
    *out += (row.regression ? st.Red(line) : row.improvement ? st.Yellow(line) : line) + "\n";
  }
}

void Operators(const RankComparison& r, const CompareTextOptions& opt, const Style& st, std::string* out) {
  if (r.operators.empty()) return;
  std::vector<const OperatorRow*> rows;
  for (const OperatorRow& o : r.operators) {  // rows whose children are not shown: they split the step
    if (o.depth >= 2 && !o.expanded) rows.push_back(&o);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const OperatorRow* a, const OperatorRow* b) {
    return std::fabs(a->new_attributed_ns - a->base_attributed_ns) > std::fabs(b->new_attributed_ns - b->base_attributed_ns);
  });
  *out += "\n" + st.Bold("Operators") + st.Dim("  aligned by call order; wall time they cost per step (with their children)") + "\n";
  *out += fmt::format("  {:<44} {:>8} {:>11} {:>11} {:>11}  {}\n", "operator", "status", "BASE", "NEW", "DIFF", "calls B -> N");
  for (size_t k = 0; k < rows.size() && k < opt.top; ++k) {
    const OperatorRow& o = *rows[k];
    *out += fmt::format("  {:<44} {:>8} {:>11} {:>11} {:>11}  {:.0f} -> {:.0f}\n", CellPath(o.path, 44), o.status,
                        Ms(o.base_attributed_ns), Ms(o.new_attributed_ns), Signed(o.new_attributed_ns - o.base_attributed_ns),
                        o.base_count, o.new_count);
    if (!o.base_kernels.empty() || !o.new_kernels.empty()) {
      if (o.base_kernels != o.new_kernels) {
        *out += st.Dim(fmt::format("      kernels  BASE: {}\n               NEW:  {}\n", CellName(o.base_kernels, 80),
                                   CellName(o.new_kernels, 80)));
      }
    }
  }
}

void Modules(const RankComparison& r, const CompareTextOptions& opt, const Style& st, std::string* out) {
  if (r.modules.empty()) return;
  std::vector<const ModuleRow*> rows;
  for (const ModuleRow& m : r.modules) rows.push_back(&m);
  std::stable_sort(rows.begin(), rows.end(), [](const ModuleRow* a, const ModuleRow* b) {
    return std::fabs(a->new_attributed_ns - a->base_attributed_ns) > std::fabs(b->new_attributed_ns - b->base_attributed_ns);
  });
  *out += "\n" + st.Bold("Modules") + st.Dim("  nn.Module from the Python stacks; forward + backward wall time per step") + "\n";
  *out += fmt::format("  {:<44} {:>8} {:>11} {:>11} {:>11}\n", "module", "status", "BASE", "NEW", "DIFF");
  for (size_t k = 0; k < rows.size() && k < opt.top; ++k) {
    const ModuleRow& m = *rows[k];
    *out += fmt::format("  {:<44} {:>8} {:>11} {:>11} {:>11}\n", CellPath(m.path, 44), m.status, Ms(m.base_attributed_ns),
                        Ms(m.new_attributed_ns), Signed(m.new_attributed_ns - m.base_attributed_ns));
    if (!m.source.empty()) *out += st.Dim("      " + CellPath(m.source, 90)) + "\n";
  }
}

void KernelClasses(const RankComparison& r, const Style& st, std::string* out) {
  if (r.kernel_classes.empty()) return;
  *out += "\n" + st.Bold("GPU kernels by class") + st.Dim("  per step; the heaviest kernels of each run side by side") + "\n";
  *out += fmt::format("  {:<24} {:>11} {:>11} {:>11} {:>17}\n", "class", "BASE", "NEW", "DIFF", "kernels B -> N");
  for (const KernelClassRow& k : r.kernel_classes) {
    *out += fmt::format("  {:<24} {:>11} {:>11} {:>11} {:>17}\n", k.label, Ms(k.base_ns), Ms(k.new_ns),
                        Signed(k.new_ns - k.base_ns), fmt::format("{:.0f} -> {:.0f}", k.base_count, k.new_count));
    if (k.base_top != k.new_top) {
      *out += st.Dim(fmt::format("      BASE: {}\n      NEW:  {}\n", CellName(k.base_top, 90), CellName(k.new_top, 90)));
    }
  }
}

void Communication(const RankComparison& r, const CompareTextOptions& opt, const Style& st, std::string* out) {
  if (r.communication.empty()) return;
  *out += "\n" + st.Bold("Communication") + st.Dim("  per collective, dtype and message size; per step") + "\n";
  *out += fmt::format("  {:<34} {:>9} {:>11} {:>11} {:>11} {:>12}\n", "collective", "count B>N", "time DIFF",
                      "exposed B", "exposed N", "busbw B -> N");
  for (size_t k = 0; k < r.communication.size() && k < opt.top; ++k) {
    const CommDiffRow& c = r.communication[k];
    *out += fmt::format("  {:<34} {:>9} {:>11} {:>11} {:>11} {:>12}\n",
                        CellName(fmt::format("{} {} {}", c.op, c.dtype, c.size), 34),
                        fmt::format("{:.0f}>{:.0f}", c.base_count, c.new_count), Signed(c.new_ns - c.base_ns),
                        Ms(c.base_exposed_ns), Ms(c.new_exposed_ns),
                        fmt::format("{:.1f}>{:.1f}", c.base_busbw_gbps, c.new_busbw_gbps));
  }
}

void Memory(const RankComparison& r, const CompareTextOptions& opt, const Style& st, std::string* out) {
  if (!r.has_memory) return;
  *out += "\n" + st.Bold("Memory") + st.Dim("  allocations inside operators, per step; peak = max allocated seen inside") + "\n";
  for (const MemoryPeakRow& p : r.memory_peaks) {
    *out += fmt::format("  peak allocated {:<8} BASE {:>10}  NEW {:>10}\n", p.device,
                        FormatByteCount(static_cast<int64_t>(p.base_peak)), FormatByteCount(static_cast<int64_t>(p.new_peak)));
  }
  *out += fmt::format("  {:<44} {:>12} {:>12} {:>12} {:>12}\n", "operator", "bytes BASE", "bytes NEW", "peak BASE", "peak NEW");
  for (size_t k = 0; k < r.memory.size() && k < opt.top; ++k) {
    const MemoryRow& m = r.memory[k];
    *out += fmt::format("  {:<44} {:>12} {:>12} {:>12} {:>12}\n", CellName(m.name, 44),
                        FormatByteCount(std::llround(m.base_bytes)), FormatByteCount(std::llround(m.new_bytes)),
                        FormatByteCount(static_cast<int64_t>(m.base_peak)), FormatByteCount(static_cast<int64_t>(m.new_peak)));
  }
}

void RankHeader(const RankComparison& r, const Style& st, std::string* out) {
  const std::string rank = r.base_rank == r.new_rank ? fmt::format("rank {}", r.new_rank)
                                                     : fmt::format("BASE rank {} / NEW rank {}", r.base_rank, r.new_rank);
  *out += st.Bold(fmt::format("Step time ({})", rank)) +
          fmt::format("  BASE {} ({} steps, sd {})   NEW {} ({} steps, sd {})\n", Ms(r.base_steps.mean_ns),
                      r.base_steps.kept, Ms(r.base_steps.sd_ns), Ms(r.new_steps.mean_ns), r.new_steps.kept,
                      Ms(r.new_steps.sd_ns));
  const std::string verdict = r.beyond_noise ? "beyond noise" : "within noise: no difference beyond noise";
  const std::string delta = fmt::format("  delta {} ({})   noise band {}: {}", Signed(r.delta_ns),
                                        Percent(r.delta_ns, r.base_steps.mean_ns), Ms(r.noise_ns), verdict);
  *out += (r.beyond_noise && r.delta_ns > 0 ? st.Red(delta) : delta) + "\n";
  for (const Observation& o : r.observations) {
    if (o.kind == ObservationKind::kNoDifference || o.kind == ObservationKind::kNoGpu) continue;
    *out += WrapText("note: " + DescribeObservation(o), 98, "  ");
  }
  *out += "\n";
}

void Job(const JobComparison& job, const CompareTextOptions& opt, const Style& st, std::string* out) {
  if (job.base_ranks.size() < 2 && job.new_ranks.size() < 2) return;
  *out += st.Bold("Job") + fmt::format("  BASE {} rank(s) ({})   NEW {} rank(s) ({})\n", job.base_ranks.size(),
                                      RankRange(job.base_ranks), job.new_ranks.size(), RankRange(job.new_ranks));
  *out += fmt::format("  median rank step   BASE {:>10}   NEW {:>10}   {}\n", Ms(job.base_median_step_ns),
                      Ms(job.new_median_step_ns), Signed(job.new_median_step_ns - job.base_median_step_ns));
  *out += fmt::format("  slowest rank       BASE {:>10} (rank {})   NEW {:>10} (rank {})\n", Ms(job.base_slowest_step_ns),
                      job.base_slowest_rank, Ms(job.new_slowest_step_ns), job.new_slowest_rank);
  if (job.base_comm_wait_ns >= 0) {
    *out += fmt::format("  waiting for peers  BASE {:>10}   NEW {:>10}   (median rank, per step)\n", Ms(job.base_comm_wait_ns),
                        Ms(job.new_comm_wait_ns));
  }
  *out += fmt::format("  ranks that changed beyond their noise band: {} of {}{}\n", job.changed_ranks.size(), job.ranks.size(),
                      job.changed_ranks.empty() ? "" : " (" + RankRange(job.changed_ranks) + ")");
  *out += fmt::format("\n  {:>5} {:>11} {:>11} {:>11} {:>10}  {}\n", "rank", "BASE", "NEW", "DIFF", "noise", "largest difference");
  for (size_t k = 0; k < job.ranks.size() && k < std::max<size_t>(opt.top, 16); ++k) {
    const RankComparison& r = job.ranks[k];
    std::string top;
    if (!r.differences.empty() && r.differences.front().beyond_noise) top = DescribeDifference(r.differences.front());
    const std::string line = fmt::format("  {:>5} {:>11} {:>11} {:>11} {:>10}  {}", r.new_rank, Ms(r.base_steps.mean_ns),
                                         Ms(r.new_steps.mean_ns), Signed(r.delta_ns), Ms(r.noise_ns), CellName(top, 44));
    *out += (r.beyond_noise && r.delta_ns > 0 ? st.Red(line) : line) + "\n";
  }
  if (job.ranks.size() > std::max<size_t>(opt.top, 16)) *out += fmt::format("  ... {} more ranks\n", job.ranks.size() - std::max<size_t>(opt.top, 16));
  *out += "\n";
}

}  // namespace

std::string DescribeDifference(const Difference& d) {
  const double delta = std::llround(d.delta_ns());  // as the reports print it
  const std::string direction = delta > 0 ? "slower" : delta < 0 ? "faster" : "unchanged";
  switch (d.cause) {
    case Cause::kAdded:
      return fmt::format("added {} ({:.0f} per step)", d.subject, d.new_count);
    case Cause::kRemoved:
      return fmt::format("removed {} ({:.0f} per step)", d.subject, d.base_count);
    case Cause::kShapes:
      return d.before.empty() ? "input shapes changed" : fmt::format("input shapes changed: {} -> {}", d.before, d.after);
    case Cause::kDtypes:
      return d.before.empty() ? "input types changed (precision)"
                              : fmt::format("input types changed (precision): {} -> {}", d.before, d.after);
    case Cause::kSameWork:
      return fmt::format("{} {}: same work, {}", d.subject_kind, d.subject, direction);
    case Cause::kManySmall:
      return fmt::format("many small differences: {}, together {}", d.subject, direction);
    case Cause::kCommunication:
      return fmt::format("communication ({}): exposed time and collective calls", d.subject);
    case Cause::kHostGap:
      return fmt::format("host time outside operators in {}", d.subject);
    case Cause::kUnlinkedGpu:
      return fmt::format("GPU {} without a launching operator", d.subject);
  }
  return d.subject;
}

std::string DescribeObservation(const Observation& o) {
  switch (o.kind) {
    case ObservationKind::kGpuChangedStepDidNot:
      return fmt::format(
          "GPU busy time changed by {} but the step did not ({}): the step is host-bound (the GPU is idle {} of NEW's "
          "step), so GPU-side changes do not reach the step time",
          Signed(o.value), Signed(o.reference), FormatShare(o.extra));
    case ObservationKind::kStepChangedGpuDidNot:
      return fmt::format("the step changed by {} but GPU busy time did not ({}): the change is on the host side",
                         Signed(o.value), Signed(o.reference));
    case ObservationKind::kNoDifference:
      return fmt::format("the step-time difference {} is within the noise band {}: no difference beyond noise",
                         Signed(o.value), Ms(o.reference));
    case ObservationKind::kDifferentHardware:
      if (o.value > 0) {
        return fmt::format(
            "different GPU vendors (BASE: {}; NEW: {}): their kernels come from different libraries (rocBLAS/Tensile, "
            "hipBLASLt, MIOpen against cuBLAS, CUTLASS, cuDNN) and never match by name; compare operators, modules "
            "and kernel classes (the kernel sets side by side)",
            o.base_text, o.new_text);
      }
      return fmt::format(
          "different hardware (BASE: {}; NEW: {}): kernel names are not expected to match; compare operators, "
          "modules and kernel classes",
          o.base_text, o.new_text);
    case ObservationKind::kFewOperatorsAligned:
      return fmt::format(
          "only {} of BASE's operator time aligns with NEW's operators: the runs look like different models or "
          "code; operator differences are mostly added / removed",
          FormatShare(o.value));
    case ObservationKind::kAlignmentApproximate:
      return "some operator sequences differ too much for an exact alignment: paired by occurrence instead";
    case ObservationKind::kNoGpu:
      return "CPU-only traces: no GPU breakdown";
    case ObservationKind::kNoStacks:
      return "only one run has Python stacks (with_stack=True): no module comparison for the other";
    case ObservationKind::kNoShapes:
      return "--use-input-shapes: a run has no input shapes (record_shapes=True), so operators align on names only there";
  }
  return "";
}

std::string RenderCompareReport(const JobComparison& job, const CompareTextOptions& opt) {
  const Style st(opt.color);
  std::string out;
  out += st.Bold("rankscope compare") + fmt::format("  BASE {}  ->  NEW {}\n", Inputs(job.base_inputs), Inputs(job.new_inputs));
  if (!job.baseline_note.empty()) out += st.Dim("  " + job.baseline_note) + "\n";
  out += "\n";
  Job(job, opt, st, &out);
  for (const RankComparison& r : job.ranks) {
    if (!r.detailed) continue;
    if (job.ranks.size() > 1) {
      out += st.Bold(fmt::format("== rank {}{} ==", r.new_rank,
                                 r.new_rank == job.median_rank && r.new_rank == job.new_slowest_rank ? " (median and slowest)"
                                 : r.new_rank == job.median_rank                                     ? " (median rank)"
                                 : r.new_rank == job.new_slowest_rank ? " (NEW's slowest rank)" : "")) + "\n";
    }
    RankHeader(r, st, &out);
    Differences(r, opt, st, &out);
    Overall(r, st, &out);
    KernelClasses(r, st, &out);
    Communication(r, opt, st, &out);
    Operators(r, opt, st, &out);
    Modules(r, opt, st, &out);
    Memory(r, opt, st, &out);
    out += "\n";
  }
  return out;
}

}  // namespace rankscope
