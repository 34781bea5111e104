// Node telemetry joined with traces on absolute time: given the telemetry a daemon saved beside
// a capture (telemetry/sidecar.h) and a window [start_ns, end_ns] in unix-epoch nanoseconds
// (the traced steps: trace timestamps are absolute once baseTimeNanoseconds is added, see
// TraceModel::AbsoluteNs), what the node and each rank did during that window: CPU, memory,
// network, disk, GPUs; and the findings that follow ("GPU mostly idle while the host CPU is
// saturated: input-pipeline bound").
//
// Each sample describes the interval since the previous sample of its series; a window's figure
// is the mean of the samples weighted by how much of their interval lies inside the window, so a
// 300 ms window sampled every second still gets the one (coarser) value that covers it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/findings/finding.h"
#include "rankscope/telemetry/node_figures.h"
#include "rankscope/telemetry/sidecar.h"

namespace rankscope::analysis {

struct WindowStat {
  double mean = 0, peak = 0;
  double coverage = 0;  // share of the window the series' samples cover, 0..1
  size_t samples = 0;   // samples whose interval overlaps the window
};

// The time-weighted statistics of one series over [start_ns, end_ns].
WindowStat SeriesOverWindow(const std::vector<telemetry::Sample>& samples, int64_t start_ns, int64_t end_ns);

struct NodeWindowTelemetry {
  std::string host, source;     // source: the sidecar's path
  std::string gpu_status, interval_ms;
  int64_t start_ns = 0, end_ns = 0;
  double coverage = 0;          // of the window, by the node's CPU samples
  telemetry::NodeFigures mean;  // time-weighted means over the window (per rank in .processes)
  telemetry::NodeFigures peak;  // the largest sample of each series in the window
  std::vector<std::string> warnings;
};

// The per-node and per-rank figures of `table` (one host) during [start_ns, end_ns].
NodeWindowTelemetry SummarizeWindow(const telemetry::TelemetryTable& table, int64_t start_ns, int64_t end_ns);

// A rank's traced window, absolute ns.
struct RankWindow {
  int64_t rank = -1;
  int64_t start_ns = 0, end_ns = 0;
};

// Reads each telemetry sidecar and summarises it over its node's window: the union of the
// windows of the ranks that ran on that node (the sidecar's process series say which), else of
// every rank, else the capture's span recorded in the file. Unreadable files become warnings.
std::vector<NodeWindowTelemetry> JoinTelemetry(const std::vector<std::string>& sidecar_paths,
                                               const std::vector<RankWindow>& ranks,
                                               std::vector<std::string>* warnings);

struct TelemetryThresholds {
  double cpu_saturated = 0.90;     // node CPU busy share (mean over the window)
  double gpu_idle = 0.30;          // GPU utilization (mean) below this is "mostly idle"
  double loader_share = 0.30;      // DataLoader workers' share of the busy CPU that blames them
  double memory_full = 0.95;       // used / total at the peak
  double gpu_memory_full = 0.95;
  double steal = 0.10;
  double iowait = 0.20;
  double min_coverage = 0.50;      // below this the window is not judged
};


std::vector<Finding> FindTelemetryIssues(const std::vector<NodeWindowTelemetry>& nodes,
                                         const TelemetryThresholds& t = {});

nlohmann::json ToJson(const NodeWindowTelemetry& n);

}  // namespace rankscope::analysis
