// Node telemetry over time for the UI: the samples of the node-level series a person reads first
// (CPU, memory, GPU utilization and power, PCIe/NVLink, network/InfiniBand, disk, the ranks'
// processes), grouped into charts, with the steps of the ranks that ran on the node marked.
// Times are ms relative to the node's window start (the capture span the sidecar records).
#include <algorithm>
#include <map>

#include "rankscope/report/view_data.h"
#include "rankscope/telemetry/sidecar.h"

namespace rankscope {
namespace {

using nlohmann::json;

struct Chart {
  const char* metric;
  const char* chart;  // the chart it belongs to
  const char* unit;   // ratio, bytes, bytes/s, W, cores
};

constexpr Chart kCharts[] = {
    {"rankscope_cpu_busy_ratio", "CPU", "ratio"},
    {"rankscope_cpu_utilization_ratio", "CPU", "ratio"},
    {"rankscope_process_cpu_cores", "Rank processes (CPU cores)", "cores"},
    {"rankscope_memory_used_bytes", "Memory", "bytes"},
    {"rankscope_memory_available_bytes", "Memory", "bytes"},
    {"rankscope_gpu_utilization_ratio", "GPU utilization", "ratio"},
    {"rankscope_gpu_memory_utilization_ratio", "GPU utilization", "ratio"},
    {"rankscope_gpu_power_watts", "GPU power", "W"},
    {"rankscope_gpu_pcie_receive_bytes_per_second", "PCIe / NVLink", "bytes/s"},
    {"rankscope_gpu_pcie_transmit_bytes_per_second", "PCIe / NVLink", "bytes/s"},
    {"rankscope_gpu_nvlink_receive_bytes_per_second", "PCIe / NVLink", "bytes/s"},
    {"rankscope_gpu_nvlink_transmit_bytes_per_second", "PCIe / NVLink", "bytes/s"},
    {"rankscope_network_receive_bytes_per_second", "Network / InfiniBand", "bytes/s"},
    {"rankscope_network_transmit_bytes_per_second", "Network / InfiniBand", "bytes/s"},
    {"rankscope_infiniband_receive_bytes_per_second", "Network / InfiniBand", "bytes/s"},
    {"rankscope_infiniband_transmit_bytes_per_second", "Network / InfiniBand", "bytes/s"},
    {"rankscope_disk_read_bytes_per_second", "Disk", "bytes/s"},
    {"rankscope_disk_written_bytes_per_second", "Disk", "bytes/s"},
};

const Chart* ChartOf(const std::string& metric) {
  for (const Chart& c : kCharts) {
    if (metric == c.metric) return &c;
  }
  return nullptr;
}

std::string SeriesName(const telemetry::SeriesKey& key) {
  std::string name = key.metric.substr(std::string("rankscope_").size());
  std::string labels;
  for (const auto& [k, v] : key.labels) {
    if (k == "job" || k == "pid") continue;  // rank says it
    labels += (labels.empty() ? "" : ",") + k + "=" + v;
  }
  return labels.empty() ? name : name + "{" + labels + "}";
}

}  // namespace

json TelemetrySeriesJson(const std::vector<std::string>& sidecars, const std::vector<RankSummary>& ranks,
                         const ViewLimits& limits) {
  json nodes = json::array(), warnings = json::array();
  for (const std::string& path : sidecars) {
    auto table = telemetry::ReadSidecar(path);
    if (!table.ok()) {
      warnings.push_back(table.status().message());
      continue;
    }
    const int64_t origin = table->header.window_start_ns;
    const int64_t end = table->header.window_end_ns;
    json series = json::array();
    for (const telemetry::SeriesSamples& s : table->series) {
      const Chart* chart = ChartOf(s.key.metric);
      if (!chart) continue;
      std::vector<const telemetry::Sample*> in;
      for (const telemetry::Sample& x : s.samples) {
        if (x.unix_ns >= origin && (end <= origin || x.unix_ns <= end)) in.push_back(&x);
      }
      if (in.empty()) continue;
      const size_t stride = (in.size() + limits.max_series_points - 1) / std::max<size_t>(1, limits.max_series_points);
      json points = json::array();
      for (size_t i = 0; i < in.size(); i += std::max<size_t>(1, stride)) {
        points.push_back({static_cast<double>(in[i]->unix_ns - origin) / 1e6, in[i]->value});
      }
      series.push_back({{"chart", chart->chart}, {"unit", chart->unit}, {"metric", s.key.metric},
                        {"name", SeriesName(s.key)}, {"points", std::move(points)}, {"thinned_by", stride}});
    }
    // Steps of the lowest rank that ran on this host (ranks of one host step together); traces
    // that name no host (PyTorch 2.11 writes none) are taken as this node's when it is the only one.
    json steps = json::array();
    json host_ranks = json::array();
    const RankSummary* first = nullptr;
    for (const RankSummary& r : ranks) {
      const bool here = r.host_name.empty() ? sidecars.size() == 1 : r.host_name == table->header.host;
      if (!here) continue;
      host_ranks.push_back(r.rank.rank);
      if (!first) first = &r;
    }
    if (first) {
      for (const StepSummary& st : first->steps) {
        steps.push_back({{"number", st.number}, {"start_ms", static_cast<double>(st.start_ns - origin) / 1e6},
                         {"end_ms", static_cast<double>(st.end_ns - origin) / 1e6}});
      }
    }
    nodes.push_back({{"host", table->header.host},
                     {"source", path},
                     {"start_unix_ns", origin},
                     {"end_unix_ns", end},
                     {"duration_ms", static_cast<double>(end - origin) / 1e6},
                     {"gpu", table->header.gpu},
                     {"ranks", std::move(host_ranks)},
                     {"steps_of_rank", first ? json(first->rank.rank) : json(nullptr)},
                     {"steps", std::move(steps)},
                     {"series", std::move(series)},
                     {"warnings", table->warnings}});
  }
  return {{"schema", kViewsSchema}, {"view", "telemetry"}, {"nodes", std::move(nodes)}, {"warnings", std::move(warnings)}};
}

}  // namespace rankscope
