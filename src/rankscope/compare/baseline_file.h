// A job's baseline: the capture of the job when it was healthy, kept by the node daemon as
// <out>/<job>/baseline (a small JSON object; no .json suffix, so that trace discovery never takes
// it for a trace). `rankscope trace --baseline` keeps one; so does rankscoped with
// --baseline-first-healthy (the job's first complete trace capture). `rankscope compare
// --baseline JOB NEW` and the daemon's comparison of an automatic capture read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rankscope/base/status.h"

namespace rankscope::compare {

inline constexpr const char* kBaselineFileName = "baseline";

struct Baseline {
  std::string job;
  std::string capture;     // capture id: <out>/<job>/<capture> holds the traces
  std::string reason;      // "trace --baseline" or "first healthy capture"
  int64_t kept_unix_ms = 0;
  std::string capture_dir; // resolved path (when read from disk)
};

std::string BaselineFileText(const Baseline& b);
StatusOr<Baseline> ParseBaselineFile(std::string_view text, const std::string& where);

// The baseline of `job`: `job` is a job directory (<out>/<job>, holding `baseline`), or a job
// name under `out_dir`. The error says how to keep one.
StatusOr<Baseline> FindBaseline(const std::string& job, const std::string& out_dir);

}  // namespace rankscope::compare
