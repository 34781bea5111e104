// Which host each rank ran on, from what a capture directory holds beside the traces: the
// daemon's capture.manifest ("host", and the rank of each target) and its telemetry sidecar
// telemetry.<host>.tsv (its header names the host; its per-process series carry the ranks).
// Traces of PyTorch < 2.13 have no host_name, so these are often the only source.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rankscope/cluster/host_map.h"

namespace rankscope {

struct TraceFileRank {
  std::string path;  // the trace file
  int64_t rank = 0;  // its resolved rank
};

// rank -> host for the ranks whose trace sits in a directory with a manifest (first choice) or
// a single telemetry sidecar that knows the rank. Unreadable files add a warning.
std::map<int64_t, RankHost> FindCaptureHosts(const std::vector<TraceFileRank>& files, std::vector<std::string>* warnings);

// The telemetry sidecars in the directories of `files` and in the directories `inputs` name.
std::vector<std::string> FindTelemetrySidecars(const std::vector<std::string>& inputs,
                                               const std::vector<std::string>& files);

}  // namespace rankscope
