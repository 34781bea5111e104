// The key figures of a node, built from series values: what `rankscope top` shows (from the
// latest values) and what the trace join reports (from the means over a traced window).
// One builder for both, so the two always agree on what "CPU busy" or "rank 3's CPU" means.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/telemetry/series.h"

namespace rankscope::telemetry {

struct FigureInput {
  std::string_view metric;
  const Labels* labels;
  double value;
};

using Figure = std::optional<double>;

struct GpuFigures {
  std::string device, name;
  Figure util, mem_util, mem_used, mem_total, power_w, sm_hz, temp_c, pcie_rx, pcie_tx, nvlink_rx, nvlink_tx;
};

struct ProcessFigures {
  int32_t pid = 0, rank = -1;
  std::string job;
  Figure cpu_cores, children_cpu_cores, children, rss, threads;
  std::vector<std::pair<std::string, double>> gpu_memory;  // device, bytes
};

struct NodeFigures {
  Figure cpu_count, cpu_busy, cpu_user, cpu_system, cpu_iowait, cpu_steal;
  Figure mem_total, mem_available, mem_used, swap_used;
  Figure net_rx, net_tx;      // bytes/s, all interfaces but loopback
  Figure disk_read, disk_write;
  Figure ib_rx, ib_tx;
  Figure gpu_available;       // 1 / 0; absent when the GPU sampler never ran
  std::vector<GpuFigures> gpus;          // by device index
  std::vector<ProcessFigures> processes; // by rank, then pid
};

NodeFigures BuildNodeFigures(const std::vector<FigureInput>& values);

nlohmann::json ToJson(const NodeFigures& f);
NodeFigures NodeFiguresFromJson(const nlohmann::json& j);

}  // namespace rankscope::telemetry
