// What a user asks the daemons for: the shared vocabulary of the CLI, the HTTP API, the
// collector messages and the Kineto configuration text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

// Which registered processes a capture is for. Empty fields match everything.
struct Selection {
  std::string job;
  std::vector<int32_t> ranks;
};

// A trace request. Exactly one of steps / duration_ms is set.
struct TraceSpec {
  std::string trace_id;          // shared by all hosts of one request, names the directory
  Selection selection;
  int32_t steps = 0;             // record this many whole steps ...
  int64_t duration_ms = 0;       // ... or this long
  // Alignment: every rank starts at the same step (start_step, absolute) or, where the step
  // count is unknown to the daemon (Kineto mode), at the next multiple of roundup; or at the
  // same wall-clock time (start_unix_ms, duration mode).
  int64_t start_step = -1;
  int32_t roundup = 0;
  int64_t start_unix_ms = 0;
  bool record_shapes = false;
  bool with_stack = false;
  bool profile_memory = false;
  int32_t timeout_s = 300;       // give up on a process after this long
  bool baseline = false;         // keep it as the job's baseline once complete (baseline_keeper.h)
};

struct SnapshotSpec {
  std::string snapshot_id;
  Selection selection;
  int32_t timeout_s = 20;
};

// A name used as one path component: [A-Za-z0-9._-], not "." or "..", 1..128 bytes.
bool IsSafeName(std::string_view name);
// Maps anything (a SLURM id, a uuid, a user string) onto a safe name.
std::string SanitizeName(std::string_view name);
// "20261121-173419-ab12": sortable, unique enough per request.
std::string NewCaptureId();

nlohmann::json ToJson(const Selection& s);
nlohmann::json ToJson(const TraceSpec& s);
nlohmann::json ToJson(const SnapshotSpec& s);
StatusOr<TraceSpec> TraceSpecFromJson(const nlohmann::json& j);
StatusOr<SnapshotSpec> SnapshotSpecFromJson(const nlohmann::json& j);

}  // namespace rankscope::daemon
