#include "rankscope/daemon/kineto_config.h"

#include <fmt/format.h>

namespace rankscope::daemon {
namespace {

const char* Bool(bool b) { return b ? "true" : "false"; }

// Clients poll every ~5 s (observed with PyTorch 2.13): a start time at least one poll
// interval ahead reaches every rank before it passes.
constexpr int64_t kDefaultStartDelayMs = 6000;

}  // namespace

std::string BuildKinetoConfig(const TraceSpec& spec, const std::string& log_file, int64_t now_unix_ms) {
  std::string c;
  c += fmt::format("ACTIVITIES_LOG_FILE={}\n", log_file);
  if (spec.steps > 0) {
    // Iteration mode (iterations = optimizer steps). Kineto moves a start iteration that lies
    // in the past to the next multiple of the round-up, which is what aligns ranks. The
    // collectors' absolute start step is not used: Kineto counts its iterations itself.
    c += "PROFILE_START_ITERATION=0\n";
    c += fmt::format("PROFILE_START_ITERATION_ROUNDUP={}\n", spec.roundup > 0 ? spec.roundup : 1);
    c += fmt::format("ACTIVITIES_ITERATIONS={}\n", spec.steps);
  } else {
    const int64_t start = spec.start_unix_ms > 0 ? spec.start_unix_ms : now_unix_ms + kDefaultStartDelayMs;
    c += fmt::format("PROFILE_START_TIME={}\n", start);
    c += fmt::format("ACTIVITIES_DURATION_MSECS={}\n", spec.duration_ms);
    // Warm-up happens before the start time; one second is enough for the CPU profiler.
    c += "ACTIVITIES_WARMUP_PERIOD_SECS=1\n";
  }
  c += fmt::format("PROFILE_REPORT_INPUT_SHAPES={}\n", Bool(spec.record_shapes));
  c += fmt::format("PROFILE_WITH_STACK={}\n", Bool(spec.with_stack));
  c += fmt::format("PROFILE_PROFILE_MEMORY={}\n", Bool(spec.profile_memory));
  c += fmt::format("REQUEST_TRACE_ID={}\n", spec.trace_id);
  return c;
}

std::string KinetoOutputPath(const std::string& log_file, int32_t pid) {
  // Same rule as Kineto's Config: before ".pt.trace.json", else before the first ".json".
  size_t at = log_file.find(".pt.trace.json");
  if (at == std::string::npos) at = log_file.find(".json");
  if (at == std::string::npos) return log_file;
  return log_file.substr(0, at) + fmt::format("_{}", pid) + log_file.substr(at);
}

std::string KinetoFallbackPath(int32_t pid) { return fmt::format("/tmp/libkineto_activities_{}.json", pid); }

}  // namespace rankscope::daemon
