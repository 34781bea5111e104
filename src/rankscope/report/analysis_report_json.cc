// JSON for `rankscope analyze --json`. Every field is documented in docs/report-schema.md; the
// schema file docs/report-schema.json is checked against real reports in the tests.
#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "rankscope/report/analysis_report.h"
#include "rankscope/report/finding_json.h"

namespace rankscope {
namespace {

using nlohmann::json;

double Share(double part, int64_t whole) { return whole > 0 ? part / static_cast<double>(whole) : 0.0; }

json Optional(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

json FunctionRowJson(const FunctionStat& f, int64_t window, double flag) {
  json j = {{"name", f.name},
            {"count", f.count},
            {"total_ns", f.total_ns},
            {"median_ns", f.median_ns},
            {"p99_ns", f.p99_ns},
            {"max_ns", f.max_ns},
            {"in_window_ns", f.in_window_ns},
            {"proportion", Share(static_cast<double>(f.in_window_ns), window)},
            {"bottleneck_ns", std::llround(f.bottleneck_ns)},
            {"bottleneck_ratio", Share(f.bottleneck_ns, window)},
            {"flagged", Share(f.bottleneck_ns, window) > flag}};
  if (!f.detail.empty()) j["detail"] = f.detail;
  if (f.cls != ActivityClass::kNone) j["class"] = ActivityClassName(f.cls);
  if (f.bytes >= 0) j["bytes"] = f.bytes;
  if (f.wait) j["wait"] = true;
  if (f.stalls > 0) {
    j["stalls"] = f.stalls;
    j["stall_ns"] = f.stall_ns;
  }
  return j;
}

json TableJson(const FunctionTable& t, int64_t window, double flag) {
  json rows = json::array();
  for (const FunctionStat& f : t.rows) rows.push_back(FunctionRowJson(f, window, flag));
  return {{"rows", rows},
          {"instances", t.instances},
          {"omitted_rows", t.omitted_rows},
          {"omitted_in_window_ns", t.omitted_in_window_ns},
          {"omitted_max_in_window_ns", t.omitted_max_in_window_ns}};
}

json PhasesJson(const std::array<int64_t, kNumStepPhases>& ns) {
  json j = json::object();
  for (int p = 0; p < kNumStepPhases; ++p) j[std::string(StepPhaseName(static_cast<StepPhase>(p)))] = ns[p];
  return j;
}

json StepsJson(const RankSummary& r) {
  json steps = json::array();
  for (const StepSummary& s : r.steps) {
    steps.push_back({{"number", s.number},
                     {"start_ns", s.start_ns},
                     {"end_ns", s.end_ns},
                     {"duration_ns", s.duration_ns()},
                     {"cpu_phases_ns", PhasesJson(s.cpu_phase_ns)},
                     {"gpu_phases_ns", PhasesJson(s.gpu_phase_ns)},
                     {"gpu_busy_ns", s.gpu_busy_ns},
                     {"compute_ns", s.compute_ns},
                     {"communication_ns", s.communication_ns},
                     {"gpu_start_ns", s.gpu_start_ns < 0 ? json(nullptr) : json(s.gpu_start_ns)},
                     {"gpu_end_ns", s.gpu_end_ns < 0 ? json(nullptr) : json(s.gpu_end_ns)},
                     {"host_compute_ns", s.host_compute_ns},
                     {"comm_exposed_ns", s.comm_exposed_ns},
                     {"host_gpu_wait_ns", s.host_gpu_wait_ns},
                     // 64 bits do not fit a JSON number exactly: hex text, null without shapes.
                     {"work_signature", s.shaped_ops > 0 ? json(fmt::format("{:016x}", s.work_signature)) : json(nullptr)},
                     {"shaped_ops", s.shaped_ops}});
  }
  return steps;
}

json GpuJson(const RankSummary& r) {
  if (!r.has_gpu) return nullptr;
  const GpuSummary& g = r.gpu;
  const int64_t w = r.window_ns();
  json classes = json::object();
  for (int c = 0; c < kNumActivityClasses; ++c) {
    classes[std::string(ActivityClassName(static_cast<ActivityClass>(c)))] = {
        {"busy_ns", g.busy_ns[c]},
        {"exposed_ns", g.exposed_ns[c]},
        {"exposed_share", Share(static_cast<double>(g.exposed_ns[c]), w)}};
  }
  classes["idle"] = {{"busy_ns", 0}, {"exposed_ns", g.idle_ns}, {"exposed_share", Share(static_cast<double>(g.idle_ns), w)}};
  const int64_t comm = g.busy_ns[static_cast<int>(ActivityClass::kCommunication)];
  return {{"devices", g.devices},
          {"activities", g.activities},
          {"busy_ns", g.busy_ns_all},
          {"utilization", Share(static_cast<double>(g.busy_ns_all), w)},
          {"classes", classes},
          {"comm_compute_overlap_ns", g.comm_compute_overlap_ns},
          {"comm_compute_overlap", comm > 0 ? json(Share(static_cast<double>(g.comm_compute_overlap_ns), comm)) : json(nullptr)}};
}

json CommunicationJson(const RankSummary& r) {
  const int64_t w = r.window_ns();
  json types = json::array();
  for (const CollectiveType& t : r.collective_types) {
    types.push_back({{"op", t.op}, {"algorithm", t.algorithm}, {"protocol", t.protocol}, {"dtype", t.dtype},
                     {"group_size", t.group_size > 0 ? json(t.group_size) : json(nullptr)},
                     {"on_gpu", t.on_gpu}, {"count", t.count}, {"total_ns", t.total_ns},
                     {"median_ns", t.median_ns}, {"p99_ns", t.p99_ns}, {"max_ns", t.max_ns},
                     {"bytes", t.bytes >= 0 ? json(t.bytes) : json(nullptr)},
                     {"algbw_gbps", t.algbw_gbps > 0 ? json(t.algbw_gbps) : json(nullptr)},
                     {"busbw_gbps", t.busbw_gbps > 0 ? json(t.busbw_gbps) : json(nullptr)},
                     {"busy_ns", t.busy_ns}, {"exposed_ns", std::llround(t.exposed_ns)},
                     {"exposed_share", Share(t.exposed_ns, w)},
                     {"overlap_ns", t.overlap_ns},
                     {"overlap", t.busy_ns > 0 ? json(Share(static_cast<double>(t.overlap_ns), t.busy_ns)) : json(nullptr)}});
  }
  json groups = json::array();
  for (const ProcessGroupRef& g : r.process_groups) {
    groups.push_back({{"name", g.name}, {"desc", g.desc}, {"ranks", g.ranks},
                      {"size", g.size > 0 ? json(g.size) : json(nullptr)}});
  }
  // Instances as rows of arrays (compact: there can be many); the column names come first.
  json rows = json::array();
  for (const CollectiveInstance& c : r.collectives) {
    rows.push_back({c.type, c.group, c.seq >= 0 ? json(c.seq) : json(nullptr), c.index_in_group,
                    c.step >= 0 ? json(c.step) : json(nullptr), c.start_ns, c.end_ns,
                    c.launch_ns >= 0 ? json(c.launch_ns) : json(nullptr), c.bytes >= 0 ? json(c.bytes) : json(nullptr),
                    c.stream});
  }
  return {{"types", types},
          {"process_groups", groups},
          {"busy_ns", r.comm_busy_ns},
          {"host_compute_ns", r.host_compute_ns},
          {"host_compute_overlap_ns", r.comm_host_overlap_ns},
          {"instance_columns", {"type", "group", "seq", "index_in_group", "step", "start_ns", "end_ns", "launch_ns",
                                "bytes", "stream"}},
          {"instances", rows},
          {"omitted_instances", r.omitted_collectives}};
}

json LaunchStatsJson(const LaunchDelayStats& s) {
  json j = {{"count", s.count}, {"mean_ns", s.mean_ns}, {"median_ns", s.median_ns}, {"p99_ns", s.p99_ns},
            {"max_ns", s.max_ns}, {"launch_call_mean_ns", s.launch_call_mean_ns}};
  if (!s.api.empty()) j["api"] = s.api;
  return j;
}

json LaunchJson(const RankSummary& r) {
  json by_api = json::array();
  for (const LaunchDelayStats& s : r.launch.by_api) by_api.push_back(LaunchStatsJson(s));
  json histogram = json::array();
  for (size_t b = 0; b < r.launch.histogram.size(); ++b) {
    histogram.push_back({{"below_ns", b < kLaunchDelayBuckets.size() ? json(kLaunchDelayBuckets[b]) : json(nullptr)},
                         {"count", r.launch.histogram[b]}});
  }
  json queues = json::array();
  for (const QueueDepth& q : r.launch.queues) {
    queues.push_back({{"device", q.device}, {"stream", q.stream}, {"max_depth", q.max_depth},
                      {"mean_depth", q.mean_depth}, {"empty_ns", q.empty_ns}});
  }
  return {{"delay", LaunchStatsJson(r.launch.all)}, {"by_api", by_api}, {"histogram", histogram},
          {"unlinked_activities", r.launch.unlinked_activities}, {"queue_depth", queues}};
}

json IdleJson(const RankSummary& r) {
  json streams = json::array();
  for (const StreamIdle& s : r.idle_by_stream) {
    const int64_t idle = s.host_wait_ns + s.kernel_wait_ns + s.other_ns;
    streams.push_back({{"device", s.device}, {"stream", s.stream}, {"busy_ns", s.busy_ns},
                       {"host_wait_ns", s.host_wait_ns}, {"kernel_wait_ns", s.kernel_wait_ns},
                       {"other_ns", s.other_ns}, {"edge_ns", s.edge_ns}, {"gaps", s.gaps},
                       {"host_wait_ratio", idle > 0 ? json(Share(static_cast<double>(s.host_wait_ns), idle)) : json(nullptr)}});
  }
  return {{"kernel_wait_threshold_ns", r.kernel_wait_threshold_ns}, {"streams", streams}};
}

json MemoryJson(const RankSummary& r) {
  json devices = json::array();
  for (const MemoryPeak& p : r.memory.devices) {
    auto opt = [](int64_t v) { return v >= 0 ? json(v) : json(nullptr); };
    devices.push_back({{"device_type", p.device_type}, {"device_id", p.device_id},
                       {"peak_allocated_bytes", opt(p.peak_allocated)}, {"peak_reserved_bytes", opt(p.peak_reserved)},
                       {"trace_peak_allocated_bytes", opt(p.trace_peak_allocated)}, {"events", p.events}});
  }
  json ops = json::array();
  for (const OpAllocation& a : r.memory.top_allocators) ops.push_back({{"op", a.op}, {"count", a.count}, {"bytes", a.bytes}});
  return {{"devices", devices}, {"top_allocators", ops}};
}

}  // namespace

nlohmann::json RankSummaryToJson(const RankSummary& r, double flag) {
  const int64_t w = r.window_ns();
  json devices = r.device_names;
  return {
      {"rank", r.rank_resolved ? json(r.rank.rank) : json(nullptr)},
      {"rank_source", r.rank_resolved ? RankSourceName(r.rank.source) : "unresolved"},
      {"path", r.path},
      {"world_size", Optional(r.world_size)},
      {"backend", r.backend},
      {"host_name", r.host_name},
      {"devices", devices},
      {"cpu_sched", r.cpu_sched.known() ? json{{"run_ns", r.cpu_sched.run_ns}, {"wait_ns", r.cpu_sched.wait_ns},
                                              {"threads", r.cpu_sched.threads}}
                                        : json(nullptr)},
      {"window", {{"mode", WindowModeName(r.window_mode)}, {"start_ns", r.window_start_ns}, {"end_ns", r.window_end_ns},
                  {"duration_ns", w}, {"steps", r.steps.size()}, {"steps_in_trace", r.steps_in_trace},
                  {"step_source", r.step_source}}},
      {"steps", StepsJson(r)},
      {"gpu", GpuJson(r)},
      {"kernels", TableJson(r.kernels, w, flag)},
      {"memory_ops", TableJson(r.memory_ops, w, flag)},
      {"communication", CommunicationJson(r)},
      {"cuda_runtime", TableJson(r.runtime_calls, w, flag)},
      {"cpu_ops", TableJson(r.cpu_ops, w, flag)},
      {"python_functions",
       [&] {
         json t = TableJson(r.python_paths, w, flag);
         t["collector_threads"] = r.collector_threads;  // rankscope's own threads, left out
         return t;
       }()},
      {"untraced", TableJson(r.untraced, w, flag)},
      {"idle", IdleJson(r)},
      {"launch", LaunchJson(r)},
      {"memory", MemoryJson(r)},
      {"warnings", r.warnings},
      {"events", {{"total", r.trace_events}, {"skipped", r.skipped_events}}},
      {"timings", {{"ingest_ns", r.ingest_ns}, {"analysis_ns", r.analysis_ns}}},
  };
}

namespace {

json TelemetryToJson(const JobReport& rep) {
  if (!rep.has_telemetry) return nullptr;
  json nodes = json::array();
  for (const auto& n : rep.telemetry) nodes.push_back(analysis::ToJson(n));
  return {{"nodes", nodes}};
}

}  // namespace

// Everything but "ranks": small whatever the number of ranks.
json ReportHeadJson(const JobReport& rep) {
  std::optional<int64_t> world;
  std::string backend;
  for (const RankSummary& r : rep.ranks) {
    if (r.world_size) world = r.world_size;
    if (!r.backend.empty()) backend = r.backend;
  }
  json errors = json::array();
  for (const FileError& e : rep.errors) errors.push_back({{"path", e.path}, {"error", e.message}});
  const AnalyzeOptions& o = rep.options;
  return {
      {"schema", kReportSchema},
      {"generator", {{"name", "rankscope"}, {"version", "0.1.0"}}},
      {"options", {{"window", o.window}, {"steps", o.steps.empty() ? json(nullptr) : json(o.steps)},
                   {"comm_patterns", o.comm_patterns}, {"kernel_wait_threshold_ns", o.kernel_wait_threshold_ns},
                   {"flag_share", o.flag_share}}},
      {"job", {{"files", rep.ranks.size() + rep.errors.size()}, {"ranks_analysed", rep.ranks.size()},
               {"world_size", Optional(world)}, {"backend", backend}}},
      {"cluster", rep.cluster ? ClusterToJson(*rep.cluster) : json(nullptr)},
      {"findings", FindingsToJson(rep.findings)},
      {"telemetry", TelemetryToJson(rep)},
      {"warnings", rep.warnings},
      {"errors", errors},
  };
}

namespace {

// Appends `value` to `out` exactly as value.dump(1) with every line after the first moved
// `levels` levels deeper — nlohmann's serializer takes the starting indent, so the text is made
// once (re-indenting a dumped string copied every byte again: a tenth of a 4,096-rank --json).
void AppendIndented(const json& value, unsigned levels, std::string* out) {
  nlohmann::detail::serializer<json> s(nlohmann::detail::output_adapter<char>(*out), ' ',
                                       nlohmann::json::error_handler_t::strict);
  s.dump(value, /*pretty_print=*/true, /*ensure_ascii=*/false, /*indent_step=*/1, levels);
}

}  // namespace

nlohmann::json AnalysisReportToJson(const JobReport& rep) {
  json report = ReportHeadJson(rep);
  json ranks = json::array();
  for (const RankSummary& r : rep.ranks) ranks.push_back(RankSummaryToJson(r, rep.options.flag_share));
  report["ranks"] = std::move(ranks);
  return report;
}

void WriteAnalysisReportJson(const JobReport& rep, std::ostream& out) {
  const json head = ReportHeadJson(rep);
  std::string buf;  // one rank (or head value) at a time, reused
  bool first = true;
  auto key = [&](const std::string& k) {
    out << (first ? "{\n " : ",\n ") << json(k).dump() << ": ";
    first = false;
  };
  auto write = [&](const json& value, unsigned levels) {
    buf.clear();
    AppendIndented(value, levels, &buf);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  };
  auto ranks = [&] {
    key("ranks");
    out << "[";
    for (size_t i = 0; i < rep.ranks.size(); ++i) {
      out << (i ? ",\n  " : "\n  ");
      write(RankSummaryToJson(rep.ranks[i], rep.options.flag_share), 2);
    }
    out << (rep.ranks.empty() ? "]" : "\n ]");
  };
  bool ranks_done = false;
  for (const auto& [k, v] : head.items()) {  // keys in order, as AnalysisReportToJson(...).dump() writes them
    if (!ranks_done && k > "ranks") {
      ranks();
      ranks_done = true;
    }
    key(k);
    write(v, 1);
  }
  if (!ranks_done) ranks();
  out << "\n}\n";
}

}  // namespace rankscope
