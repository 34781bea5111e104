# Warnings and sanitizers shared by every rankscope target.
add_library(rankscope_flags INTERFACE)
target_compile_options(rankscope_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wno-unused-parameter)
if(RANKSCOPE_BUILD_FUZZ)
  # Every library the fuzz target links is instrumented for coverage and sanitizers.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()
if(RANKSCOPE_SANITIZE)
  target_compile_options(rankscope_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(rankscope_flags INTERFACE -fsanitize=address,undefined)
endif()

# The JSON hot path is compiled once per CPU target and chosen at run time (see
# src/rankscope/ingest/CMakeLists.txt): simdjson's On-Demand code is inlined into our code and
# takes its SIMD level from the flags of the translation unit that includes it.
set(RANKSCOPE_HASWELL_FLAGS -march=haswell -mtune=haswell)
