// Which compiled variant of rankscope's SIMD hot paths this CPU runs.
//
// Hot paths (the Kineto JSON reader) are compiled twice, for any x86-64 CPU ("generic") and
// for AVX2 CPUs ("haswell"); the choice is made once, at run time.
#pragma once

#include <string_view>

namespace rankscope {

// True when the CPU has what the haswell variant needs: AVX2, BMI1/2 and PCLMULQDQ.
bool CpuRunsHaswellCode();

std::string_view CpuTargetName();  // "haswell" or "generic"

}  // namespace rankscope
