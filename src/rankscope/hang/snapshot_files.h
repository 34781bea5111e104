// Reads what a hang snapshot left on disk: rank<R>.stacks.txt (stacks), rank<R>.worker<K>.stacks.txt
// (a DataLoader worker's, taken by the daemon), rank<R>.flightrecorder (the collector's Flight
// Recorder dump), PyTorch's own dumps, pickled or JSON (nccl_trace_rank_<R>, *fr_trace*_<R>), and
// the daemons' capture.manifest (which ranks answered, which were taken with py-spy, which failed
// and why; capture.<host>.manifest for the ranks gathered from another host). Directories are read one level deep; files are opened
// without following symbolic links and with a size limit, so a directory written by the job's
// user can be read by the daemon (root) safely.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  std::vector<RankStacks> worker_stacks;  // DataLoader workers of a rank (rank<R>.worker<K>.stacks.txt)
  std::vector<FrDump> dumps;           // ascending rank
  std::map<int64_t, TargetNote> targets;  // from capture.manifest (and other hosts' manifests), by rank
  std::string job;                     // the one job they all belong to ("" if none says)
  std::string capture;
  int64_t world_size = -1;             // from the files; -1 when none says (at most kMaxWorldSize)
  std::vector<FileProblem> problems;   // files that could not be read (the rest is analysed)
  std::vector<std::string> warnings;   // missing ranks, truncated files, ...
};

// The largest world size a file may claim. The analysis lists every rank of the world (missing
// ones too): a larger claim, in a file the job's user wrote, would make the daemon allocate for
// ranks that do not exist, so it is ignored (said so) and the ranks seen are used.
inline constexpr int64_t kMaxWorldSize = 1 << 16;

// What a file of a snapshot directory is, from its name.
enum class SnapshotFileKind {
  kStacks,         // rank<R>.stacks.txt (pid<P>.stacks.txt for a process without a rank)
  kWorkerStacks,   // rank<R>.worker<K>.stacks.txt: a DataLoader worker of rank R, taken by the daemon
  kFlightRecorder, // rank<R>.flightrecorder: the collector's dump
  kTorchDump,      // PyTorch's own dumps: nccl_trace_rank_<R>, *fr_trace*<R>
  kManifest,       // capture.manifest, or capture.<host>.manifest (another host's, gathered)
  kOther,
};
SnapshotFileKind ClassifySnapshotFile(std::string_view name);
// The name of a DataLoader worker's stacks: rank<R>.worker<K>.stacks.txt.
std::string WorkerStacksFileName(int64_t rank, int64_t k);

struct SnapshotReadOptions {
  std::string job;  // keep only this job's files ("" = all, which fails when they come from several jobs)
  // Read only regular files owned by this user with a single link, the rest is a problem (the
  // daemon, root, reading a capture directory its user can write to: no hard link to another
  // user's file is read).
  std::optional<uint32_t> owner;
};

// Fails when nothing usable is found, when the files belong to several jobs, or when two files
// claim the same rank; every other problem is reported in `problems` / `warnings`.
StatusOr<SnapshotFiles> ReadSnapshotFiles(const std::vector<std::string>& paths, const std::string& job = "");
// The files of one directory already opened (`dirfd` is not taken over; `shown` names it in
// messages): the daemon reads its capture directories through their descriptors.
StatusOr<SnapshotFiles> ReadSnapshotDirectory(int dirfd, const std::string& shown, const SnapshotReadOptions& options);

// The rank in a file name: rank<R>.*, pid<P>.* (-1), or a trailing _<R> / -<R> (PyTorch's dumps).
int64_t RankFromFileName(const std::string& name);

}  // namespace rankscope::hang
