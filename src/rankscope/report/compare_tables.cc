#include "rankscope/report/compare_tables.h"

#include <fmt/format.h>

#include <cmath>

#include "rankscope/report/compare_report_text.h"
#include "rankscope/report/finding_text.h"

namespace rankscope {
namespace {

using namespace compare;

Column Text(std::string id, std::string title) { return {std::move(id), std::move(title), ColumnUnit::kText}; }
Column Ns(std::string id, std::string title, bool diff = false) {
  return {std::move(id), std::move(title), ColumnUnit::kNs, diff};
}
Column Count(std::string id, std::string title) { return {std::move(id), std::move(title), ColumnUnit::kCount}; }

// BASE / NEW / DIFF columns of one measure.
void Triple(std::vector<Column>* cols, const std::string& id, const std::string& title, ColumnUnit unit = ColumnUnit::kNs) {
  const std::string suffix = unit == ColumnUnit::kNs ? "_ns" : unit == ColumnUnit::kBytes ? "_bytes" : "";
  cols->push_back({"base_" + id + suffix, "BASE " + title, unit});
  cols->push_back({"new_" + id + suffix, "NEW " + title, unit});
  cols->push_back({"diff_" + id + suffix, "DIFF " + title, unit, true});
}
void Pair(std::vector<Column>* cols, const std::string& id, const std::string& title, ColumnUnit unit) {
  const std::string suffix = unit == ColumnUnit::kNs ? "_ns" : unit == ColumnUnit::kBytes ? "_bytes" : "";
  cols->push_back({"base_" + id + suffix, "BASE " + title, unit});
  cols->push_back({"new_" + id + suffix, "NEW " + title, unit});
}

void Put3(std::vector<Cell>* cells, double b, double n) {
  cells->emplace_back(b);
  cells->emplace_back(n);
  cells->emplace_back(n - b);
}
void Put2(std::vector<Cell>* cells, double b, double n) {
  cells->emplace_back(b);
  cells->emplace_back(n);
}
Cell Opt(double v) { return v < 0 ? Cell{} : Cell{v}; }

int8_t Verdict(double delta, double noise) { return delta > noise ? 1 : delta < -noise ? -1 : 0; }

Table Ranks(const JobComparison& job) {
  Table t{"ranks", "Step time per rank (mean over kept steps); DIFF beyond the noise band is highlighted"};
  t.columns = {Count("rank", "rank")};
  Triple(&t.columns, "step", "step");
  t.columns.push_back(Ns("noise_ns", "noise band"));
  t.columns.push_back(Count("base_steps", "BASE steps"));
  t.columns.push_back(Count("new_steps", "NEW steps"));
  t.columns.push_back(Text("largest_difference", "largest difference"));
  for (const RankComparison& r : job.ranks) {
    TableRow row;
    row.cells.emplace_back(static_cast<double>(r.new_rank));
    Put3(&row.cells, r.base_steps.mean_ns, r.new_steps.mean_ns);
    row.cells.emplace_back(r.noise_ns);
    row.cells.emplace_back(static_cast<double>(r.base_steps.kept));
    row.cells.emplace_back(static_cast<double>(r.new_steps.kept));
    row.cells.emplace_back(r.differences.empty() ? std::string() : DescribeDifference(r.differences.front()));
    row.verdict = Verdict(r.delta_ns, r.noise_ns);
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table Differences(const JobComparison& job) {
  Table t{"differences", "What changed, per step, ranked by cost: the differences add up to the step delta"};
  t.columns = {Count("rank", "rank"), Count("position", "#"), Text("cause", "cause"), Text("subject", "subject"),
               Text("subject_kind", "kind"), Text("description", "what changed")};
  Triple(&t.columns, "cost", "per step");
  t.columns.push_back({"share_of_delta", "share of the delta", ColumnUnit::kShare});
  t.columns.push_back(Text("beyond_noise", "beyond noise"));
  t.columns.push_back(Text("phase", "phase"));
  t.columns.push_back(Text("before", "before"));
  t.columns.push_back(Text("after", "after"));
  t.columns.push_back(Text("where", "where (largest parts)"));
  for (const RankComparison& r : job.ranks) {
    size_t k = 0;
    for (const Difference& d : r.differences) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), static_cast<double>(++k), std::string(CauseName(d.cause)),
                   d.subject, d.subject_kind, DescribeDifference(d)};
      Put3(&row.cells, d.base_ns, d.new_ns);
      row.cells.emplace_back(r.delta_ns != 0 ? d.delta_ns() / r.delta_ns : 0.0);
      row.cells.emplace_back(std::string(d.beyond_noise ? "yes" : "no"));
      row.cells.emplace_back(d.phase);
      row.cells.emplace_back(d.before);
      row.cells.emplace_back(d.after);
      std::string where;
      for (const DiffPart& p : d.parts) {
        where += fmt::format("{}{} {:+.3f} ms", where.empty() ? "" : "; ", p.where, (p.new_ns - p.base_ns) / 1e6);
      }
      row.cells.emplace_back(where);
      row.verdict = d.beyond_noise ? (d.delta_ns() > 0 ? 1 : -1) : 0;
      t.rows.push_back(std::move(row));
    }
    // The differences past the report's list (and rounding): with it the rows add up to the
    // delta exactly.
    TableRow rest;
    rest.cells = {static_cast<double>(r.new_rank), Cell{}, std::string("rest"), std::string(),
                  std::string(), std::string("differences past the report's list, and rounding")};
    rest.cells.emplace_back(Cell{});
    rest.cells.emplace_back(Cell{});
    rest.cells.emplace_back(r.variation_ns);
    rest.cells.emplace_back(r.delta_ns != 0 ? r.variation_ns / r.delta_ns : 0.0);
    t.rows.push_back(std::move(rest));
  }
  return t;
}

Table Overall(const JobComparison& job) {
  Table t{"overall", "Overall breakdown per step: both runs and the difference"};
  t.columns = {Count("rank", "rank"), Text("group", "group"), Text("key", "key"), Text("label", "")};
  Triple(&t.columns, "time", "time");
  t.columns.push_back({"diff_share", "DIFF %", ColumnUnit::kShare});
  Pair(&t.columns, "count", "count", ColumnUnit::kCount);
  for (const RankComparison& r : job.ranks) {
    for (const OverallRow& o : r.overall) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), o.group, o.key, o.label};
      Put3(&row.cells, o.base_ns, o.new_ns);
      row.cells.push_back(o.base_ns > 0 ? Cell{o.delta_ns() / o.base_ns} : Cell{});
      row.cells.push_back(Opt(o.base_count));
      row.cells.push_back(Opt(o.new_count));
      row.verdict = o.regression ? 1 : o.improvement ? -1 : 0;
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Operators(const JobComparison& job) {
  Table t{"operators", "Operators aligned by call order (LCS); times per step; wall time = the step time they cost"};
  t.columns = {Count("rank", "rank"), Count("depth", "depth"), Text("name", "operator"), Text("status", "status"),
               Text("module", "module"), Text("phase", "phase")};
  Pair(&t.columns, "calls", "calls", ColumnUnit::kCount);
  Triple(&t.columns, "wall", "wall time");
  Triple(&t.columns, "host", "host time");
  Triple(&t.columns, "device", "GPU time");
  Pair(&t.columns, "shapes", "input shapes", ColumnUnit::kText);
  Pair(&t.columns, "kernels", "kernels", ColumnUnit::kText);
  t.columns.push_back(Text("path", "path"));
  for (const RankComparison& r : job.ranks) {
    for (const OperatorRow& o : r.operators) {
      TableRow row;
      row.depth = static_cast<uint8_t>(std::min<uint32_t>(o.depth, 30));
      row.cells = {static_cast<double>(r.new_rank), static_cast<double>(o.depth), o.name, o.status, o.module, o.phase};
      Put2(&row.cells, o.base_count, o.new_count);
      Put3(&row.cells, o.base_attributed_ns, o.new_attributed_ns);
      Put3(&row.cells, o.base_host_ns, o.new_host_ns);
      Put3(&row.cells, o.base_device_ns, o.new_device_ns);
      row.cells.emplace_back(o.base_shapes);
      row.cells.emplace_back(o.new_shapes);
      row.cells.emplace_back(o.base_kernels);
      row.cells.emplace_back(o.new_kernels);
      row.cells.emplace_back(o.path);
      row.verdict = Verdict(o.new_attributed_ns - o.base_attributed_ns, r.noise_ns);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table OperatorStats(const JobComparison& job) {
  Table t{"operator_stats", "Operators by name over the whole tree; per step"};
  t.columns = {Count("rank", "rank"), Text("name", "operator"), Text("status", "status")};
  Triple(&t.columns, "calls", "calls", ColumnUnit::kCount);
  Triple(&t.columns, "wall", "wall time");
  Triple(&t.columns, "host", "host time (inclusive)");
  Triple(&t.columns, "self", "host self time");
  Triple(&t.columns, "device", "GPU time (launched)");
  for (const RankComparison& r : job.ranks) {
    for (const OperatorStatRow& o : r.operator_stats) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), o.name, o.status};
      Put3(&row.cells, o.base_count, o.new_count);
      Put3(&row.cells, o.base_attributed_ns, o.new_attributed_ns);
      Put3(&row.cells, o.base_host_ns, o.new_host_ns);
      Put3(&row.cells, o.base_self_ns, o.new_self_ns);
      Put3(&row.cells, o.base_device_ns, o.new_device_ns);
      row.verdict = Verdict(o.new_attributed_ns - o.base_attributed_ns, r.noise_ns);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Modules(const JobComparison& job) {
  Table t{"modules", "nn.Module comparison from the Python stacks; per step"};
  t.columns = {Count("rank", "rank"), Count("depth", "depth"), Text("name", "module"), Text("status", "status"),
               Text("source", "source")};
  Pair(&t.columns, "calls", "calls", ColumnUnit::kCount);
  Triple(&t.columns, "wall", "wall time (fwd + bwd)");
  Triple(&t.columns, "host", "forward host time");
  Triple(&t.columns, "host_self", "forward host self time");
  Triple(&t.columns, "device", "forward GPU time");
  Triple(&t.columns, "device_self", "forward GPU self time");
  Triple(&t.columns, "backward_host", "backward host time");
  Triple(&t.columns, "backward_device", "backward GPU time");
  t.columns.push_back(Text("top_operators", "operators that changed most"));
  t.columns.push_back(Text("path", "path"));
  for (const RankComparison& r : job.ranks) {
    for (const ModuleRow& m : r.modules) {
      TableRow row;
      row.depth = static_cast<uint8_t>(std::min<uint32_t>(m.depth, 30));
      row.cells = {static_cast<double>(r.new_rank), static_cast<double>(m.depth), m.name, m.status, m.source};
      Put2(&row.cells, m.base_count, m.new_count);
      Put3(&row.cells, m.base_attributed_ns, m.new_attributed_ns);
      Put3(&row.cells, m.base_host_ns, m.new_host_ns);
      Put3(&row.cells, m.base_host_self_ns, m.new_host_self_ns);
      Put3(&row.cells, m.base_device_ns, m.new_device_ns);
      Put3(&row.cells, m.base_device_self_ns, m.new_device_self_ns);
      Put3(&row.cells, m.base_backward_host_ns, m.new_backward_host_ns);
      Put3(&row.cells, m.base_backward_device_ns, m.new_backward_device_ns);
      row.cells.emplace_back(fmt::format("{}", fmt::join(m.top_operators, "; ")));
      row.cells.emplace_back(m.path);
      row.verdict = Verdict(m.new_attributed_ns - m.base_attributed_ns, r.noise_ns);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Kernels(const JobComparison& job) {
  Table t{"kernels", "GPU kernels by name; per step"};
  t.columns = {Count("rank", "rank"), Text("name", "kernel"), Text("class", "class"), Text("status", "status")};
  Triple(&t.columns, "count", "count", ColumnUnit::kCount);
  Triple(&t.columns, "time", "time");
  for (const RankComparison& r : job.ranks) {
    for (const KernelDiffRow& k : r.kernels) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), k.name, k.kernel_class, k.status};
      Put3(&row.cells, k.base_count, k.new_count);
      Put3(&row.cells, k.base_ns, k.new_ns);
      row.verdict = Verdict(k.new_ns - k.base_ns, r.noise_ns);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table KernelClasses(const JobComparison& job) {
  Table t{"kernel_classes", "GPU work by kernel class; the heaviest kernels of each run side by side (hardware may differ)"};
  t.columns = {Count("rank", "rank"), Text("class", "class"), Text("label", "")};
  Triple(&t.columns, "count", "count", ColumnUnit::kCount);
  Triple(&t.columns, "time", "time");
  Pair(&t.columns, "kernels", "distinct kernels", ColumnUnit::kCount);
  Pair(&t.columns, "top", "heaviest kernels", ColumnUnit::kText);
  for (const RankComparison& r : job.ranks) {
    for (const KernelClassRow& k : r.kernel_classes) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), k.kernel_class, k.label};
      Put3(&row.cells, k.base_count, k.new_count);
      Put3(&row.cells, k.base_ns, k.new_ns);
      Put2(&row.cells, k.base_names, k.new_names);
      row.cells.emplace_back(k.base_top);
      row.cells.emplace_back(k.new_top);
      row.verdict = Verdict(k.new_ns - k.base_ns, r.noise_ns);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Communication(const JobComparison& job) {
  Table t{"communication", "Collectives per op, dtype and message size; per step"};
  t.columns = {Count("rank", "rank"), Text("op", "collective"), Text("dtype", "dtype"), Text("size", "message size"),
               Text("where", "on")};
  Pair(&t.columns, "algorithm", "algorithm", ColumnUnit::kText);
  Triple(&t.columns, "count", "count", ColumnUnit::kCount);
  Triple(&t.columns, "time", "time");
  Triple(&t.columns, "exposed", "exposed time");
  Pair(&t.columns, "bytes", "bytes", ColumnUnit::kBytes);
  Pair(&t.columns, "algbw", "algbw (GB/s)", ColumnUnit::kRate);
  Pair(&t.columns, "busbw", "busbw (GB/s)", ColumnUnit::kRate);
  for (const RankComparison& r : job.ranks) {
    for (const CommDiffRow& c : r.communication) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), c.op, c.dtype, c.size, std::string(c.on_gpu ? "GPU" : "CPU")};
      row.cells.emplace_back(c.base_algorithm);
      row.cells.emplace_back(c.new_algorithm);
      Put3(&row.cells, c.base_count, c.new_count);
      Put3(&row.cells, c.base_ns, c.new_ns);
      Put3(&row.cells, c.base_exposed_ns, c.new_exposed_ns);
      Put2(&row.cells, c.base_bytes, c.new_bytes);
      Put2(&row.cells, c.base_algbw_gbps, c.new_algbw_gbps);
      Put2(&row.cells, c.base_busbw_gbps, c.new_busbw_gbps);
      row.verdict = Verdict(c.new_exposed_ns - c.base_exposed_ns, r.noise_ns);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Memory(const JobComparison& job) {
  Table t{"memory", "Memory allocated inside operators (profile_memory=True in both runs); per step"};
  t.columns = {Count("rank", "rank"), Text("name", "operator / device")};
  Triple(&t.columns, "allocs", "allocations", ColumnUnit::kCount);
  Triple(&t.columns, "allocated", "bytes allocated", ColumnUnit::kBytes);
  Triple(&t.columns, "peak", "peak allocated", ColumnUnit::kBytes);
  for (const RankComparison& r : job.ranks) {
    for (const MemoryPeakRow& p : r.memory_peaks) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), "[device " + p.device + "]", Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{},
                   Opt(p.base_peak), Opt(p.new_peak)};
      row.cells.push_back(p.base_peak >= 0 && p.new_peak >= 0 ? Cell{p.new_peak - p.base_peak} : Cell{});
      t.rows.push_back(std::move(row));
    }
    for (const MemoryRow& m : r.memory) {
      TableRow row;
      row.cells = {static_cast<double>(r.new_rank), m.name};
      Put3(&row.cells, m.base_allocs, m.new_allocs);
      Put3(&row.cells, m.base_bytes, m.new_bytes);
      row.cells.push_back(Opt(m.base_peak));
      row.cells.push_back(Opt(m.new_peak));
      row.cells.push_back(m.base_peak >= 0 && m.new_peak >= 0 ? Cell{m.new_peak - m.base_peak} : Cell{});
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Findings(const JobComparison& job) {
  Table t{"findings", "Findings (the shared finding type): one per difference beyond noise"};
  t.columns = {Text("kind", "kind"), Text("severity", "severity"), Text("ranks", "ranks"), Text("cause", "cause"),
               Text("subject", "subject"), Ns("cost_ns", "cost per step"), Text("title", "finding"),
               Text("cost_text", "cost"), Text("next", "next step")};
  for (const Finding& f : job.findings) {
    const FindingWords w = DescribeFinding(f);
    TableRow row;
    row.cells = {std::string(FindingKindId(f.kind)), std::string(SeverityName(f.severity)),
                 fmt::format("{}", fmt::join(f.ranks, " ")), f.subject_kind, f.subject, f.cost.added_ns, w.title,
                 w.cost, w.next};
    row.verdict = f.kind == FindingKind::kCompareRegression ? 1 : -1;
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

std::vector<Table> CompareTables(const JobComparison& job) {
  return {Differences(job), Overall(job),      Operators(job),     OperatorStats(job), Modules(job),  Kernels(job),
          KernelClasses(job), Communication(job), Memory(job),       Ranks(job),         Findings(job)};
}

}  // namespace rankscope
