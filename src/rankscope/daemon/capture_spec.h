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

// What a request may ask for. Every number must be a JSON integer (never a float: 1e20 does
// not fit any field) inside these bounds.
inline constexpr int32_t kMaxTraceSteps = 1000;
inline constexpr int64_t kMaxTraceDurationMs = 600'000;
inline constexpr int64_t kMaxStep = int64_t{1} << 53;
inline constexpr int32_t kMaxRoundup = 1'000'000;
inline constexpr int32_t kMaxTraceTimeoutS = 86'400;
inline constexpr int32_t kMaxSnapshotTimeoutS = 600;
inline constexpr int32_t kMaxRank = 1 << 24;
inline constexpr size_t kMaxSelectedRanks = 65'536;

struct SnapshotSpec {
  std::string snapshot_id;
  Selection selection;
  int32_t timeout_s = 20;
  // Set by the daemon that detected a hang of the job and asks its peers to snapshot their
  // ranks too (hang_watch.h): why. The peer then does not take one of its own.
  std::string hang_reason;
  // With hang_reason: the uid of the job's user on the asking host. The peer snapshots only that
  // user's processes (a job name is only unique per user), so that a hung job never has another
  // user's ranks of the same name gathered into its directory. -1: not given.
  int64_t as_uid = -1;
};
inline constexpr size_t kMaxHangReason = 300;

// A name used as one path component: [A-Za-z0-9._-], not "." or "..", 1..128 bytes.
bool IsSafeName(std::string_view name);
// Maps anything (a SLURM id, a uuid, a user string) onto a safe name.
std::string SanitizeName(std::string_view name);
// "20261121-173419-ab12": sortable, unique enough per request.
std::string NewCaptureId();

// Reads an integer field of a JSON object: absent -> `fallback`; a float, a string, or a value
// outside [lo, hi] -> InvalidArgument naming the field.
StatusOr<int64_t> IntegerField(const nlohmann::json& j, const char* key, int64_t fallback, int64_t lo, int64_t hi);
StatusOr<bool> BoolField(const nlohmann::json& j, const char* key, bool fallback);
// A string field of at most `max_bytes` bytes.
StatusOr<std::string> StringField(const nlohmann::json& j, const char* key, size_t max_bytes);

nlohmann::json ToJson(const Selection& s);
nlohmann::json ToJson(const TraceSpec& s);
nlohmann::json ToJson(const SnapshotSpec& s);
StatusOr<TraceSpec> TraceSpecFromJson(const nlohmann::json& j);
StatusOr<SnapshotSpec> SnapshotSpecFromJson(const nlohmann::json& j);

}  // namespace rankscope::daemon
