#include "rankscope/report/parallel_finding_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rankscope/report/finding_text.h"
#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

std::string D(double ns) { return FormatNs(ns); }
std::string Per(const Finding& f) { return "/" + f.cost.unit; }
std::string Ranks(const std::vector<int64_t>& r) {
  return fmt::format("{} {}", r.size() == 1 ? "rank" : "ranks", fmt::join(r, ", "));
}

// Where the slowest rank of each step spends its excess says what to balance: the model's work
// (forward, backward: more tokens on that rank), its input, or code outside the model that runs
// on one rank in each step (a hook, a periodic task that rotates across the ranks).
std::string ImbalanceNextSentence(const Finding& f) {
  const Evidence* shapes = f.FindEvidence(EvidenceKind::kSameWork);
  if (shapes && shapes->detail == "no_shapes") {
    return "record with record_shapes=True (rankscope then compares each step's work across the ranks) and check "
           "whether the ranks share CPUs (more ranks than cores; rankscope's collector records their wait for a "
           "CPU): if the input's size varies per step, balance it (bucket or pack samples by length); if the work "
           "is the same, the host delays a different rank in each step";
  }
  const Evidence* e = f.FindEvidence(EvidenceKind::kStepImbalance);
  const std::string phase = e ? e->detail : "";
  if (phase == "data_loading") {
    return "balance the input per step: the slowest rank of each step waits for its batch; look at the "
           "DataLoader of the ranks (workers, prefetch, the shards they read) and the samples that take longest";
  }
  if (phase == "optimizer" || phase == "other") {
    return fmt::format("find the code in {} that runs on one rank per step (a hook, logging, a periodic task "
                       "that takes turns across the ranks): `rankscope analyze --rank R` for the Python paths of the "
                       "slowest ranks",
                       PhaseWords(phase));
  }
  return "balance the work per step across data-parallel ranks: bucket or pack samples by length, or "
         "sort/shard batches by tokens instead of by samples";
}

}  // namespace

bool IsParallelFinding(FindingKind kind) {
  return kind == FindingKind::kSlowStage || kind == FindingKind::kSlowWorker || kind == FindingKind::kPerStepImbalance;
}

std::string ParallelFindingTitle(const Finding& f) {
  switch (f.kind) {
    case FindingKind::kSlowStage: {
      const Evidence* e = f.FindEvidence(EvidenceKind::kStage);
      for (const Evidence& s : f.evidence) {
        if (s.kind == EvidenceKind::kStage && s.detail == "slow") e = &s;
      }
      return fmt::format("pipeline stage {} ({}) is slower than the other stages: {}{} of its own work vs {} "
                         "(a partition imbalance)",
                         f.subject, Ranks(f.ranks), D(e ? e->Get("local_ns") : 0), Per(f),
                         D(e ? e->Get("other_stages_local_ns") : 0));
    }
    case FindingKind::kSlowWorker: {
      const Evidence* e = f.FindEvidence(EvidenceKind::kLocalTime);
      const std::string steps = e && e->Has("steps") ? fmt::format(", slower in {:.0f} of {:.0f} steps",
                                                                    e->Get("slower_steps"), e->Get("steps"))
                                                      : "";
      return fmt::format("{} is slower than the other ranks of pipeline stage {}: {}{} of its own work vs {}{}",
                         Ranks(f.ranks), f.subject, D(e ? e->Get("local_ns") : 0), Per(f),
                         D(e ? e->Get("median_local_ns") : 0), steps);
    }
    case FindingKind::kPerStepImbalance: {
      const Evidence* e = f.FindEvidence(EvidenceKind::kStepImbalance);
      if (!e) return "per-step imbalance";
      return fmt::format("per-step imbalance among the data-parallel ranks of stage {} ({}): the slowest rank changes "
                         "from step to step ({:.0f} different) and is {:.2f}-{:.2f}x the step's median in {:.0f} of "
                         "{:.0f} steps, while the ranks' medians are within {:.1f}%",
                         f.subject, Ranks(f.ranks), e->Get("distinct_slowest"), e->Get("min_ratio"),
                         e->Get("max_ratio"), e->Get("imbalanced_steps"), e->Get("steps"),
                         100 * e->Get("rank_median_spread_share"));
    }
    default: return "";
  }
}

std::string ParallelNextSentence(const Finding& f) {
  switch (f.kind) {
    case FindingKind::kSlowStage:
      return fmt::format("move layers off stage {} (rebalance the pipeline partition) or give it fewer micro-batch "
                         "computations; `rankscope analyze --rank {}` shows its operators",
                         f.subject, f.ranks.empty() ? 0 : f.ranks.front());
    case FindingKind::kSlowWorker:
      return fmt::format("compare {} with another rank of stage {} (`rankscope analyze --rank {}`): operators, "
                         "clocks, what else runs on its host",
                         Ranks(f.ranks), f.subject, f.ranks.empty() ? 0 : f.ranks.front());
    case FindingKind::kPerStepImbalance: return ImbalanceNextSentence(f);
    default: return "";
  }
}

std::string ParallelEvidenceSentence(const Evidence& e, const Finding& f) {
  if (e.kind == EvidenceKind::kStage) {
    std::string s = fmt::format("stage {} ({}): own work {}{}, communication wait {}", e.subject, Ranks(e.ranks),
                                D(e.Get("local_ns")), Per(f), D(e.Get("comm_wait_ns")));
    if (e.Has("bubble_ns")) s += fmt::format("; it waits {} more than the slow stage", D(e.Get("bubble_ns")));
    if (e.detail == "slow" && e.Get("microbatches") > 0) {
      s += fmt::format(" ({:.0f} stages, ~{:.0f} micro-batches per step)", e.Get("stages"), e.Get("microbatches"));
    }
    return s;
  }
  std::string seq;
  for (int64_t r : e.ranks) seq += (seq.empty() ? "" : " ") + std::to_string(r);
  std::string where;
  if (!e.detail.empty()) {
    where = fmt::format("; its excess is mostly in {} (+{}{} over the other ranks' median there)",
                        PhaseWords(e.detail), D(e.Get("excess_" + e.detail + "_ns")), Per(f));
  }
  return fmt::format("slowest rank per step: {}; on average {}{} above the step's median{}", seq,
                     D(e.Get("mean_excess_ns")), Per(f), where);
}

}  // namespace rankscope
