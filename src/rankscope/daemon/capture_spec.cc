#include "rankscope/daemon/capture_spec.h"

#include <chrono>
#include <ctime>
#include <random>

namespace rankscope::daemon {

bool IsSafeName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return name[0] != '.';  // no hidden names, and never ".." as a prefix
}

std::string SanitizeName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 128)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  while (!out.empty() && out[0] == '.') out[0] = '_';
  return out.empty() ? "job" : out;
}

std::string NewCaptureId() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return fmt::format("{}-{:04x}", stamp, rd() & 0xffff);
}

nlohmann::json ToJson(const Selection& s) { return {{"job", s.job}, {"ranks", s.ranks}}; }

nlohmann::json ToJson(const TraceSpec& s) {
  return {{"trace_id", s.trace_id}, {"selection", ToJson(s.selection)}, {"steps", s.steps},
          {"duration_ms", s.duration_ms}, {"start_step", s.start_step}, {"roundup", s.roundup},
          {"start_unix_ms", s.start_unix_ms}, {"record_shapes", s.record_shapes},
          {"with_stack", s.with_stack}, {"profile_memory", s.profile_memory}, {"baseline", s.baseline},
          {"timeout_s", s.timeout_s}};
}

nlohmann::json ToJson(const SnapshotSpec& s) {
  nlohmann::json j = {{"snapshot_id", s.snapshot_id}, {"selection", ToJson(s.selection)}, {"timeout_s", s.timeout_s}};
  if (!s.hang_reason.empty()) j["hang_reason"] = s.hang_reason;
  if (s.as_uid >= 0) j["as_uid"] = s.as_uid;
  return j;
}

StatusOr<int64_t> IntegerField(const nlohmann::json& j, const char* key, int64_t fallback, int64_t lo, int64_t hi) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  const auto& v = *it;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return InvalidArgument("{} must be an integer in [{}, {}]", key, lo, hi);
    return static_cast<int64_t>(u);
  }
  if (!v.is_number_integer()) return InvalidArgument("{} must be an integer in [{}, {}], not {}", key, lo, hi, v.dump().substr(0, 40));
  const int64_t n = v.get<int64_t>();
  if (n < lo || n > hi) return InvalidArgument("{} must be an integer in [{}, {}], not {}", key, lo, hi, n);
  return n;
}

StatusOr<bool> BoolField(const nlohmann::json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_boolean()) return InvalidArgument("{} must be true or false", key);
  return it->get<bool>();
}

StatusOr<std::string> StringField(const nlohmann::json& j, const char* key, size_t max_bytes) {
  auto it = j.find(key);
  if (it == j.end()) return std::string();
  if (!it->is_string()) return InvalidArgument("{} must be a string", key);
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() > max_bytes) return InvalidArgument("{} is longer than {} bytes", key, max_bytes);
  return s;
}

namespace {

Status ReadSelection(const nlohmann::json& j, Selection* s) {
  auto it = j.find("selection");
  if (it == j.end()) return OkStatus();
  const auto& sel = *it;
  if (!sel.is_object()) return InvalidArgument("selection must be an object");
  RANKSCOPE_ASSIGN_OR_RETURN(s->job, StringField(sel, "job", 128));
  if (!s->job.empty() && !IsSafeName(s->job)) return InvalidArgument("job '{}' is not a safe name", s->job);
  auto ranks = sel.find("ranks");
  if (ranks == sel.end()) return OkStatus();
  if (!ranks->is_array() || ranks->size() > kMaxSelectedRanks) {
    return InvalidArgument("selection.ranks must be an array of at most {} integers", kMaxSelectedRanks);
  }
  for (const auto& r : *ranks) {
    if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > kMaxRank) {
      return InvalidArgument("selection.ranks must hold integers in [0, {}], not {}", kMaxRank, r.dump().substr(0, 40));
    }
    s->ranks.push_back(static_cast<int32_t>(r.get<int64_t>()));
  }
  return OkStatus();
}

StatusOr<std::string> ReadId(const nlohmann::json& j, const char* key) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::string id, StringField(j, key, 128));
  if (id.empty()) id = NewCaptureId();
  if (!IsSafeName(id)) return InvalidArgument("{} '{}' is not a safe name ([A-Za-z0-9._-], no leading dot)", key, id);
  return id;
}

Status ReadTraceFields(const nlohmann::json& j, TraceSpec* s) {
  RANKSCOPE_ASSIGN_OR_RETURN(s->trace_id, ReadId(j, "trace_id"));
  RANKSCOPE_RETURN_IF_ERROR(ReadSelection(j, &s->selection));
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t steps, IntegerField(j, "steps", 0, 0, kMaxTraceSteps));
  RANKSCOPE_ASSIGN_OR_RETURN(s->duration_ms, IntegerField(j, "duration_ms", 0, 0, kMaxTraceDurationMs));
  s->steps = static_cast<int32_t>(steps);
  if ((s->steps > 0) == (s->duration_ms > 0)) return InvalidArgument("give exactly one of steps (> 0) or duration_ms (> 0)");
  RANKSCOPE_ASSIGN_OR_RETURN(s->start_step, IntegerField(j, "start_step", -1, -1, kMaxStep));
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t roundup, IntegerField(j, "roundup", 0, 0, kMaxRoundup));
  s->roundup = static_cast<int32_t>(roundup);
  RANKSCOPE_ASSIGN_OR_RETURN(s->start_unix_ms, IntegerField(j, "start_unix_ms", 0, 0, kMaxStep));
  RANKSCOPE_ASSIGN_OR_RETURN(s->record_shapes, BoolField(j, "record_shapes", false));
  RANKSCOPE_ASSIGN_OR_RETURN(s->with_stack, BoolField(j, "with_stack", false));
  RANKSCOPE_ASSIGN_OR_RETURN(s->profile_memory, BoolField(j, "profile_memory", false));
  RANKSCOPE_ASSIGN_OR_RETURN(s->baseline, BoolField(j, "baseline", false));
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t timeout, IntegerField(j, "timeout_s", 300, 1, kMaxTraceTimeoutS));
  s->timeout_s = static_cast<int32_t>(timeout);
  return OkStatus();
}

}  // namespace

StatusOr<TraceSpec> TraceSpecFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("a trace request is a JSON object");
  TraceSpec s;
  RANKSCOPE_RETURN_IF_ERROR(ReadTraceFields(j, &s));
  return s;
}

StatusOr<SnapshotSpec> SnapshotSpecFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("a snapshot request is a JSON object");
  SnapshotSpec s;
  RANKSCOPE_ASSIGN_OR_RETURN(s.snapshot_id, ReadId(j, "snapshot_id"));
  RANKSCOPE_RETURN_IF_ERROR(ReadSelection(j, &s.selection));
  RANKSCOPE_ASSIGN_OR_RETURN(int64_t timeout, IntegerField(j, "timeout_s", 20, 1, kMaxSnapshotTimeoutS));
  s.timeout_s = static_cast<int32_t>(timeout);
  RANKSCOPE_ASSIGN_OR_RETURN(s.hang_reason, StringField(j, "hang_reason", kMaxHangReason));
  RANKSCOPE_ASSIGN_OR_RETURN(s.as_uid, IntegerField(j, "as_uid", -1, 0, 0xfffffffe));
  return s;
}

}  // namespace rankscope::daemon
