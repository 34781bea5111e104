#include "rankscope/hang/hang_analysis.h"

#include <algorithm>
#include <map>

#include "rankscope/hang/suspects.h"

namespace rankscope::hang {
namespace {

std::vector<RankOverview> Overview(const SnapshotFiles& files) {
  std::map<int64_t, RankOverview> by_rank;
  for (int64_t r = 0; r < files.world_size; ++r) by_rank[r].rank = r;
  for (const RankStacks& s : files.stacks) {
    RankOverview& o = by_rank[s.rank];
    o.rank = s.rank;
    o.host = s.host;
    o.pid = s.pid;
    o.has_stacks = true;
    o.source = s.source;
    o.how = s.source == StackSource::kPySpy
                ? "py-spy from outside" + (s.source_detail.empty() ? std::string() : " (" + s.source_detail + ")")
                : "the collector";
    o.steps_completed = s.steps_completed;
    o.seconds_since_last_step = s.seconds_since_last_step;
  }
  for (const FrDump& d : files.dumps) {
    RankOverview& o = by_rank[d.rank];
    o.rank = d.rank;
    o.has_dump = true;
    if (o.host.empty()) o.host = d.host;
    if (o.pid == 0) o.pid = d.pid;
  }
  for (auto& [rank, o] : by_rank) {
    if (o.has_stacks) continue;
    auto t = files.targets.find(rank);
    o.how = t != files.targets.end() && !t->second.detail.empty() ? "none: " + t->second.detail : "none";
  }
  std::vector<RankOverview> out;
  for (auto& [rank, o] : by_rank) out.push_back(std::move(o));
  return out;
}

// Stalled: not stepping for the threshold (and for several of its steps), a collective open
// that long, or a collector that could not answer (its stack was taken from outside).
void JudgeStall(HangAnalysis* a) {
  const HangOptions& opt = a->options;
  bool any_signal = false;
  for (RankOverview& o : a->ranks) {
    if (o.source == StackSource::kPySpy && o.has_stacks) {
      o.stalled = true;
      any_signal = true;
    }
    if (o.seconds_since_last_step < 0) continue;
    any_signal = true;
    double step_s = 0;
    for (const RankStacks& s : a->files.stacks) {
      if (s.rank == o.rank) step_s = s.step_ms / 1000.0;
    }
    const double threshold = std::max(opt.stalled_after_s, opt.stall_step_factor * step_s);
    if (o.seconds_since_last_step >= threshold) o.stalled = true;
    a->stalled_for_s = std::max(a->stalled_for_s, o.seconds_since_last_step);
  }
  for (const GroupMatch& g : a->fr.groups) {
    for (const MemberState& m : g.states) {
      if (m.pending_s < 0) continue;
      any_signal = true;
      a->stalled_for_s = std::max(a->stalled_for_s, m.pending_s);
      if (m.pending_s >= opt.stalled_after_s) {
        for (RankOverview& o : a->ranks) {
          if (o.rank == m.rank) o.stalled = true;
        }
      }
    }
  }
  // Without any time in the files (hand-made dumps), take the user's word that it hangs.
  a->stalled = !any_signal || std::any_of(a->ranks.begin(), a->ranks.end(), [](const RankOverview& o) { return o.stalled; });
}

}  // namespace

HangAnalysis AnalyzeSnapshot(SnapshotFiles files, const HangOptions& options) {
  HangAnalysis a;
  a.options = options;
  a.files = std::move(files);
  if (a.files.world_size > kMaxWorldSize) a.files.world_size = -1;  // files read by snapshot_files are bounded already
  a.ranks = Overview(a.files);
  a.roles = FoldStacks(a.files.stacks);
  for (const RoleGroups& rg : a.roles) a.verdicts.push_back(JudgeRole(rg));
  a.fr = MatchFlightRecorders(a.files.dumps, a.files.world_size);
  JudgeStall(&a);
  a.findings = FindSuspects(a);
  return a;
}

StatusOr<HangAnalysis> AnalyzeHang(const std::vector<std::string>& paths, const HangOptions& options) {
  RANKSCOPE_ASSIGN_OR_RETURN(SnapshotFiles files, ReadSnapshotFiles(paths, options.job));
  return AnalyzeSnapshot(std::move(files), options);
}

}  // namespace rankscope::hang
