#include "rankscope/analysis/classifier.h"

#include "rankscope/analysis/comm_kernel_name.h"

namespace rankscope {

std::string_view ActivityClassName(ActivityClass c) {
  switch (c) {
    case ActivityClass::kCompute: return "compute";
    case ActivityClass::kCommunication: return "communication";
    case ActivityClass::kMemory: return "memory";
    case ActivityClass::kSync: return "sync";
    case ActivityClass::kNone: break;
  }
  return "none";
}

StatusOr<CommPatterns> CommPatterns::Compile(const std::vector<std::string>& patterns) {
  CommPatterns out;
  for (const std::string& p : patterns) {
    // std::regex reports bad patterns by exception; it never crosses our API.
    try {
      out.regexes_.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return InvalidArgument("--comm-pattern '{}' is not a valid regular expression: {}", p, e.what());
    }
    out.texts_.push_back(p);
  }
  return out;
}

bool CommPatterns::Matches(std::string_view name) const {
  for (const std::regex& re : regexes_) {
    if (std::regex_search(name.begin(), name.end(), re)) return true;
  }
  return false;
}

ActivityClassifier::ActivityClassifier(const TraceModel& model, const CommPatterns& patterns)
    : model_(model), patterns_(patterns) {}

bool ActivityClassifier::IsCommunicationKernelName(StringId name) {
  std::vector<uint8_t>& cache = comm_name_;
  if (name >= cache.size()) cache.resize(model_.strings.size(), 0);
  if (cache[name] == 0) {
    const std::string_view text = model_.Str(name);
    cache[name] = IsBuiltinCommKernelName(text) || patterns_.Matches(text) ? 2 : 1;
  }
  return cache[name] == 2;
}

ActivityClass ActivityClassifier::ClassOf(size_t slice) {
  const SliceTable& s = model_.slices;
  switch (s.kind[slice]) {
    case ActivityKind::kDeviceKernel:
      return IsCommunicationKernelName(s.name[slice]) ? ActivityClass::kCommunication : ActivityClass::kCompute;
    case ActivityKind::kDeviceMemcpy:
    case ActivityKind::kDeviceMemset:
      return ActivityClass::kMemory;
    case ActivityKind::kDeviceSync: {
      const GpuActivityInfo* g = model_.GpuInfo(slice);
      return g != nullptr && g->stream >= 0 ? ActivityClass::kSync : ActivityClass::kNone;
    }
    default:
      return ActivityClass::kNone;
  }
}

}  // namespace rankscope
