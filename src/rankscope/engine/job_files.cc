#include "rankscope/engine/job_files.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "rankscope/ingest/trace_formats.h"
#include "rankscope/summary/summary_file.h"

namespace rankscope {
namespace fs = std::filesystem;

namespace {

StatusOr<std::vector<std::string>> ListDirectory(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && (HasTraceFileSuffix(name) || summary::IsSummaryPath(name))) {
      found.push_back(it->path().string());
    }
  }
  if (ec) return IoError("{}: cannot list directory: {}", dir, ec.message());
  if (found.empty()) {
    return NotFound("{}: no trace files ({}) or summaries (*{}) in this directory", dir, TraceFilePatterns(),
                    summary::kSummarySuffix);
  }
  std::sort(found.begin(), found.end());
  const std::set<std::string> names(found.begin(), found.end());
  std::erase_if(found, [&](const std::string& f) {
    return summary::IsSummaryPath(f) && names.contains(summary::TracePathOf(f));
  });
  return found;
}

}  // namespace

StatusOr<std::vector<std::string>> DiscoverJobFiles(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    const fs::file_status status = fs::status(input, ec);
    if (ec == std::errc::too_many_symbolic_link_levels) {
      return InvalidArgument("{}: symlink loop (too many levels of symbolic links)", input);
    }
    if (ec && ec != std::errc::no_such_file_or_directory) return IoError("{}: {}", input, ec.message());
    if (ec || !fs::exists(status)) return NotFound("{}: no such file or directory", input);
    if (!fs::is_directory(status)) {
      files.push_back(input);
      continue;
    }
    RANKSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> found, ListDirectory(input));
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

std::string SummaryOptionsKey(const AnalyzeOptions& o) {
  std::string key = fmt::format("window={};steps={};kernel_wait_ns={};function_tables={}", o.window, o.steps,
                                o.kernel_wait_threshold_ns, o.function_tables ? 1 : 0);
  for (const std::string& p : o.comm_patterns) key += fmt::format(";comm_pattern={}:{}", p.size(), p);
  return key;
}

}  // namespace rankscope
