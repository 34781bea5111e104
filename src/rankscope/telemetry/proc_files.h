// Small, allocation-light readers for /proc and /sys text files. Every monitor takes its roots
// (normally "/proc" and "/sys") so that tests can point it at files they wrote.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::telemetry {

struct SystemRoots {
  std::string proc = "/proc";
  std::string sys = "/sys";
};

// The whole file (proc files report size 0, so read until EOF). NotFound when it is missing.
StatusOr<std::string> ReadSmallFile(const std::string& path);
// Reads into `buffer` (reused between calls to avoid allocation); false when unreadable.
bool ReadSmallFile(const std::string& path, std::string* buffer);

// Whitespace-separated fields of `line`.
std::vector<std::string_view> SplitFields(std::string_view line);
// Lines of `text`, without their '\n'.
std::vector<std::string_view> SplitLines(std::string_view text);
// An unsigned decimal at the start of `text` (after spaces); `fallback` when there is none.
uint64_t ParseU64(std::string_view text, uint64_t fallback = 0);
// Names of the entries of a directory (no "." / ".."), sorted; empty when it does not exist.
std::vector<std::string> ListDir(const std::string& path);

// Kernel clock ticks per second (sysconf(_SC_CLK_TCK), 100 on Linux) and the page size.
int64_t ClockTicksPerSecond();
int64_t PageSize();

}  // namespace rankscope::telemetry
