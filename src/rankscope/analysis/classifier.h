// Which class each GPU activity belongs to (compute, communication, memory, sync).
//
// Communication kernels are recognised by the built-in NCCL/RCCL/HCCL name patterns, extended by
// user regular expressions (--comm-pattern) so that e.g. DeepEP's kernels count as
// communication. Patterns are compiled once and shared by the per-rank workers (read-only).
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "rankscope/analysis/definitions.h"
#include "rankscope/base/status.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

class CommPatterns {
 public:
  // ECMAScript regular expressions, searched anywhere in the kernel name.
  static StatusOr<CommPatterns> Compile(const std::vector<std::string>& patterns);
  bool Matches(std::string_view kernel_name) const;
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  std::vector<std::string> texts_;
  std::vector<std::regex> regexes_;
};

// Classifies every slice of one model; names are looked at once per distinct name.
class ActivityClassifier {
 public:
  ActivityClassifier(const TraceModel& model, const CommPatterns& patterns);
  // kNone for slices that are not GPU activity, and for syncs that are not on a stream
  // (Event Sync / Context Sync block the host, they do not occupy the GPU).
  ActivityClass ClassOf(size_t slice);
  bool IsCommunicationKernelName(StringId name);

 private:
  const TraceModel& model_;
  std::vector<uint8_t> comm_name_;  // memo by StringId: 0 unknown, 1 no, 2 yes
  const CommPatterns& patterns_;
};

}  // namespace rankscope
