// Node telemetry: every monitor on /proc and /sys files written by the test (exact values),
// the process monitor on the real /proc, the ring buffer, Prometheus text, the sidecar, the
// window join and its findings, and the NVML path against a fake libnvidia-ml.so.1.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "rankscope/analysis/telemetry_join.h"
#include "rankscope/telemetry/cpu_monitor.h"
#include "rankscope/telemetry/disk_monitor.h"
#include "rankscope/telemetry/gpu_monitor.h"
#include "rankscope/telemetry/memory_monitor.h"
#include "rankscope/telemetry/metric_catalog.h"
#include "rankscope/telemetry/network_monitor.h"
#include "rankscope/telemetry/process_monitor.h"
#include "rankscope/telemetry/prometheus_text.h"
#include "rankscope/telemetry/sampler_loop.h"
#include "rankscope/telemetry/sidecar.h"
#include "rankscope/telemetry/telemetry_service.h"

namespace fs = std::filesystem;
namespace rt = rankscope::telemetry;
namespace ra = rankscope::analysis;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

// Records what a monitor logs, keyed "metric{k=v,...}".
class RecordingLogger : public rt::Logger {
 public:
  void Log(std::string_view metric, const rt::Labels& labels, double value) override {
    EXPECT_NE(rt::FindMetric(metric), nullptr) << metric << " is not in the catalog";
    std::string key(metric);
    key += "{" + rt::EncodeLabels(labels) + "}";
    values[key] = value;
  }
  double at(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) ADD_FAILURE() << "not logged: " << key;
    return it == values.end() ? -1 : it->second;
  }
  std::map<std::string, double> values;
};

// A temporary directory standing in for / (proc/..., sys/...).
class FakeRoot {
 public:
  FakeRoot() {
    dir_ = fs::temp_directory_path() / ("rankscope-telemetry-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~FakeRoot() { fs::remove_all(dir_); }
  void Write(const std::string& relative, const std::string& text) {
    const fs::path p = dir_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  rt::SystemRoots roots() const { return {(dir_ / "proc").string(), (dir_ / "sys").string()}; }
  const fs::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

RecordingLogger SampleTwice(rt::Monitor& m, FakeRoot& root, const std::string& file, const std::string& first,
                            const std::string& second) {
  root.Write(file, first);
  EXPECT_TRUE(m.Sample(10 * kSecond).ok());
  root.Write(file, second);
  EXPECT_TRUE(m.Sample(11 * kSecond).ok());  // one second later
  RecordingLogger log;
  m.Log(log);
  return log;
}

}  // namespace

TEST(CpuMonitor, SharesPerModeAndCoreOverTheInterval) {
  FakeRoot root;
  rt::CpuMonitor cpu(root.roots());
  // user nice system idle iowait irq softirq steal: +60 +10 +10 +10 +5 +0 +0 +5 ticks on cpu0,
  // all idle on cpu1.
  auto log = SampleTwice(cpu, root, "proc/stat",
                         "cpu  100 0 100 1000 0 0 0 0 0 0\ncpu0 50 0 50 500 0 0 0 0 0 0\ncpu1 50 0 50 500 0 0 0 0 0 0\nintr 1 2\n",
                         "cpu  160 10 110 1110 5 0 0 5 0 0\ncpu0 110 10 60 510 5 0 0 5 0 0\ncpu1 50 0 50 600 0 0 0 0 0 0\nintr 1 2\n");
  EXPECT_EQ(log.at("rankscope_cpu_count{}"), 2);
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_core_busy_ratio{cpu=0}"), 0.85);  // 1 - (10 idle + 5 iowait)/100
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_core_utilization_ratio{cpu=0,mode=user}"), 0.70);  // user + nice
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_core_utilization_ratio{cpu=0,mode=steal}"), 0.05);
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_core_busy_ratio{cpu=1}"), 0.0);
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_busy_ratio{}"), 0.425);  // 85 busy of 200 ticks
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_utilization_ratio{mode=iowait}"), 0.025);
  EXPECT_DOUBLE_EQ(log.at("rankscope_cpu_seconds_total{cpu=0,mode=user}"), 110.0 / double(rt::ClockTicksPerSecond()));
}

TEST(CpuMonitor, NoRatiosFromASingleReading) {
  FakeRoot root;
  root.Write("proc/stat", "cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n");
  rt::CpuMonitor cpu(root.roots());
  ASSERT_TRUE(cpu.Sample(1).ok());
  RecordingLogger log;
  cpu.Log(log);
  EXPECT_FALSE(log.values.count("rankscope_cpu_busy_ratio{}"));
  EXPECT_TRUE(log.values.count("rankscope_cpu_seconds_total{cpu=0,mode=steal}"));
}

TEST(MemoryMonitor, MeminfoAndNumaNodes) {
  FakeRoot root;
  root.Write("proc/meminfo", "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    250 kB\n"
                             "Buffers:          10 kB\nCached:          200 kB\nSwapTotal:       500 kB\nSwapFree:        400 kB\n"
                             "HugePages_Total:       0\n");
  root.Write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:     600 kB\nNode 0 MemFree:      50 kB\n");
  root.Write("sys/devices/system/node/node0/numastat", "numa_hit 10\nnuma_miss 2\nnuma_foreign 0\nlocal_node 9\nother_node 3\n");
  root.Write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:     400 kB\nNode 1 MemFree:      50 kB\n");
  root.Write("sys/devices/system/node/online", "0-1\n");
  rt::MemoryMonitor mem(root.roots());
  rt::NumaMonitor numa(root.roots());
  ASSERT_TRUE(mem.Sample(0).ok());
  ASSERT_TRUE(numa.Sample(0).ok());
  RecordingLogger log;
  mem.Log(log);
  numa.Log(log);
  EXPECT_EQ(log.at("rankscope_memory_total_bytes{}"), 1000 * 1024);
  EXPECT_EQ(log.at("rankscope_memory_used_bytes{}"), 750 * 1024);
  EXPECT_EQ(log.at("rankscope_memory_cached_bytes{}"), 210 * 1024);
  EXPECT_EQ(log.at("rankscope_memory_swap_used_bytes{}"), 100 * 1024);
  EXPECT_DOUBLE_EQ(log.at("rankscope_memory_used_ratio{}"), 0.75);
  EXPECT_EQ(log.at("rankscope_numa_memory_total_bytes{node=1}"), 400 * 1024);
  EXPECT_EQ(log.at("rankscope_numa_memory_free_bytes{node=0}"), 50 * 1024);
  EXPECT_EQ(log.at("rankscope_numa_allocations_total{node=0,event=other_node}"), 3);
  EXPECT_EQ(log.at("rankscope_numa_allocations_total{node=0,event=miss}"), 2);
}

TEST(NetworkMonitor, CountersAndRates) {
  FakeRoot root;
  const std::string head = "Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n";
  rt::NetworkMonitor net(root.roots());
  auto log = SampleTwice(net, root, "proc/net/dev",
                         head + "  eth0: 1000 10 1 2 0 0 0 0 500 5 3 4 0 0 0 0\n    lo: 7 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n",
                         head + "  eth0: 4000 20 1 2 0 0 0 0 1500 9 3 4 0 0 0 0\n    lo: 7 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n");
  EXPECT_EQ(log.at("rankscope_network_receive_bytes_total{device=eth0}"), 4000);
  EXPECT_EQ(log.at("rankscope_network_transmit_packets_total{device=eth0}"), 9);
  EXPECT_EQ(log.at("rankscope_network_transmit_errors_total{device=eth0}"), 3);
  EXPECT_EQ(log.at("rankscope_network_receive_drops_total{device=eth0}"), 2);
  EXPECT_DOUBLE_EQ(log.at("rankscope_network_receive_bytes_per_second{device=eth0}"), 3000);
  EXPECT_DOUBLE_EQ(log.at("rankscope_network_transmit_bytes_per_second{device=eth0}"), 1000);
  EXPECT_DOUBLE_EQ(log.at("rankscope_network_receive_bytes_per_second{device=lo}"), 0);
}

TEST(InfinibandMonitor, PortCountersInFourByteWords) {
  FakeRoot root;
  const std::string port = "sys/class/infiniband/mlx5_0/ports/1/";
  root.Write(port + "state", "4: ACTIVE\n");
  root.Write(port + "rate", "200 Gb/sec (4X HDR)\n");
  for (const char* c : {"port_rcv_packets", "port_xmit_packets", "port_xmit_wait", "symbol_error", "link_downed",
                        "port_rcv_errors", "link_error_recovery", "port_xmit_data"}) {
    root.Write(port + "counters/" + c, "7\n");
  }
  rt::InfinibandMonitor ib(root.roots());
  auto log = SampleTwice(ib, root, port + "counters/port_rcv_data", "1000\n", "3500\n");
  EXPECT_EQ(log.at("rankscope_infiniband_port_up{device=mlx5_0,port=1}"), 1);
  EXPECT_EQ(log.at("rankscope_infiniband_rate_bits_per_second{device=mlx5_0,port=1}"), 200e9);
  EXPECT_EQ(log.at("rankscope_infiniband_receive_bytes_total{device=mlx5_0,port=1}"), 14000);
  EXPECT_DOUBLE_EQ(log.at("rankscope_infiniband_receive_bytes_per_second{device=mlx5_0,port=1}"), 10000);
  EXPECT_EQ(log.at("rankscope_infiniband_transmit_bytes_total{device=mlx5_0,port=1}"), 28);
  EXPECT_EQ(log.at("rankscope_infiniband_errors_total{device=mlx5_0,port=1,counter=symbol_error}"), 7);
  // No /sys/class/infiniband: nothing, and no error.
  FakeRoot empty;
  rt::InfinibandMonitor none(empty.roots());
  EXPECT_TRUE(none.Sample(1).ok());
  RecordingLogger nothing;
  none.Log(nothing);
  EXPECT_TRUE(nothing.values.empty());
}

TEST(DiskMonitor, WholeDisksOnly) {
  FakeRoot root;
  root.Write("sys/block/vda/size", "1\n");
  root.Write("sys/block/loop0/size", "1\n");
  rt::DiskMonitor disk(root.roots());
  auto log = SampleTwice(disk, root, "proc/diskstats",
                         " 254 0 vda 100 0 2000 0 50 0 1000 0 0 100 0\n 254 1 vda1 1 0 1 0 1 0 1 0 0 1 0\n   7 0 loop0 1 0 8 0 0 0 0 0 0 0 0\n",
                         " 254 0 vda 110 0 4000 0 60 0 1500 0 0 350 0\n 254 1 vda1 1 0 1 0 1 0 1 0 0 1 0\n   7 0 loop0 1 0 8 0 0 0 0 0 0 0 0\n");
  EXPECT_EQ(log.at("rankscope_disk_reads_total{device=vda}"), 110);
  EXPECT_EQ(log.at("rankscope_disk_read_bytes_total{device=vda}"), 4000 * 512);
  EXPECT_DOUBLE_EQ(log.at("rankscope_disk_read_bytes_per_second{device=vda}"), 2000 * 512);
  EXPECT_DOUBLE_EQ(log.at("rankscope_disk_written_bytes_per_second{device=vda}"), 500 * 512);
  EXPECT_DOUBLE_EQ(log.at("rankscope_disk_busy_ratio{device=vda}"), 0.25);
  EXPECT_DOUBLE_EQ(log.at("rankscope_disk_io_seconds_total{device=vda}"), 0.35);
  EXPECT_FALSE(log.values.count("rankscope_disk_reads_total{device=vda1}"));
  EXPECT_FALSE(log.values.count("rankscope_disk_reads_total{device=loop0}"));
}

namespace {
std::string StatLine(int pid, const std::string& comm, int ppid, uint64_t utime, uint64_t stime, int threads, uint64_t rss) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice num_threads itrealvalue starttime vsize rss ...
  return fmt::format("{} ({}) S {} 1 1 0 -1 0 0 0 0 0 {} {} 0 0 20 0 {} 0 12345 100000 {} 0 0\n", pid, comm, ppid, utime,
                     stime, threads, rss);
}
}  // namespace

TEST(ProcessMonitor, CpuRssThreadsAndDataLoaderChildren) {
  FakeRoot root;
  const int64_t hz = rt::ClockTicksPerSecond();
  auto write = [&](uint64_t t) {
    root.Write("proc/100/stat", StatLine(100, "python (rank) 0", 1, t, t, 12, 2560));
    root.Write("proc/101/stat", StatLine(101, "pt_data_worker", 100, 2 * t, 0, 1, 10));
    root.Write("proc/102/stat", StatLine(102, "grandchild", 101, 4 * t, 0, 1, 10));
    root.Write("proc/103/stat", StatLine(103, "unrelated", 1, 50 * t, 0, 1, 10));
  };
  rt::WorkerList workers = [] { return std::vector<rt::Worker>{{100, 3, 1, "jobA"}}; };
  rt::ProcessMonitor procs(root.roots(), workers);
  write(uint64_t(hz));
  ASSERT_TRUE(procs.Sample(10 * kSecond).ok());
  write(uint64_t(hz) * 3 / 2);  // +0.5 s user, +0.5 s system over 2 s
  ASSERT_TRUE(procs.Sample(12 * kSecond).ok());
  RecordingLogger log;
  procs.Log(log);
  const std::string l = "{rank=3,job=jobA,pid=100}";
  EXPECT_DOUBLE_EQ(log.at("rankscope_process_cpu_cores" + l), 0.5);
  EXPECT_DOUBLE_EQ(log.at("rankscope_process_children_cpu_cores" + l), (1.0 + 2.0) / 2.0);
  EXPECT_EQ(log.at("rankscope_process_children" + l), 2);
  EXPECT_EQ(log.at("rankscope_process_threads" + l), 12);
  EXPECT_EQ(log.at("rankscope_process_resident_bytes" + l), 2560.0 * rt::PageSize());
  EXPECT_DOUBLE_EQ(log.at("rankscope_process_cpu_seconds_total" + l), 3.0);
}

TEST(ProcessMonitor, RealProcSelf) {
  rt::WorkerList workers = [] { return std::vector<rt::Worker>{{::getpid(), 0, 0, "self"}}; };
  rt::ProcessMonitor procs(rt::SystemRoots{}, workers);
  ASSERT_TRUE(procs.Sample(rt::MonotonicNowNs()).ok());
  RecordingLogger log;
  procs.Log(log);
  const std::string l = fmt::format("{{rank=0,job=self,pid={}}}", ::getpid());
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  const double rss = log.at("rankscope_process_resident_bytes" + l);
  EXPECT_NEAR(rss, double(resident * rt::PageSize()), 0.2 * double(resident * rt::PageSize()));
  EXPECT_GE(log.at("rankscope_process_threads" + l), 1);
}

TEST(TelemetryStore, RingKeepsGaugesBoundedByAgeAndMemory) {
  rt::TelemetryStore store({.retention_ns = 10 * kSecond, .max_bytes = 1 << 20});
  const rt::SeriesId gauge = store.series().Intern("rankscope_cpu_busy_ratio", {});
  const rt::SeriesId counter = store.series().Intern("rankscope_daemon_cpu_seconds_total", {});
  for (int i = 0; i < 30; ++i) store.Publish("proc", i * kSecond, {{gauge, i / 100.0}, {counter, double(i)}});
  const auto stats = store.Stats();
  EXPECT_EQ(stats.frames, 11u);  // t = 19..29: 10 s of history
  EXPECT_EQ(stats.oldest_unix_ns, 19 * kSecond);
  const auto frames = store.Range(20 * kSecond, 22 * kSecond);
  ASSERT_EQ(frames.size(), 3u);
  for (const auto& f : frames) {
    ASSERT_EQ(f.points.size(), 1u);  // the counter is not in the ring
    EXPECT_EQ(f.points[0].series, gauge);
  }
  EXPECT_EQ(store.Latest().size(), 2u);  // /metrics has both

  rt::TelemetryStore small({.retention_ns = 1000 * kSecond, .max_bytes = 2000});
  const rt::SeriesId g = small.series().Intern("rankscope_cpu_busy_ratio", {});
  for (int i = 0; i < 100; ++i) small.Publish("proc", i * kSecond, {{g, 1.0}});
  EXPECT_LE(small.Stats().bytes, 2000u);
  EXPECT_GT(small.Stats().frames, 0u);
  EXPECT_EQ(small.Stats().newest_unix_ns, 99 * kSecond);
}

TEST(PrometheusText, HelpTypeOnceHostLabelEscaping) {
  rt::TelemetryStore store({});
  auto id = [&](std::string_view m, const rt::Labels& l) { return store.series().Intern(m, l); };
  store.Publish("proc", 1, {{id("rankscope_process_threads", {{"rank", "1"}, {"job", "a\"b\\c"}, {"pid", "7"}}), 12},
                            {id("rankscope_cpu_count", {}), 2},
                            {id("rankscope_process_threads", {{"rank", "0"}, {"job", "j"}, {"pid", "6"}}), 3},
                            {id("rankscope_cpu_busy_ratio", {}), 0.25}});
  const std::string text = rt::RenderPrometheus(store.Latest(), "node\n1");
  EXPECT_EQ(text,
            "# HELP rankscope_cpu_count Online CPUs (cpuN lines of /proc/stat)\n"
            "# TYPE rankscope_cpu_count gauge\n"
            "rankscope_cpu_count{host=\"node\\n1\"} 2\n"
            "# HELP rankscope_cpu_busy_ratio Share of all CPUs' time not idle nor in iowait\n"
            "# TYPE rankscope_cpu_busy_ratio gauge\n"
            "rankscope_cpu_busy_ratio{host=\"node\\n1\"} 0.25\n"
            "# HELP rankscope_process_threads Threads of the process\n"
            "# TYPE rankscope_process_threads gauge\n"
            "rankscope_process_threads{host=\"node\\n1\",rank=\"0\",job=\"j\",pid=\"6\"} 3\n"
            "rankscope_process_threads{host=\"node\\n1\",rank=\"1\",job=\"a\\\"b\\\\c\",pid=\"7\"} 12\n");
  EXPECT_EQ(rt::FormatValue(1e15), "1000000000000000");
  EXPECT_EQ(rt::FormatValue(0.1), "0.1");
}

TEST(MetricCatalog, DocumentedAndTheOnlyNamesTheDaemonLogs) {
  std::ifstream doc(std::string(RANKSCOPE_SOURCE_DIR) + "/docs/telemetry.md");
  ASSERT_TRUE(doc) << "docs/telemetry.md is missing";
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  for (const auto& m : rt::AllMetrics()) {
    EXPECT_NE(text.find("`" + std::string(m.name) + "`"), std::string::npos) << m.name << " is not documented";
    const bool counter = m.name.ends_with("_total");
    EXPECT_EQ(counter, m.type == rt::MetricType::kCounter) << m.name;
  }
  // Every monitor on this machine's real /proc and /sys: RecordingLogger fails on any name
  // outside the catalog.
  rt::TelemetryStore store({});
  rt::WorkerList self = [] { return std::vector<rt::Worker>{{::getpid(), 0, 0, "self"}}; };
  std::vector<std::unique_ptr<rt::Monitor>> monitors;
  monitors.push_back(std::make_unique<rt::CpuMonitor>(rt::SystemRoots{}));
  monitors.push_back(std::make_unique<rt::MemoryMonitor>(rt::SystemRoots{}));
  monitors.push_back(std::make_unique<rt::NumaMonitor>(rt::SystemRoots{}));
  monitors.push_back(std::make_unique<rt::NetworkMonitor>(rt::SystemRoots{}));
  monitors.push_back(std::make_unique<rt::InfinibandMonitor>(rt::SystemRoots{}));
  monitors.push_back(std::make_unique<rt::DiskMonitor>(rt::SystemRoots{}));
  monitors.push_back(std::make_unique<rt::ProcessMonitor>(rt::SystemRoots{}, self));
  RecordingLogger log;
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& m : monitors) {
      ASSERT_TRUE(m->Sample(rt::MonotonicNowNs()).ok()) << m->name();
      if (pass == 1) m->Log(log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(log.values.size(), 20u);
  EXPECT_TRUE(log.values.count("rankscope_cpu_busy_ratio{}"));
}

TEST(Sidecar, RoundTripWithEscapedLabels) {
  FakeRoot root;
  rt::TelemetryStore store({});
  const rt::SeriesId a = store.series().Intern("rankscope_cpu_busy_ratio", {});
  const rt::SeriesId b = store.series().Intern("rankscope_process_cpu_cores", {{"rank", "2"}, {"job", "a,b=c%d\te"}, {"pid", "9"}});
  std::vector<rt::Frame> frames = {{100, {{a, 0.5}, {b, 1.25}}}, {200, {{a, 0.75}}}};
  rt::SidecarHeader h{.host = "n1", .capture = "cap", .job = "job", .window_start_ns = 50, .window_end_ns = 250,
                      .coverage_start_ns = 10, .interval_ms = "proc=100 gpu=1000", .gpu = "unavailable: none"};
  const std::string path = (root.dir() / rt::SidecarFileName("n1")).string();
  ASSERT_TRUE(rt::WriteSidecar(path, h, frames, store.series()).ok());
  EXPECT_EQ(rt::FindSidecars(root.dir().string()), std::vector<std::string>{path});
  auto t = rt::ReadSidecar(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->header.host, "n1");
  EXPECT_EQ(t->header.window_end_ns, 250);
  EXPECT_EQ(t->header.gpu, "unavailable: none");
  ASSERT_EQ(t->series.size(), 2u);
  EXPECT_EQ(t->series[0].key.metric, "rankscope_cpu_busy_ratio");
  ASSERT_EQ(t->series[0].samples.size(), 2u);
  EXPECT_EQ(t->series[0].samples[1].unix_ns, 200);
  EXPECT_EQ(t->series[0].samples[1].value, 0.75);
  EXPECT_EQ(rt::LabelValue(t->series[1].key.labels, "job"), "a,b=c%d\te");
  EXPECT_TRUE(t->warnings.empty());
  EXPECT_EQ(rt::SidecarFileName("a/b"), "telemetry.a_b.tsv");

  root.Write("telemetry.bad.tsv", "{\"traceEvents\": []}\n");
  auto bad = rt::ReadSidecar((root.dir() / "telemetry.bad.tsv").string());
  EXPECT_EQ(bad.status().code(), rankscope::StatusCode::kDataLoss);
}

TEST(TelemetryJoin, TimeWeightedMeanOverTheWindow) {
  // Samples every second: value v at t describes (t-1 s, t].
  const std::vector<rt::Sample> s = {{1 * kSecond, 0.2}, {2 * kSecond, 0.4}, {3 * kSecond, 1.0}, {4 * kSecond, 0.0}};
  auto w = ra::SeriesOverWindow(s, 1'500'000'000, 3 * kSecond);  // half of (1,2], all of (2,3]
  EXPECT_DOUBLE_EQ(w.mean, (0.4 * 0.5 + 1.0 * 1.0) / 1.5);
  EXPECT_EQ(w.peak, 1.0);
  EXPECT_DOUBLE_EQ(w.coverage, 1.0);
  EXPECT_EQ(w.samples, 2u);
  // A window shorter than an interval gets the sample that covers it.
  auto short_w = ra::SeriesOverWindow(s, 2'100'000'000, 2'400'000'000);
  EXPECT_DOUBLE_EQ(short_w.mean, 1.0);
  EXPECT_DOUBLE_EQ(short_w.coverage, 1.0);
  // Outside the samples: nothing, coverage 0.
  auto outside = ra::SeriesOverWindow(s, 10 * kSecond, 11 * kSecond);
  EXPECT_EQ(outside.samples, 0u);
  EXPECT_EQ(outside.coverage, 0);
  // The first sample's interval is its next gap: (0, 1] for the sample at 1 s.
  EXPECT_DOUBLE_EQ(ra::SeriesOverWindow(s, 0, kSecond).coverage, 1.0);
}

namespace {

// A one-node table with constant values over [0, 10 s], sampled every second.
rt::TelemetryTable Table(const std::vector<std::pair<rt::SeriesKey, double>>& series) {
  rt::TelemetryTable t;
  t.header.host = "node7";
  for (const auto& [key, value] : series) {
    rt::SeriesSamples s;
    s.key = key;
    for (int i = 0; i <= 10; ++i) s.samples.push_back({i * kSecond, value});
    t.series.push_back(std::move(s));
  }
  return t;
}
rt::SeriesKey K(std::string metric, rt::Labels labels = {}) { return {std::move(metric), std::move(labels), false}; }

std::vector<std::string> Kinds(const std::vector<rankscope::Finding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(std::string(rankscope::FindingKindId(x.kind)));
  return out;
}

}  // namespace

TEST(TelemetryJoin, FindingsFromTheWindow) {
  const rt::Labels rank0 = {{"rank", "0"}, {"job", "j"}, {"pid", "10"}};
  auto node = [&](double busy, double gpu_util, double loader, double steal = 0, double iowait = 0, double mem_used = 10) {
    return Table({{K("rankscope_cpu_count"), 8}, {K("rankscope_cpu_busy_ratio"), busy},
                  {K("rankscope_cpu_utilization_ratio", {{"mode", "steal"}}), steal},
                  {K("rankscope_cpu_utilization_ratio", {{"mode", "iowait"}}), iowait},
                  {K("rankscope_memory_total_bytes"), 100}, {K("rankscope_memory_used_bytes"), mem_used},
                  {K("rankscope_gpu_utilization_ratio", {{"device", "0"}}), gpu_util},
                  {K("rankscope_process_cpu_cores", rank0), 0.5}, {K("rankscope_process_children_cpu_cores", rank0), loader}});
  };
  auto findings = [&](const rt::TelemetryTable& t, int64_t start = 2 * kSecond, int64_t end = 8 * kSecond) {
    return Kinds(ra::FindTelemetryIssues({ra::SummarizeWindow(t, start, end)}));
  };
  EXPECT_EQ(findings(node(0.97, 0.10, 6.0)), std::vector<std::string>{"input_pipeline_bound"});
  EXPECT_EQ(findings(node(0.50, 0.10, 0.0)), std::vector<std::string>{"gpu_mostly_idle"});
  EXPECT_EQ(findings(node(0.50, 0.90, 0.0)), std::vector<std::string>{});
  EXPECT_EQ(findings(node(0.95, 0.90, 0.1)), std::vector<std::string>{"host_cpu_saturated"});
  EXPECT_EQ(findings(node(0.50, 0.90, 0.0, 0.15, 0.3, 99)),
            (std::vector<std::string>{"host_memory_full", "io_wait", "cpu_steal"}));
  // The window outside the samples: not judged.
  EXPECT_TRUE(findings(node(0.97, 0.10, 6.0), 50 * kSecond, 60 * kSecond).empty());

  // Without GPU telemetry, a saturated CPU burned by DataLoader workers.
  auto cpu_only = Table({{K("rankscope_cpu_count"), 2}, {K("rankscope_cpu_busy_ratio"), 1.0},
                         {K("rankscope_process_cpu_cores", rank0), 0.2}, {K("rankscope_process_children_cpu_cores", rank0), 1.5}});
  const auto w = ra::SummarizeWindow(cpu_only, 2 * kSecond, 8 * kSecond);
  EXPECT_DOUBLE_EQ(w.coverage, 1.0);
  ASSERT_EQ(w.mean.processes.size(), 1u);
  EXPECT_EQ(w.mean.processes[0].rank, 0);
  EXPECT_DOUBLE_EQ(*w.mean.processes[0].children_cpu_cores, 1.5);
  EXPECT_EQ(Kinds(ra::FindTelemetryIssues({w})), std::vector<std::string>{"input_pipeline_cpu_bound"});
}

TEST(Nvml, FakeLibraryValuesReachTheMonitor) {
  ::setenv("FAKE_NVML_PID", std::to_string(::getpid()).c_str(), 1);
  rt::WorkerList workers = [] { return std::vector<rt::Worker>{{::getpid(), 5, 1, "gpujob"}}; };
  auto gpu = rt::OpenGpuMonitor(FAKE_NVML_PATH, workers);
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  EXPECT_EQ((*gpu)->device_count(), 2u);
  const int64_t t0 = rt::MonotonicNowNs();
  ASSERT_TRUE((*gpu)->Sample(t0).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE((*gpu)->Sample(rt::MonotonicNowNs()).ok());
  RecordingLogger log;
  (*gpu)->Log(log);
  EXPECT_EQ(log.at("rankscope_gpu_available{}"), 1);
  EXPECT_EQ(log.at("rankscope_gpu_info{device=0,uuid=GPU-fake-0000,name=Fake H100 0}"), 1);
  EXPECT_DOUBLE_EQ(log.at("rankscope_gpu_utilization_ratio{device=0}"), 0.37);
  EXPECT_DOUBLE_EQ(log.at("rankscope_gpu_utilization_ratio{device=1}"), 0.81);
  EXPECT_DOUBLE_EQ(log.at("rankscope_gpu_memory_utilization_ratio{device=1}"), 0.40);
  EXPECT_EQ(log.at("rankscope_gpu_memory_used_bytes{device=0}"), 1610612736.0);
  EXPECT_EQ(log.at("rankscope_gpu_memory_total_bytes{device=1}"), 85899345920.0);
  EXPECT_DOUBLE_EQ(log.at("rankscope_gpu_power_watts{device=0}"), 123.456);
  EXPECT_EQ(log.at("rankscope_gpu_sm_clock_hertz{device=0}"), 1410e6);
  EXPECT_EQ(log.at("rankscope_gpu_memory_clock_hertz{device=0}"), 1593e6);
  EXPECT_EQ(log.at("rankscope_gpu_temperature_celsius{device=1}"), 70);
  EXPECT_EQ(log.at("rankscope_gpu_pcie_receive_bytes_per_second{device=0}"), 2000.0 * 1024);
  EXPECT_EQ(log.at("rankscope_gpu_pcie_transmit_bytes_per_second{device=0}"), 1000.0 * 1024);
  // 100 KiB per ms = 100 MiB/s (the two NVML reads are a few microseconds from our clock reads).
  EXPECT_NEAR(log.at("rankscope_gpu_nvlink_receive_bytes_per_second{device=0}"), 100.0 * 1024 * 1024, 5.0 * 1024 * 1024);
  EXPECT_GT(log.at("rankscope_gpu_nvlink_transmit_bytes_total{device=0}"), 0);
  EXPECT_EQ(log.at(fmt::format("rankscope_process_gpu_memory_bytes{{rank=5,job=gpujob,pid={},device=1}}", ::getpid())),
            2147483648.0);
}

TEST(Nvml, NoDriverIsUnavailableNotAnError) {
  auto gpu = rt::OpenGpuMonitor("/nonexistent/libnvidia-ml.so.1", nullptr);
  ASSERT_FALSE(gpu.ok());
  EXPECT_NE(gpu.status().message().find("no NVIDIA driver"), std::string::npos) << gpu.status().message();
  rt::TelemetryService::Options o;
  o.host = "h";
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  rt::TelemetryService service(o);
  EXPECT_FALSE(service.gpu_available());
  EXPECT_EQ(service.gpu_status().rfind("unavailable: no NVIDIA driver", 0), 0u) << service.gpu_status();
  EXPECT_NE(service.Metrics().find("rankscope_gpu_available{host=\"h\"} 0\n"), std::string::npos);
  EXPECT_EQ(service.LatestJson()["gpu_available"], 0.0);
}

// Series of a departed process (labels that are never logged again) are forgotten once no
// sample of them is left in the ring; the table is bounded besides.
TEST(TelemetryStore, SeriesWithoutSamplesExpire) {
  rt::TelemetryStore store({.retention_ns = 10 * kSecond, .max_bytes = 1 << 20});
  const rt::SeriesId busy = store.series().Intern("rankscope_cpu_busy_ratio", {});
  for (int i = 0; i < 5; ++i) {
    const rt::SeriesId gone = store.series().Intern("rankscope_process_threads", {{"rank", "0"}, {"job", fmt::format("j{}", i)}, {"pid", "9"}});
    store.Publish("proc", i * kSecond, {{busy, 0.5}, {gone, 3}});
  }
  EXPECT_EQ(store.series().size(), 6u);
  for (int i = 5; i < 40; ++i) store.Publish("proc", i * kSecond, {{busy, 0.5}});
  EXPECT_EQ(store.series().size(), 1u);  // only the live one
  EXPECT_EQ(store.series().Get(busy)->metric, "rankscope_cpu_busy_ratio");

  rt::SeriesTable small(3);
  EXPECT_NE(small.Intern("rankscope_cpu_count", {}), rt::kNoSeries);
  EXPECT_NE(small.Intern("rankscope_cpu_busy_ratio", {}), rt::kNoSeries);
  EXPECT_NE(small.Intern("rankscope_process_threads", {{"rank", "1"}}), rt::kNoSeries);
  EXPECT_EQ(small.Intern("rankscope_process_threads", {{"rank", "2"}}), rt::kNoSeries);
  EXPECT_EQ(small.dropped(), 1u);
}
