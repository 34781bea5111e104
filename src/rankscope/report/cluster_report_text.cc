#include "rankscope/report/cluster_report_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "rankscope/report/findings_report_text.h"
#include "rankscope/report/layout_report.h"
#include "rankscope/report/replay_report.h"
#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

constexpr size_t kWidth = 100;
constexpr size_t kAllRanksUpTo = 16;  // larger jobs list the slowest ranks only

std::string D(double ns) { return FormatNs(ns); }

std::string Wrap(std::string_view text, const std::string& indent, const std::string& first_indent) {
  return WrapLines(text, first_indent, indent, kWidth);
}

class Writer {
 public:
  Writer(const ClusterDiagnosis& d, const std::vector<rankscope::Finding>& findings, const TextOptions& o)
      : d_(d), findings_(findings), o_(o), s_(o.color) {}

  std::string Render() {
    Header();
    Layout();
    Findings();
    Replay();
    Ranks();
    Hosts();
    Collectives();
    Clock();
    Functions();
    Utilization();
    return out_;
  }

 private:
  int64_t Rank(uint32_t i) const { return d_.rank_numbers[i]; }
  std::string Per() const { return "/" + d_.unit; }
  void Section(std::string_view title, std::string_view note = "") {
    out_ += "\n" + s_.Bold(std::string(title));
    if (!note.empty()) out_ += "  " + s_.Dim(std::string(note));
    out_ += "\n";
  }

  void Header() {
    std::set<std::string> hosts;
    for (const RankHost& h : d_.hosts) hosts.insert(h.host);
    const bool named = !d_.hosts.empty() && d_.hosts.front().source != HostSource::kNone;
    out_ += "\n" + s_.Bold("Cluster diagnosis") + "\n";
    const std::string rule =
        d_.metrics.size() == 2
            ? fmt::format("abnormal = more than {:.0f}% above the other rank (two ranks have no spread)",
                          100 * d_.options.outlier_margin)
            : fmt::format("abnormal = above the median of the ranks by more than {}x1.4826 MAD and more than {:.0f}%{}",
                          d_.options.outlier_k, 100 * d_.options.outlier_margin,
                          d_.metrics.size() >= 4 ? " (a rank's local time: of its peers)" : "");
    const std::string on_hosts = named ? fmt::format(" on {} host(s) ({})", hosts.size(), HostSources()) : "";
    out_ += Wrap(fmt::format("{} ranks{}; times per {}; {}; findings worth at least {:.1f}% of the step ({})",
                             d_.metrics.size(), on_hosts, d_.unit, rule, 100 * d_.options.min_cost_share,
                             D(d_.min_excess_ns)),
                 "  ", "  ");
  }

  // "hosts from the traces", "hosts from capture manifest and hosts file", ...
  std::string HostSources() const {
    std::set<std::string_view> sources;
    for (const RankHost& h : d_.hosts) {
      if (h.source == HostSource::kTrace) sources.insert("the traces");
      else if (h.source != HostSource::kNone) sources.insert(HostSourceName(h.source));
    }
    std::string out = "hosts from ";
    size_t i = 0;
    for (std::string_view s : sources) out += std::string(i++ ? " and " : "") + std::string(s);
    return out;
  }

  void Layout() {
    const std::string text = LayoutText(d_.layout, d_.parallel, Per());
    if (text.empty()) return;
    Section("Parallel layout", "process groups and pipeline stages; ranks are compared within their stage");
    out_ += text;
  }

  void Replay() {
    const std::string text = ReplayText(d_.replay, Per());
    if (text.empty()) return;
    Section("Replayed what-if", "the profiled steps as a graph: per-rank order, collectives as barriers");
    out_ += text;
  }

  void Findings() {
    FindingsSectionContext context;
    // The anomaly tables below are never non-empty under a headline that says nothing stands out.
    context.none = d_.functions.empty() && d_.phases.empty()
                       ? "no rank, node or function stands out from its peers by the rule above"
                       : "no rank, node or function is slow by the rule above: the abnormal functions below are "
                         "waits in collectives (ranks waiting for their peers) or calls that took longer on a rank "
                         "whose own time per step is not above its peers' (timing noise, or host time its GPU's "
                         "queued work hides), not work that costs the step";
    if (d_.total.saving_ns > 0) {
      context.total_saving_ns = d_.total.saving_ns;
      context.total_step_ns = d_.total.step_ns;
      context.total_estimated_step_ns = d_.total.estimated_step_ns;
    }
    context.all_findings = d_.all_findings.findings;
    context.all_ranks = d_.all_findings.ranks;
    context.all_saving_ns = d_.all_findings.what_if.saving_ns;
    context.all_step_ns = d_.all_findings.what_if.step_ns;
    context.all_estimated_step_ns = d_.all_findings.what_if.estimated_step_ns;
    out_ += RenderFindingsSection(findings_, context, o_);
  }

  std::vector<uint32_t> RanksToList() const {
    std::vector<uint32_t> order(d_.metrics.size());
    std::iota(order.begin(), order.end(), 0u);
    if (order.size() <= kAllRanksUpTo) return order;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return d_.metrics[a].local_ns > d_.metrics[b].local_ns; });
    order.resize(std::min(order.size(), std::max<size_t>(o_.top, 1)));
    return order;
  }

  void Ranks() {
    const std::vector<uint32_t> list = RanksToList();
    Section("Ranks", list.size() < d_.metrics.size()
                         ? fmt::format("the {} with the longest local time of {}", list.size(), d_.metrics.size())
                         : "local = step - communication wait; late = median arrival after the median rank");
    out_ += fmt::format("  {:>5} {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>10}\n", "rank", "host", "step",
                        "comm wait", "local", "compute", "late", "last", "clock");
    for (uint32_t r : list) {
      const RankMetrics& m = d_.metrics[r];
      const RankArrival& a = d_.arrival.ranks[r];
      std::string line = fmt::format("  {:>5} {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>10}", Rank(r),
                                     CellName(d_.hosts[r].host, 14), D(m.step_ns), D(m.comm_wait_ns), D(m.local_ns),
                                     D(m.compute_ns), a.instances ? D(static_cast<double>(a.lateness_ns)) : "-",
                                     a.instances ? fmt::format("{}/{}", a.last_votes, a.instances) : "-",
                                     D(static_cast<double>(d_.clock.offset_of[r])));
      out_ += (d_.slow.slow[r] ? s_.Red(line) : line) + "\n";
    }
  }

  // Large jobs: one line per host (its ranks, their median and slowest step), slowest host first.
  void Hosts() {
    if (d_.metrics.size() <= kAllRanksUpTo || d_.hosts.empty()) return;
    std::map<std::string, std::vector<uint32_t>> by_host;
    for (uint32_t r = 0; r < d_.metrics.size(); ++r) by_host[d_.hosts[r].host].push_back(r);
    if (by_host.size() < 2) return;
    struct HostRow {
      std::string host;
      std::vector<uint32_t> ranks;
      double median_step = 0;
      uint32_t slowest = 0;
    };
    std::vector<HostRow> rows;
    for (auto& [host, ranks] : by_host) {
      HostRow row{host, ranks};
      std::vector<double> steps;
      for (uint32_t r : ranks) steps.push_back(d_.metrics[r].step_ns);
      row.slowest = *std::max_element(ranks.begin(), ranks.end(), [&](uint32_t a, uint32_t b) {
        return d_.metrics[a].step_ns < d_.metrics[b].step_ns;
      });
      std::sort(steps.begin(), steps.end());
      row.median_step = steps[steps.size() / 2];
      rows.push_back(std::move(row));
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const HostRow& a, const HostRow& b) {
      return d_.metrics[a.slowest].step_ns > d_.metrics[b.slowest].step_ns;
    });
    const size_t shown = std::min(rows.size(), std::max<size_t>(o_.top, 1));
    Section("Hosts", fmt::format("{} hosts; the {} with the slowest rank first", rows.size(), shown));
    out_ += fmt::format("  {:<24} {:>6} {:>12} {:>12} {:>8}  {}\n", "host", "ranks", "median step", "slowest step",
                        "rank", "ranks");
    for (size_t i = 0; i < shown; ++i) {
      const HostRow& h = rows[i];
      std::vector<int64_t> numbers;
      for (uint32_t r : h.ranks) numbers.push_back(Rank(r));
      out_ += fmt::format("  {:<24} {:>6} {:>12} {:>12} {:>8}  {}\n", CellName(h.host, 24), h.ranks.size(),
                          D(h.median_step), D(d_.metrics[h.slowest].step_ns), Rank(h.slowest), RankRanges(numbers));
    }
    if (shown < rows.size()) out_ += fmt::format("  ... {} more hosts in the JSON report\n", rows.size() - shown);
  }

  // 0,1,2,3,8 -> "0-3, 8"
  static std::string RankRanges(std::vector<int64_t> n) {
    std::sort(n.begin(), n.end());
    std::string out;
    for (size_t i = 0; i < n.size();) {
      size_t j = i;
      while (j + 1 < n.size() && n[j + 1] == n[j] + 1) ++j;
      out += (out.empty() ? "" : ", ") + (j > i ? fmt::format("{}-{}", n[i], n[j]) : std::to_string(n[i]));
      i = j + 1;
    }
    return out;
  }

  void Collectives() {
    const CollectiveMatching& m = d_.matching;
    if (m.instances.empty()) return;
    uint64_t complete = 0;
    for (const CollectiveGroup& g : m.groups) complete += g.complete;
    Section("Collectives", "matched across ranks; arrival times aligned to the reference clock");
    out_ += Wrap(fmt::format("{} instances matched in {} group(s), {} with every member; arrival skew median {}, max {}",
                             m.instances.size(), m.groups.size(), complete, D(static_cast<double>(d_.arrival.median_skew_ns)),
                             D(static_cast<double>(d_.arrival.max_skew_ns))),
                 "  ", "  ");
    if (m.single > 0) {
      out_ += Wrap(fmt::format("{} instances were seen on one rank only (their peers' traces do not cover them)", m.single),
                   "  ", "  ");
    }
  }

  void Clock() {
    if (d_.clock.domains.size() < 2) return;
    Section("Clock offsets", fmt::format("per host, against {} (estimated from collective end times)",
                                         d_.clock.domains.front().host));
    size_t shown = 0;
    for (const ClockDomain& c : d_.clock.domains) {
      if (shown++ >= std::max<size_t>(o_.top, 1)) {
        out_ += fmt::format("  ... {} more hosts in the JSON report\n", d_.clock.domains.size() - o_.top);
        break;
      }
      out_ += fmt::format("  {:<24} {:>12}  {}\n", CellName(c.host, 24),
                          c.estimated ? D(static_cast<double>(c.offset_ns)) : "unknown",
                          c.estimated ? fmt::format("spread {} over {} samples", D(static_cast<double>(c.spread_ns)), c.samples)
                                      : "no collective links it to the reference");
    }
  }

  void Functions() {
    if (d_.functions.empty()) return;
    Section("Abnormal functions", fmt::format("time{} on a rank vs the median rank", Per()));
    out_ += fmt::format("  {:<12} {:>5} {:>9} {:>9} {:>9}  {}\n", "kind", "rank", "time", "median", "excess", "function");
    for (size_t i = 0; i < d_.functions.size() && i < o_.top; ++i) {
      const FunctionOutlier& f = d_.functions[i];
      const std::string name = f.kind == FunctionKind::kPythonPath ? CellPath(f.name, 44) : CellName(f.name, 44);
      out_ += fmt::format("  {:<12} {:>5} {:>9} {:>9} {:>9}  {}\n", FunctionKindName(f.kind), Rank(f.rank), D(f.value_ns),
                          D(f.median_ns), "+" + D(f.excess_ns), name);
    }
  }

  void Utilization() {
    const UtilizationSummary& u = d_.utilization;
    if (u.ranks == 0) return;
    Section("GPU utilization");
    std::string abnormal;
    for (const UtilizationOutlier& o : u.outliers) {
      abnormal += fmt::format("{}rank {} {:.1f}% ({})", abnormal.empty() ? "" : ", ", Rank(o.rank), 100 * o.value,
                              o.low ? "low" : "high");
    }
    out_ += Wrap(fmt::format("min {:.1f}%, median {:.1f}%, max {:.1f}% over {} ranks; abnormal: {}", 100 * u.min,
                             100 * u.median, 100 * u.max, u.ranks, abnormal.empty() ? "none" : abnormal),
                 "  ", "  ");
  }

  const ClusterDiagnosis& d_;
  const std::vector<rankscope::Finding>& findings_;
  const TextOptions& o_;
  Style s_;
  std::string out_;
};

}  // namespace

std::string RenderClusterReport(const ClusterDiagnosis& d, const std::vector<Finding>& findings,
                                const TextOptions& options) {
  return Writer(d, findings, options).Render();
}

}  // namespace rankscope
