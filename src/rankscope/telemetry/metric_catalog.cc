#include "rankscope/telemetry/metric_catalog.h"

#include <array>

namespace rankscope::telemetry {
namespace {

constexpr auto G = MetricType::kGauge;
constexpr auto C = MetricType::kCounter;

constexpr std::array kMetrics = {
    // CPU (/proc/stat). Ratios are over the last sampling interval.
    MetricDef{"rankscope_cpu_count", G, "", "Online CPUs (cpuN lines of /proc/stat)"},
    MetricDef{"rankscope_cpu_seconds_total", C, "cpu,mode", "CPU time per core and mode (user, nice, system, idle, iowait, irq, softirq, steal)"},
    MetricDef{"rankscope_cpu_busy_ratio", G, "", "Share of all CPUs' time not idle nor in iowait"},
    MetricDef{"rankscope_cpu_utilization_ratio", G, "mode", "Share of all CPUs' time per mode: user (incl. nice), system (incl. irq, softirq), iowait, steal, idle"},
    MetricDef{"rankscope_cpu_core_busy_ratio", G, "cpu", "Per core: share of time not idle nor in iowait"},
    MetricDef{"rankscope_cpu_core_utilization_ratio", G, "cpu,mode", "Per core: share of time in user, system, iowait, steal"},
    // Memory (/proc/meminfo).
    MetricDef{"rankscope_memory_total_bytes", G, "", "MemTotal"},
    MetricDef{"rankscope_memory_available_bytes", G, "", "MemAvailable"},
    MetricDef{"rankscope_memory_used_bytes", G, "", "MemTotal - MemAvailable"},
    MetricDef{"rankscope_memory_free_bytes", G, "", "MemFree"},
    MetricDef{"rankscope_memory_cached_bytes", G, "", "Cached + Buffers (page cache)"},
    MetricDef{"rankscope_memory_swap_used_bytes", G, "", "SwapTotal - SwapFree"},
    MetricDef{"rankscope_memory_used_ratio", G, "", "(MemTotal - MemAvailable) / MemTotal"},
    // NUMA (/sys/devices/system/node).
    MetricDef{"rankscope_numa_memory_total_bytes", G, "node", "MemTotal of the NUMA node"},
    MetricDef{"rankscope_numa_memory_free_bytes", G, "node", "MemFree of the NUMA node"},
    MetricDef{"rankscope_numa_allocations_total", C, "node,event", "Pages allocated per numastat event: hit, miss, foreign, local_node, other_node"},
    // Network interfaces (/proc/net/dev).
    MetricDef{"rankscope_network_receive_bytes_total", C, "device", "Bytes received"},
    MetricDef{"rankscope_network_transmit_bytes_total", C, "device", "Bytes sent"},
    MetricDef{"rankscope_network_receive_packets_total", C, "device", "Packets received"},
    MetricDef{"rankscope_network_transmit_packets_total", C, "device", "Packets sent"},
    MetricDef{"rankscope_network_receive_errors_total", C, "device", "Receive errors"},
    MetricDef{"rankscope_network_transmit_errors_total", C, "device", "Transmit errors"},
    MetricDef{"rankscope_network_receive_drops_total", C, "device", "Received packets dropped"},
    MetricDef{"rankscope_network_transmit_drops_total", C, "device", "Sent packets dropped"},
    MetricDef{"rankscope_network_receive_bytes_per_second", G, "device", "Receive rate over the last interval"},
    MetricDef{"rankscope_network_transmit_bytes_per_second", G, "device", "Transmit rate over the last interval"},
    // InfiniBand ports (/sys/class/infiniband/<device>/ports/<port>).
    MetricDef{"rankscope_infiniband_port_up", G, "device,port", "1 when the port state is ACTIVE"},
    MetricDef{"rankscope_infiniband_rate_bits_per_second", G, "device,port", "Link rate from the port's `rate` file"},
    MetricDef{"rankscope_infiniband_receive_bytes_total", C, "device,port", "port_rcv_data x 4 (the counter counts 4-byte words)"},
    MetricDef{"rankscope_infiniband_transmit_bytes_total", C, "device,port", "port_xmit_data x 4"},
    MetricDef{"rankscope_infiniband_receive_packets_total", C, "device,port", "port_rcv_packets"},
    MetricDef{"rankscope_infiniband_transmit_packets_total", C, "device,port", "port_xmit_packets"},
    MetricDef{"rankscope_infiniband_transmit_wait_total", C, "device,port", "port_xmit_wait: ticks the port had data to send but no credits (congestion)"},
    MetricDef{"rankscope_infiniband_errors_total", C, "device,port,counter", "Error counters: symbol_error, link_downed, port_rcv_errors, link_error_recovery"},
    MetricDef{"rankscope_infiniband_receive_bytes_per_second", G, "device,port", "Receive rate over the last interval"},
    MetricDef{"rankscope_infiniband_transmit_bytes_per_second", G, "device,port", "Transmit rate over the last interval"},
    // Block devices (/proc/diskstats, whole disks listed in /sys/block, no loop/ram devices).
    MetricDef{"rankscope_disk_reads_total", C, "device", "Reads completed"},
    MetricDef{"rankscope_disk_writes_total", C, "device", "Writes completed"},
    MetricDef{"rankscope_disk_read_bytes_total", C, "device", "Bytes read (sectors x 512)"},
    MetricDef{"rankscope_disk_written_bytes_total", C, "device", "Bytes written (sectors x 512)"},
    MetricDef{"rankscope_disk_io_seconds_total", C, "device", "Time the device had I/O in flight"},
    MetricDef{"rankscope_disk_read_bytes_per_second", G, "device", "Read rate over the last interval"},
    MetricDef{"rankscope_disk_written_bytes_per_second", G, "device", "Write rate over the last interval"},
    MetricDef{"rankscope_disk_busy_ratio", G, "device", "Share of the last interval with I/O in flight"},
    // Registered training processes (/proc/<pid>/stat).
    MetricDef{"rankscope_process_cpu_seconds_total", C, "rank,job,pid", "User + system CPU time of the process"},
    MetricDef{"rankscope_process_cpu_cores", G, "rank,job,pid", "CPU used over the last interval, in cores (1.0 = one core busy)"},
    MetricDef{"rankscope_process_children_cpu_cores", G, "rank,job,pid", "CPU of the process's descendants (DataLoader workers, ...), in cores"},
    MetricDef{"rankscope_process_children", G, "rank,job,pid", "Live descendant processes"},
    MetricDef{"rankscope_process_resident_bytes", G, "rank,job,pid", "Resident set size"},
    MetricDef{"rankscope_process_threads", G, "rank,job,pid", "Threads of the process"},
    MetricDef{"rankscope_process_gpu_memory_bytes", G, "rank,job,pid,device", "GPU memory the process uses on the device (NVML)"},
    // GPUs (NVML, loaded at run time).
    MetricDef{"rankscope_gpu_available", G, "", "1 when NVML was loaded and sees at least one GPU, else 0 (see /v1/telemetry for why)"},
    MetricDef{"rankscope_gpu_info", G, "device,uuid,name", "Always 1; the GPU's identity"},
    MetricDef{"rankscope_gpu_utilization_ratio", G, "device", "Share of time a kernel was running (NVML utilization.gpu)"},
    MetricDef{"rankscope_gpu_memory_utilization_ratio", G, "device", "Share of time device memory was read or written (NVML utilization.memory)"},
    MetricDef{"rankscope_gpu_memory_used_bytes", G, "device", "Device memory in use"},
    MetricDef{"rankscope_gpu_memory_total_bytes", G, "device", "Device memory"},
    MetricDef{"rankscope_gpu_power_watts", G, "device", "Power draw"},
    MetricDef{"rankscope_gpu_sm_clock_hertz", G, "device", "SM clock"},
    MetricDef{"rankscope_gpu_memory_clock_hertz", G, "device", "Memory clock"},
    MetricDef{"rankscope_gpu_temperature_celsius", G, "device", "GPU die temperature"},
    MetricDef{"rankscope_gpu_pcie_receive_bytes_per_second", G, "device", "PCIe receive throughput (NVML samples it over 20 ms)"},
    MetricDef{"rankscope_gpu_pcie_transmit_bytes_per_second", G, "device", "PCIe transmit throughput"},
    MetricDef{"rankscope_gpu_nvlink_receive_bytes_total", C, "device", "NVLink data received, all links"},
    MetricDef{"rankscope_gpu_nvlink_transmit_bytes_total", C, "device", "NVLink data sent, all links"},
    MetricDef{"rankscope_gpu_nvlink_receive_bytes_per_second", G, "device", "NVLink receive rate over the last interval"},
    MetricDef{"rankscope_gpu_nvlink_transmit_bytes_per_second", G, "device", "NVLink transmit rate over the last interval"},
    // The daemon itself.
    MetricDef{"rankscope_daemon_cpu_seconds_total", C, "", "CPU time used by rankscoped"},
    MetricDef{"rankscope_daemon_resident_bytes", G, "", "Resident set size of rankscoped"},
    MetricDef{"rankscope_registered_processes", G, "", "Training processes in the registry"},
    MetricDef{"rankscope_telemetry_ring_frames", G, "", "Samples kept in the ring buffer"},
    MetricDef{"rankscope_telemetry_ring_bytes", G, "", "Memory of the ring buffer"},
    MetricDef{"rankscope_telemetry_ring_span_seconds", G, "", "Time between the oldest and the newest sample kept"},
    MetricDef{"rankscope_telemetry_series", G, "", "Live series (those of departed processes expire with the ring buffer)"},
    MetricDef{"rankscope_telemetry_sample_seconds", G, "sampler", "Duration of the sampler's last pass (proc or gpu)"},
    MetricDef{"rankscope_telemetry_interval_seconds", G, "sampler", "The sampler's interval"},
};

}  // namespace

std::span<const MetricDef> AllMetrics() { return kMetrics; }

const MetricDef* FindMetric(std::string_view name) {
  for (const auto& m : kMetrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

size_t MetricOrder(std::string_view name) {
  for (size_t i = 0; i < kMetrics.size(); ++i) {
    if (kMetrics[i].name == name) return i;
  }
  return std::string_view::npos;
}

}  // namespace rankscope::telemetry
