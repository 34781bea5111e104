// Reads what a hang snapshot left on disk: rank<R>.stacks.txt (stacks), rank<R>.flightrecorder
// (the collector's Flight Recorder dump), PyTorch's own JSON dumps (nccl_trace_rank_<R>,
// *fr_trace*_<R>), and the daemon's capture.manifest (which ranks answered, which were taken
// with py-spy, which failed and why). Directories are read one level deep; files are opened
// without following symbolic links and with a size limit, so a directory written by the job's
// user can be read by the daemon (root) safely.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/hang/flight_recorder.h"
#include "rankscope/hang/stack_snapshot.h"

namespace rankscope::hang {

struct FileProblem {
  std::string path;
  std::string message;
};

// What the daemon recorded for one rank of the snapshot (capture.manifest).
struct TargetNote {
  std::string state;   // "done", "failed", ...
  std::string detail;  // why it failed, or how its stack was taken
};

struct SnapshotFiles {
  std::vector<RankStacks> stacks;      // ascending rank
  std::vector<FrDump> dumps;           // ascending rank
  std::map<int64_t, TargetNote> targets;  // from capture.manifest, by rank
  std::string job;                     // the one job they all belong to ("" if none says)
  std::string capture;
  int64_t world_size = -1;             // from the files; -1 when none says
  std::vector<FileProblem> problems;   // files that could not be read (the rest is analysed)
  std::vector<std::string> warnings;   // missing ranks, truncated files, ...
};

// `job`: keep only this job's files ("" = all, which fails when they come from several jobs).
// Fails when nothing usable is found, when the files belong to several jobs, or when two files
// claim the same rank; every other problem is reported in `problems` / `warnings`.
StatusOr<SnapshotFiles> ReadSnapshotFiles(const std::vector<std::string>& paths, const std::string& job = "");

// The rank in a file name: rank<R>.*, pid<P>.* (-1), or a trailing _<R> / -<R> (PyTorch's dumps).
int64_t RankFromFileName(const std::string& name);

}  // namespace rankscope::hang
