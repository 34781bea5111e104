// Which host each rank runs on. Ranks on one host share a clock (clock_offsets.h) and a node's
// hardware, so grouping by host tells a slow node from a slow GPU (slow_ranks.h).
//
// Sources, in order: a `--hosts FILE` map; the `host_name` the profiler wrote into the trace;
// the capture directory's manifest, then its telemetry sidecar (engine/capture_hosts.h); else
// each rank is its own host (named "rank N"), which is the safe assumption for clocks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/base/status.h"

namespace rankscope {

// `--hosts FILE` text: one "RANK HOST" or "FIRST-LAST HOST" per line; '#' starts a comment.
StatusOr<std::map<int64_t, std::string>> ParseHostMap(std::string_view text);
StatusOr<std::map<int64_t, std::string>> ReadHostMap(const std::string& path);

enum class HostSource { kHostMap, kTrace, kManifest, kTelemetry, kNone };
std::string_view HostSourceName(HostSource s);

struct RankHost {
  std::string host;
  HostSource source = HostSource::kNone;
};

// One entry per summary, in order. A `--hosts` map that lacks a rank is an error (a partial
// map would silently mix real and pretend hosts). `capture_hosts` fill in ranks whose trace
// names no host.
StatusOr<std::vector<RankHost>> AssignHosts(const std::vector<RankSummary>& ranks,
                                            const std::map<int64_t, std::string>& host_map,
                                            const std::map<int64_t, RankHost>& capture_hosts = {});

}  // namespace rankscope
