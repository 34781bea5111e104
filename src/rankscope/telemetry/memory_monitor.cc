#include "rankscope/telemetry/memory_monitor.h"

namespace rankscope::telemetry {

std::map<std::string, uint64_t, std::less<>> ParseMeminfo(std::string_view text, std::string_view line_prefix) {
  std::map<std::string, uint64_t, std::less<>> out;
  for (std::string_view line : SplitLines(text)) {
    if (line.substr(0, line_prefix.size()) != line_prefix) continue;
    line.remove_prefix(line_prefix.size());
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
    const auto fields = SplitFields(line.substr(colon + 1));
    if (fields.empty()) continue;
    uint64_t v = ParseU64(fields[0]);
    if (fields.size() > 1 && fields[1] == "kB") v *= 1024;
    out.emplace(std::string(key), v);
  }
  return out;
}

Status MemoryMonitor::Sample(int64_t) {
  if (!ReadSmallFile(roots_.proc + "/meminfo", &buffer_)) return NotFound("cannot read {}/meminfo", roots_.proc);
  info_ = ParseMeminfo(buffer_);
  return OkStatus();
}

void MemoryMonitor::Log(Logger& logger) const {
  auto get = [this](std::string_view key) -> double {
    auto it = info_.find(key);
    return it == info_.end() ? 0.0 : static_cast<double>(it->second);
  };
  const double total = get("MemTotal");
  // MemAvailable exists since Linux 3.14; older kernels: free + page cache is the estimate.
  const double available = info_.count("MemAvailable") ? get("MemAvailable") : get("MemFree") + get("Cached");
  logger.Log("rankscope_memory_total_bytes", {}, total);
  logger.Log("rankscope_memory_available_bytes", {}, available);
  logger.Log("rankscope_memory_used_bytes", {}, total - available);
  logger.Log("rankscope_memory_free_bytes", {}, get("MemFree"));
  logger.Log("rankscope_memory_cached_bytes", {}, get("Cached") + get("Buffers"));
  logger.Log("rankscope_memory_swap_used_bytes", {}, get("SwapTotal") - get("SwapFree"));
  if (total > 0) logger.Log("rankscope_memory_used_ratio", {}, (total - available) / total);
}

Status NumaMonitor::Sample(int64_t) {
  nodes_.clear();
  const std::string base = roots_.sys + "/devices/system/node";
  for (const std::string& entry : ListDir(base)) {
    if (entry.rfind("node", 0) != 0 || entry.size() == 4 || entry.find_first_not_of("0123456789", 4) != std::string::npos) continue;
    Node n;
    n.id = entry.substr(4);
    if (!ReadSmallFile(base + "/" + entry + "/meminfo", &buffer_)) continue;
    // "Node 0 MemTotal:  24575708 kB"
    const auto info = ParseMeminfo(buffer_, "Node " + n.id + " ");
    if (auto it = info.find("MemTotal"); it != info.end()) n.total = it->second;
    if (auto it = info.find("MemFree"); it != info.end()) n.free = it->second;
    if (ReadSmallFile(base + "/" + entry + "/numastat", &buffer_)) {
      for (std::string_view line : SplitLines(buffer_)) {
        const auto f = SplitFields(line);
        if (f.size() == 2) n.numastat.emplace(std::string(f[0]), ParseU64(f[1]));
      }
    }
    nodes_.push_back(std::move(n));
  }
  return OkStatus();  // no node directory: a kernel without NUMA support, nothing to report
}

void NumaMonitor::Log(Logger& logger) const {
  static constexpr std::pair<const char*, const char*> kEvents[] = {
      {"numa_hit", "hit"}, {"numa_miss", "miss"}, {"numa_foreign", "foreign"},
      {"local_node", "local_node"}, {"other_node", "other_node"}};
  for (const Node& n : nodes_) {
    logger.Log("rankscope_numa_memory_total_bytes", {{"node", n.id}}, static_cast<double>(n.total));
    logger.Log("rankscope_numa_memory_free_bytes", {{"node", n.id}}, static_cast<double>(n.free));
    for (const auto& [file_key, event] : kEvents) {
      auto it = n.numastat.find(file_key);
      if (it != n.numastat.end()) {
        logger.Log("rankscope_numa_allocations_total", {{"node", n.id}, {"event", event}}, static_cast<double>(it->second));
      }
    }
  }
}

}  // namespace rankscope::telemetry
