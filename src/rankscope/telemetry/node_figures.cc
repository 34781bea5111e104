#include "rankscope/telemetry/node_figures.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace rankscope::telemetry {
namespace {

void Add(Figure* f, double v) { *f = f->value_or(0.0) + v; }

int32_t ToInt(std::string_view s, int32_t fallback = -1) {
  int32_t v = fallback;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

bool SetNodeFigure(NodeFigures* n, std::string_view metric, const Labels& labels, double v) {
  const std::string_view mode = LabelValue(labels, "mode");
  const std::string_view device = LabelValue(labels, "device");
  if (metric == "rankscope_cpu_count") n->cpu_count = v;
  else if (metric == "rankscope_cpu_busy_ratio") n->cpu_busy = v;
  else if (metric == "rankscope_cpu_utilization_ratio" && mode == "user") n->cpu_user = v;
  else if (metric == "rankscope_cpu_utilization_ratio" && mode == "system") n->cpu_system = v;
  else if (metric == "rankscope_cpu_utilization_ratio" && mode == "iowait") n->cpu_iowait = v;
  else if (metric == "rankscope_cpu_utilization_ratio" && mode == "steal") n->cpu_steal = v;
  else if (metric == "rankscope_memory_total_bytes") n->mem_total = v;
  else if (metric == "rankscope_memory_available_bytes") n->mem_available = v;
  else if (metric == "rankscope_memory_used_bytes") n->mem_used = v;
  else if (metric == "rankscope_memory_swap_used_bytes") n->swap_used = v;
  else if (metric == "rankscope_network_receive_bytes_per_second" && device != "lo") Add(&n->net_rx, v);
  else if (metric == "rankscope_network_transmit_bytes_per_second" && device != "lo") Add(&n->net_tx, v);
  else if (metric == "rankscope_disk_read_bytes_per_second") Add(&n->disk_read, v);
  else if (metric == "rankscope_disk_written_bytes_per_second") Add(&n->disk_write, v);
  else if (metric == "rankscope_infiniband_receive_bytes_per_second") Add(&n->ib_rx, v);
  else if (metric == "rankscope_infiniband_transmit_bytes_per_second") Add(&n->ib_tx, v);
  else if (metric == "rankscope_gpu_available") n->gpu_available = v;
  else return false;
  return true;
}

bool SetGpuFigure(GpuFigures* g, std::string_view metric, const Labels& labels, double v) {
  static const std::pair<const char*, Figure GpuFigures::*> kFields[] = {
      {"rankscope_gpu_utilization_ratio", &GpuFigures::util},
      {"rankscope_gpu_memory_utilization_ratio", &GpuFigures::mem_util},
      {"rankscope_gpu_memory_used_bytes", &GpuFigures::mem_used},
      {"rankscope_gpu_memory_total_bytes", &GpuFigures::mem_total},
      {"rankscope_gpu_power_watts", &GpuFigures::power_w},
      {"rankscope_gpu_sm_clock_hertz", &GpuFigures::sm_hz},
      {"rankscope_gpu_temperature_celsius", &GpuFigures::temp_c},
      {"rankscope_gpu_pcie_receive_bytes_per_second", &GpuFigures::pcie_rx},
      {"rankscope_gpu_pcie_transmit_bytes_per_second", &GpuFigures::pcie_tx},
      {"rankscope_gpu_nvlink_receive_bytes_per_second", &GpuFigures::nvlink_rx},
      {"rankscope_gpu_nvlink_transmit_bytes_per_second", &GpuFigures::nvlink_tx},
  };
  if (metric == "rankscope_gpu_info") {
    g->name = LabelValue(labels, "name");
    return true;
  }
  for (const auto& [name, field] : kFields) {
    if (metric == name) {
      g->*field = v;
      return true;
    }
  }
  return false;
}

bool SetProcessFigure(ProcessFigures* p, std::string_view metric, const Labels& labels, double v) {
  static const std::pair<const char*, Figure ProcessFigures::*> kFields[] = {
      {"rankscope_process_cpu_cores", &ProcessFigures::cpu_cores},
      {"rankscope_process_children_cpu_cores", &ProcessFigures::children_cpu_cores},
      {"rankscope_process_children", &ProcessFigures::children},
      {"rankscope_process_resident_bytes", &ProcessFigures::rss},
      {"rankscope_process_threads", &ProcessFigures::threads},
  };
  if (metric == "rankscope_process_gpu_memory_bytes") {
    p->gpu_memory.emplace_back(std::string(LabelValue(labels, "device")), v);
    return true;
  }
  for (const auto& [name, field] : kFields) {
    if (metric == name) {
      p->*field = v;
      return true;
    }
  }
  return false;
}

nlohmann::json J(const Figure& f) { return f ? nlohmann::json(*f) : nlohmann::json(nullptr); }
Figure F(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? Figure(j[key].get<double>()) : std::nullopt;
}

}  // namespace

NodeFigures BuildNodeFigures(const std::vector<FigureInput>& values) {
  NodeFigures n;
  std::map<int32_t, GpuFigures> gpus;
  std::map<int32_t, ProcessFigures> procs;
  for (const FigureInput& in : values) {
    const Labels& labels = *in.labels;
    if (SetNodeFigure(&n, in.metric, labels, in.value)) continue;
    if (in.metric.rfind("rankscope_gpu_", 0) == 0) {
      const std::string_view device = LabelValue(labels, "device");
      GpuFigures& g = gpus[ToInt(device)];
      g.device = device;
      SetGpuFigure(&g, in.metric, labels, in.value);
    } else if (in.metric.rfind("rankscope_process_", 0) == 0) {
      const int32_t pid = ToInt(LabelValue(labels, "pid"), 0);
      ProcessFigures& p = procs[pid];
      p.pid = pid;
      p.rank = ToInt(LabelValue(labels, "rank"));
      p.job = LabelValue(labels, "job");
      SetProcessFigure(&p, in.metric, labels, in.value);
    }
  }
  for (auto& [index, g] : gpus) n.gpus.push_back(std::move(g));
  for (auto& [pid, p] : procs) n.processes.push_back(std::move(p));
  std::stable_sort(n.processes.begin(), n.processes.end(),
                   [](const ProcessFigures& a, const ProcessFigures& b) { return a.rank < b.rank; });
  return n;
}

nlohmann::json ToJson(const NodeFigures& f) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : f.gpus) {
    gpus.push_back({{"device", g.device}, {"name", g.name}, {"utilization", J(g.util)}, {"memory_utilization", J(g.mem_util)},
                    {"memory_used_bytes", J(g.mem_used)}, {"memory_total_bytes", J(g.mem_total)},
                    {"power_watts", J(g.power_w)}, {"sm_clock_hertz", J(g.sm_hz)}, {"temperature_celsius", J(g.temp_c)},
                    {"pcie_rx_bytes_per_second", J(g.pcie_rx)}, {"pcie_tx_bytes_per_second", J(g.pcie_tx)},
                    {"nvlink_rx_bytes_per_second", J(g.nvlink_rx)}, {"nvlink_tx_bytes_per_second", J(g.nvlink_tx)}});
  }
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& p : f.processes) {
    nlohmann::json gm = nlohmann::json::object();
    for (const auto& [dev, bytes] : p.gpu_memory) gm[dev] = bytes;
    procs.push_back({{"pid", p.pid}, {"rank", p.rank}, {"job", p.job}, {"cpu_cores", J(p.cpu_cores)},
                     {"children_cpu_cores", J(p.children_cpu_cores)}, {"children", J(p.children)},
                     {"resident_bytes", J(p.rss)}, {"threads", J(p.threads)}, {"gpu_memory_bytes", gm}});
  }
  return {{"cpu", {{"count", J(f.cpu_count)}, {"busy", J(f.cpu_busy)}, {"user", J(f.cpu_user)}, {"system", J(f.cpu_system)},
                   {"iowait", J(f.cpu_iowait)}, {"steal", J(f.cpu_steal)}}},
          {"memory", {{"total_bytes", J(f.mem_total)}, {"available_bytes", J(f.mem_available)},
                      {"used_bytes", J(f.mem_used)}, {"swap_used_bytes", J(f.swap_used)}}},
          {"network", {{"rx_bytes_per_second", J(f.net_rx)}, {"tx_bytes_per_second", J(f.net_tx)}}},
          {"disk", {{"read_bytes_per_second", J(f.disk_read)}, {"write_bytes_per_second", J(f.disk_write)}}},
          {"infiniband", {{"rx_bytes_per_second", J(f.ib_rx)}, {"tx_bytes_per_second", J(f.ib_tx)}}},
          {"gpu_available", J(f.gpu_available)}, {"gpus", gpus}, {"processes", procs}};
}

NodeFigures NodeFiguresFromJson(const nlohmann::json& j) {
  NodeFigures f;
  if (!j.is_object()) return f;
  const auto& cpu = j.value("cpu", nlohmann::json::object());
  f.cpu_count = F(cpu, "count");
  f.cpu_busy = F(cpu, "busy");
  f.cpu_user = F(cpu, "user");
  f.cpu_system = F(cpu, "system");
  f.cpu_iowait = F(cpu, "iowait");
  f.cpu_steal = F(cpu, "steal");
  const auto& mem = j.value("memory", nlohmann::json::object());
  f.mem_total = F(mem, "total_bytes");
  f.mem_available = F(mem, "available_bytes");
  f.mem_used = F(mem, "used_bytes");
  f.swap_used = F(mem, "swap_used_bytes");
  const auto& net = j.value("network", nlohmann::json::object());
  f.net_rx = F(net, "rx_bytes_per_second");
  f.net_tx = F(net, "tx_bytes_per_second");
  const auto& disk = j.value("disk", nlohmann::json::object());
  f.disk_read = F(disk, "read_bytes_per_second");
  f.disk_write = F(disk, "write_bytes_per_second");
  const auto& ib = j.value("infiniband", nlohmann::json::object());
  f.ib_rx = F(ib, "rx_bytes_per_second");
  f.ib_tx = F(ib, "tx_bytes_per_second");
  f.gpu_available = F(j, "gpu_available");
  for (const auto& g : j.value("gpus", nlohmann::json::array())) {
    GpuFigures x;
    x.device = g.value("device", "");
    x.name = g.value("name", "");
    x.util = F(g, "utilization");
    x.mem_util = F(g, "memory_utilization");
    x.mem_used = F(g, "memory_used_bytes");
    x.mem_total = F(g, "memory_total_bytes");
    x.power_w = F(g, "power_watts");
    x.sm_hz = F(g, "sm_clock_hertz");
    x.temp_c = F(g, "temperature_celsius");
    x.pcie_rx = F(g, "pcie_rx_bytes_per_second");
    x.pcie_tx = F(g, "pcie_tx_bytes_per_second");
    x.nvlink_rx = F(g, "nvlink_rx_bytes_per_second");
    x.nvlink_tx = F(g, "nvlink_tx_bytes_per_second");
    f.gpus.push_back(std::move(x));
  }
  for (const auto& p : j.value("processes", nlohmann::json::array())) {
    ProcessFigures x;
    x.pid = p.value("pid", 0);
    x.rank = p.value("rank", -1);
    x.job = p.value("job", "");
    x.cpu_cores = F(p, "cpu_cores");
    x.children_cpu_cores = F(p, "children_cpu_cores");
    x.children = F(p, "children");
    x.rss = F(p, "resident_bytes");
    x.threads = F(p, "threads");
    const nlohmann::json gpu_memory = p.value("gpu_memory_bytes", nlohmann::json::object());
    for (const auto& [dev, bytes] : gpu_memory.items()) {
      if (bytes.is_number()) x.gpu_memory.emplace_back(dev, bytes.get<double>());
    }
    f.processes.push_back(std::move(x));
  }
  return f;
}

}  // namespace rankscope::telemetry
