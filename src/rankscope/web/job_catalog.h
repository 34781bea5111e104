// The jobs `rankscope serve PATH...` offers, found under the paths it was given (its roots):
//
//   a capture directory (capture.manifest, rank traces, telemetry.<host>.tsv)  -> one job
//     (with `baseline-comparison`, the daemon's comparison with the job's baseline: its Compare view)
//   a stack snapshot (rank<R>.stacks.txt, rank<R>.flightrecorder)  -> one job: its hang analysis
//   the daemon's output directory (captures below it)         -> one job per capture, rescanned
//                                                                 on every listing
//   a directory of trace files (searched recursively)         -> one job per directory that
//                                                                 holds trace files
//   a report JSON (`rankscope analyze --json`)                -> one job, shown as written
//   a comparison JSON (`rankscope compare --json`)            -> one job: its Compare view
//   a trace file                                              -> one job of that file
//
// Confinement: a job is addressed by an opaque id, never by a path, so no request names a
// file. The scan never follows a symbolic link below a root (a link to /etc inside a served
// directory is not listed), stays within kMaxDepth levels and kMaxEntries entries, and every
// file it lists is a regular file whose canonical path lies under its root.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::web {

enum class JobKind { kCapture, kTraces, kReport, kSnapshot, kComparison };
std::string_view JobKindName(JobKind k);  // "capture", "traces", "report", "snapshot", "comparison"

struct JobEntry {
  std::string id;                  // opaque, stable for a path
  JobKind kind = JobKind::kTraces;
  std::string name;                // the path relative to its root (root's own name for the root)
  std::string root;                // the root as given on the command line
  std::string path;                // canonical directory (or report file)
  std::vector<std::string> files;  // trace files (canonical), the report file, or the snapshot's files
  int64_t modified_unix_s = 0;     // newest file
  std::string comparison;          // a capture's baseline-comparison (canonical), or ""
};

class JobCatalog {
 public:
  static constexpr int kMaxDepth = 6;
  static constexpr size_t kMaxEntries = 200'000;
  static constexpr size_t kMaxJobs = 10'000;

  // Fails when a path does not exist or cannot be read.
  static StatusOr<JobCatalog> Open(const std::vector<std::string>& paths);

  // The jobs now (the roots are walked again: a daemon's output directory grows).
  std::vector<JobEntry> Scan(std::vector<std::string>* warnings = nullptr) const;
  // The job with this id, from a fresh scan; nullopt for an id that is not one of them.
  std::optional<JobEntry> Find(const std::string& id) const;

  const std::vector<std::string>& roots() const { return given_; }

 private:
  std::vector<std::string> given_;
  std::vector<std::filesystem::path> roots_;  // canonical
};

// Which rankscope JSON document a file is (its head or tail names the schema), if any.
enum class JsonDocKind { kNone, kReport, kComparison };
JsonDocKind JsonDocKindOf(const std::filesystem::path& file);
// True when the file is a rankscope JSON report (`analyze --json`).
inline bool LooksLikeReport(const std::filesystem::path& file) { return JsonDocKindOf(file) == JsonDocKind::kReport; }

}  // namespace rankscope::web
