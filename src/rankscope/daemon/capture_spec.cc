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
  return {{"snapshot_id", s.snapshot_id}, {"selection", ToJson(s.selection)}, {"timeout_s", s.timeout_s}};
}

namespace {

Status ReadSelection(const nlohmann::json& j, Selection* s) {
  if (!j.contains("selection")) return OkStatus();
  const auto& sel = j["selection"];
  s->job = sel.value("job", "");
  if (!s->job.empty() && !IsSafeName(s->job)) return InvalidArgument("job '{}' is not a safe name", s->job);
  if (sel.contains("ranks")) s->ranks = sel["ranks"].get<std::vector<int32_t>>();
  return OkStatus();
}

}  // namespace

StatusOr<TraceSpec> TraceSpecFromJson(const nlohmann::json& j) {
  // nlohmann throws on type mismatches; nothing may escape the HTTP handler.
  try {
    TraceSpec s;
    s.trace_id = j.value("trace_id", "");
    if (s.trace_id.empty()) s.trace_id = NewCaptureId();
    if (!IsSafeName(s.trace_id)) return InvalidArgument("trace id '{}' is not a safe name", s.trace_id);
    RANKSCOPE_RETURN_IF_ERROR(ReadSelection(j, &s.selection));
    s.steps = j.value("steps", 0);
    s.duration_ms = j.value("duration_ms", int64_t{0});
    if ((s.steps > 0) == (s.duration_ms > 0)) {
      return InvalidArgument("give exactly one of steps (> 0) or duration_ms (> 0)");
    }
    if (s.steps > 1000 || s.duration_ms > 600'000) {
      return OutOfRange("at most 1000 steps or 600000 ms per trace");
    }
    s.start_step = j.value("start_step", int64_t{-1});
    s.roundup = j.value("roundup", 0);
    s.start_unix_ms = j.value("start_unix_ms", int64_t{0});
    s.record_shapes = j.value("record_shapes", false);
    s.with_stack = j.value("with_stack", false);
    s.profile_memory = j.value("profile_memory", false);
    s.baseline = j.value("baseline", false);
    s.timeout_s = j.value("timeout_s", 300);
    if (s.roundup < 0 || s.timeout_s <= 0) return InvalidArgument("roundup must be >= 0 and timeout_s > 0");
    return s;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("bad trace request: {}", e.what());
  }
}

StatusOr<SnapshotSpec> SnapshotSpecFromJson(const nlohmann::json& j) {
  try {
    SnapshotSpec s;
    s.snapshot_id = j.value("snapshot_id", "");
    if (s.snapshot_id.empty()) s.snapshot_id = NewCaptureId();
    if (!IsSafeName(s.snapshot_id)) return InvalidArgument("snapshot id '{}' is not a safe name", s.snapshot_id);
    RANKSCOPE_RETURN_IF_ERROR(ReadSelection(j, &s.selection));
    s.timeout_s = j.value("timeout_s", 20);
    if (s.timeout_s <= 0) return InvalidArgument("timeout_s must be > 0");
    return s;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("bad snapshot request: {}", e.what());
  }
}

}  // namespace rankscope::daemon
