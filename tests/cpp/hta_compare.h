// Test-only: our analyses computed the way HTA's API calls frame them, for the agreement tests.
//   - rows: HTA's selection (hta_selection.h), with or without the last step;
//   - window: HTA's "kernel_time" span, from the first to the last GPU activity on a stream;
//   - launch statistics: the launch calls HTA covers (cudaLaunchKernel, cudaLaunchKernelExC,
//     runFunction, cudaMemcpyAsync, cudaMemsetAsync).
#pragma once

#include <map>
#include <string>

#include "hta_selection.h"
#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/launch_analysis.h"
#include "rankscope/ingest/read_trace.h"

namespace rankscope::testing {

struct OursAsHta {
  RankSummary summary;
  int64_t span_ns = 0;
  LaunchDelayStats launch;  // restricted to HTA's launch calls
  std::map<std::string, std::pair<uint64_t, int64_t>> sum_by_name;  // kernels + memory ops: count, total
};

inline StatusOr<OursAsHta> AnalyzeAsHta(const std::string& path, bool include_last_step) {
  RANKSCOPE_ASSIGN_OR_RETURN(TraceModel m, ReadTrace(path));
  ApplyHtaRowSelection(&m, include_last_step);
  CommPatterns none;
  ActivityClassifier classifier(m, none);
  const std::vector<GpuActivity> acts = CollectGpuActivities(m, classifier);
  if (acts.empty()) return InvalidArgument("no GPU activity");
  AnalysisOptions opt;
  opt.window.kind = WindowRequest::Kind::kExplicit;
  opt.window.explicit_start = INT64_MAX;
  opt.window.explicit_end = INT64_MIN;
  for (const GpuActivity& a : acts) {
    opt.window.explicit_start = std::min(opt.window.explicit_start, a.start);
    opt.window.explicit_end = std::max(opt.window.explicit_end, a.end);
  }
  opt.max_rows = 1'000'000;
  OursAsHta out;
  RANKSCOPE_ASSIGN_OR_RETURN(out.summary, AnalyzeRank(m, opt));
  out.span_ns = opt.window.explicit_end - opt.window.explicit_start;
  Window w{opt.window.explicit_start, opt.window.explicit_end, WindowMode::kExplicit};
  uint64_t unlinked = 0;
  std::vector<LaunchRecord> records = LaunchRecords(m, acts, w, &unlinked);
  std::erase_if(records, [&](const LaunchRecord& r) {
    const std::string_view api = m.Str(r.api);
    return api != "cudaLaunchKernel" && api != "cudaLaunchKernelExC" && api != "runFunction" &&
           api != "cudaMemcpyAsync" && api != "cudaMemsetAsync";
  });
  out.launch = SummarizeLaunchRecords(records);
  for (const FunctionTable* t : {&out.summary.kernels, &out.summary.memory_ops}) {
    for (const FunctionStat& f : t->rows) {
      auto& [count, total] = out.sum_by_name[f.name];
      count += f.count;
      total += f.total_ns;
    }
  }
  return out;
}

}  // namespace rankscope::testing
