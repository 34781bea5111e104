#include "rankscope/ingest/trace_set.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "rankscope/base/parallel_for.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/ingest/trace_formats.h"

namespace rankscope {
namespace fs = std::filesystem;

StatusOr<std::vector<std::string>> DiscoverTraceFiles(const std::vector<std::string>& inputs) {
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
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(input, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec) && HasTraceFileSuffix(it->path().filename().string())) found.push_back(it->path().string());
    }
    if (ec) return IoError("{}: cannot list directory: {}", input, ec.message());
    if (found.empty()) return NotFound("{}: no trace files ({}) in this directory", input, TraceFilePatterns());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

void ForEachTrace(const std::vector<std::string>& files, const ReaderOptions& options, unsigned threads,
                  const std::function<void(size_t, StatusOr<TraceModel>)>& fn) {
  ParallelFor(files.size(), threads, [&](size_t i) { fn(i, ReadTrace(files[i], options)); });
}

}  // namespace rankscope
