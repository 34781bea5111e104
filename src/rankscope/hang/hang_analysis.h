// The hang analysis of one snapshot: what every rank was doing (stacks folded per thread
// role, majority and odd ones out), where the collectives stand (Flight Recorder matched per
// process group), whether the job was stalled at all, and the findings: who is stuck, where,
// and why. docs/hang.md describes every rule and number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/findings/finding.h"
#include "rankscope/hang/fr_matching.h"
#include "rankscope/hang/snapshot_files.h"
#include "rankscope/hang/stack_divergence.h"
#include "rankscope/hang/stack_folding.h"

namespace rankscope::hang {

struct HangOptions {
  std::string job;  // only this job's files ("" = the one job found)
  // A rank counts as stalled when it has not completed a step for this long and for more than
  // stall_step_factor times its recent step time; so does a collective open this long.
  double stalled_after_s = 5.0;
  double stall_step_factor = 3.0;
};

struct RankOverview {
  int64_t rank = -1;
  std::string host;
  int64_t pid = 0;
  bool has_stacks = false, has_dump = false;
  StackSource source = StackSource::kCollector;
  std::string how;                      // how its stack was taken, or why there is none
  int64_t steps_completed = -1;
  double seconds_since_last_step = -1;
  bool stalled = false;
};

struct HangAnalysis {
  HangOptions options;
  SnapshotFiles files;
  std::vector<RankOverview> ranks;      // every rank with a file, or expected from the world size
  std::vector<RoleGroups> roles;
  std::vector<RoleVerdict> verdicts;    // one per role, same order
  FrMatch fr;
  bool stalled = false;                 // some rank or collective has not moved for the threshold
  double stalled_for_s = -1;            // the longest such time seen
  std::vector<Finding> findings;        // ranked: the root cause first
};

// Reads the files (snapshot_files.h) and analyses them.
StatusOr<HangAnalysis> AnalyzeHang(const std::vector<std::string>& paths, const HangOptions& options);
// The analysis of files already read (unit tests build these inline).
HangAnalysis AnalyzeSnapshot(SnapshotFiles files, const HangOptions& options);

}  // namespace rankscope::hang
