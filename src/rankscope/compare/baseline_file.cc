#include "rankscope/compare/baseline_file.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rankscope::compare {
namespace {

// A capture id or job name as the daemon makes them: one path component, no leading dot.
bool IsSafeComponent(std::string_view s) {
  if (s.empty() || s.size() > 200 || s.front() == '.') return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string BaselineFileText(const Baseline& b) {
  return nlohmann::json{{"job", b.job}, {"capture", b.capture}, {"reason", b.reason}, {"kept_unix_ms", b.kept_unix_ms}}
             .dump() +
         "\n";
}

StatusOr<Baseline> ParseBaselineFile(std::string_view text, const std::string& where) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("capture") || !j["capture"].is_string()) {
    return InvalidArgument("{}: not a baseline file (expected a JSON object with \"capture\")", where);
  }
  Baseline b;
  b.job = j.value("job", "");
  b.capture = j["capture"].get<std::string>();
  b.reason = j.value("reason", "");
  b.kept_unix_ms = j.value("kept_unix_ms", int64_t{0});
  if (!IsSafeComponent(b.capture)) return InvalidArgument("{}: the capture id {:?} is not a directory name", where, b.capture);
  return b;
}

StatusOr<Baseline> FindBaseline(const std::string& job, const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path job_dir = job;
  if (!fs::is_directory(job_dir, ec) || !fs::exists(job_dir / kBaselineFileName, ec)) {
    if (!IsSafeComponent(job)) {
      return InvalidArgument("--baseline {}: no such job directory with a baseline (a job name, or <out>/<job>)", job);
    }
    if (out_dir.empty()) {
      return InvalidArgument("--baseline {}: give the daemon's output directory with --out-dir (no local daemon "
                             "answered)", job);
    }
    job_dir = fs::path(out_dir) / job;
  }
  const fs::path file = job_dir / kBaselineFileName;
  std::ifstream in(file);
  if (!in) {
    return InvalidArgument("job {} has no baseline ({} does not exist): keep one with `rankscope trace --baseline` "
                           "while the job is healthy, or run rankscoped with --baseline-first-healthy",
                           job_dir.filename().string(), file.string());
  }
  std::stringstream text;
  text << in.rdbuf();
  RANKSCOPE_ASSIGN_OR_RETURN(Baseline b, ParseBaselineFile(text.str(), file.string()));
  b.capture_dir = (job_dir / b.capture).string();
  if (!fs::is_directory(b.capture_dir, ec)) {
    return InvalidArgument("job {}: its baseline capture {} is gone ({} does not exist; evicted by the disk budget?)",
                           job_dir.filename().string(), b.capture, b.capture_dir);
  }
  if (b.job.empty()) b.job = job_dir.filename().string();
  return b;
}

}  // namespace rankscope::compare
