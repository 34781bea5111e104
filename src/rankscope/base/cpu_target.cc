#include "rankscope/base/cpu_target.h"

namespace rankscope {
namespace {

bool DetectHaswellFeatures() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul");
#else
  return false;
#endif
}

}  // namespace

bool CpuRunsHaswellCode() {
  static const bool haswell = DetectHaswellFeatures();
  return haswell;
}

std::string_view CpuTargetName() { return CpuRunsHaswellCode() ? "haswell" : "generic"; }

}  // namespace rankscope
