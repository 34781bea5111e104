#include "rankscope/report/trace_file_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "rankscope/analysis/comm_kernel_name.h"
#include "rankscope/analysis/window.h"
#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

void CountLinks(const TraceModel& m, TraceFileInfo* info) {
  const SliceTable& s = m.slices;
  std::unordered_set<int64_t> launch_correlations, cpu_external_ids;
  for (size_t i = 0; i < s.size(); ++i) {
    const ActivityKind c = s.kind[i];
    if ((c == ActivityKind::kRuntimeCall || c == ActivityKind::kDriverCall) && s.correlation[i] != kNoId) {
      launch_correlations.insert(s.correlation[i]);
    } else if ((c == ActivityKind::kHostOp || c == ActivityKind::kAnnotation) && s.external_id[i] != kNoId) {
      cpu_external_ids.insert(s.external_id[i]);
    }
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    ++info->gpu_activities;
    if (s.correlation[i] != kNoId) {
      ++info->gpu_with_correlation;
      info->gpu_linked_to_launch += launch_correlations.count(s.correlation[i]);
    }
    if (s.external_id[i] != kNoId) {
      ++info->gpu_with_external_id;
      info->gpu_linked_to_cpu_op += cpu_external_ids.count(s.external_id[i]);
    }
  }
}

void CountCategories(const TraceModel& m, TraceFileInfo* info) {
  const IngestStats& st = m.stats;
  info->by_category = st.by_category;
  if (st.without_category > 0) info->by_category["(none)"] += st.without_category;
  for (int c = 0; c < 128; ++c) {
    if (st.by_phase[c] > 0) info->by_phase[static_cast<char>(c)] = st.by_phase[c];
  }
}

void CountSlices(const TraceModel& m, TraceFileInfo* info) {
  const SliceTable& s = m.slices;
  std::set<int64_t> steps;
  std::unordered_set<StringId> kernel_names;
  std::set<std::pair<int32_t, int32_t>> streams;
  std::set<int32_t> gpus;
  std::set<uint32_t> cpu_tracks;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < s.size(); ++i) {
    lo = std::min(lo, s.ts[i]);
    hi = std::max(hi, s.ts[i] + s.dur[i]);
    const ActivityKind c = s.kind[i];
    const std::string_view name = m.Str(s.name[i]);
    if (auto step = ProfilerStepNumber(name)) {
      ++info->profiler_step_events;
      if (c != ActivityKind::kDeviceAnnotation) steps.insert(*step);
    }
    if (c == ActivityKind::kDeviceKernel) {
      ++info->kernels;
      kernel_names.insert(s.name[i]);
      CommKernelName decoded;
      if (DecodeCommKernelName(name, &decoded)) ++info->collectives[CanonicalCollectiveName(decoded.op)].kernels;
    }
    if (const GpuActivityInfo* g = m.GpuInfo(i); g != nullptr && g->stream >= 0) {
      streams.emplace(g->device, g->stream);  // stream -1: Event/Context Sync, not on a stream
      gpus.insert(g->device);
    }
    if (IsHostActivity(c)) {
      cpu_tracks.insert(s.track[i]);
      if (const std::string_view op = CollectiveAnnotationOp(name); !op.empty()) {
        ++info->collectives[CanonicalCollectiveName(op)].annotations;
      }
    }
  }
  for (const CollectiveInfo& ci : m.collectives) {
    if (IsDeviceActivity(s.kind[ci.slice])) continue;  // counted as a kernel above
    if (ci.source == CollectiveSource::kAnnotationShape) continue;  // counted as an annotation
    ++info->collectives[CanonicalCollectiveName(m.Str(ci.collective_name))].cpu_ops;
  }
  info->slices = s.size();
  info->distinct_kernels = kernel_names.size();
  info->profiler_steps = steps.size();
  if (!steps.empty()) {
    info->first_step = *steps.begin();
    info->last_step = *steps.rbegin();
  }
  info->gpu_streams = streams.size();
  info->active_gpus.assign(gpus.begin(), gpus.end());
  info->cpu_threads = cpu_tracks.size();
  if (s.size() > 0) {
    info->has_span = true;
    info->start_ns = m.AbsoluteNs(lo);
    info->end_ns = m.AbsoluteNs(hi);
  }
}

nlohmann::json SkipsToJson(const SkipCounts& skips) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [reason, e] : skips.by_reason) {
    out.push_back({{"reason", reason}, {"count", e.count}, {"first_byte_offset", e.first_offset}});
  }
  return out;
}

}  // namespace

TraceFileInfo BuildTraceFileInfo(const TraceModel& m) {
  TraceFileInfo info;
  info.path = m.path;
  info.file_bytes = m.stats.file_bytes;
  info.json_bytes = m.stats.json_bytes;
  info.gzip = m.stats.gzip;
  info.distributed_rank = m.info.distributed.rank;
  info.world_size = m.info.distributed.world_size;
  info.backend = m.info.distributed.backend;
  info.host_name = m.info.host_name;
  info.devices = m.info.devices;
  info.has_device_properties = m.info.has_device_properties;
  info.timestamps_relative = m.info.base_time_ns.has_value();
  info.elements = m.stats.elements;
  info.instants = m.instants.size();
  info.flows = m.flows.size();
  info.memory_events = m.memory.size();
  info.skipped = m.stats.skipped;
  info.ignored_fields = m.stats.ignored_fields;
  CountCategories(m, &info);
  CountSlices(m, &info);
  CountLinks(m, &info);
  return info;
}

nlohmann::json TraceFileInfoToJson(const TraceFileInfo& i) {
  nlohmann::json j;
  j["path"] = i.path;
  j["file_bytes"] = i.file_bytes;
  j["json_bytes"] = i.json_bytes;
  j["gzip"] = i.gzip;
  j["rank"] = i.rank_resolved ? nlohmann::json(i.rank.rank) : nlohmann::json(nullptr);
  j["rank_source"] = i.rank_resolved ? RankSourceName(i.rank.source) : "unresolved";
  j["world_size"] = i.world_size ? nlohmann::json(*i.world_size) : nlohmann::json(nullptr);
  j["backend"] = i.backend;
  j["host_name"] = i.host_name;
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceProperties& d : i.devices) {
    devices.push_back({{"id", d.id}, {"name", d.name}, {"total_global_mem", d.total_global_mem},
                       {"compute_capability", fmt::format("{}.{}", d.compute_major, d.compute_minor)},
                       {"num_sms", d.num_sms}});
  }
  j["devices"] = devices;
  j["active_gpus"] = i.active_gpus;
  j["gpu_streams"] = i.gpu_streams;
  j["cpu_threads"] = i.cpu_threads;
  if (i.has_span) {
    j["span"] = {{"start_ns", i.start_ns}, {"end_ns", i.end_ns}, {"duration_ns", i.end_ns - i.start_ns},
                 {"timestamps_relative_to_base", i.timestamps_relative}};
  } else {
    j["span"] = nullptr;
  }
  j["profiler_steps"] = {{"count", i.profiler_steps}, {"first", i.first_step}, {"last", i.last_step},
                         {"events", i.profiler_step_events}};
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [ph, n] : i.by_phase) phases[std::string(1, ph)] = n;
  j["events"] = {{"total", i.elements}, {"by_phase", phases}, {"by_category", i.by_category},
                 {"slices", i.slices}, {"instants", i.instants}, {"flows", i.flows},
                 {"memory", i.memory_events}};
  j["kernels"] = {{"count", i.kernels}, {"distinct", i.distinct_kernels}};
  nlohmann::json colls = nlohmann::json::object();
  for (const auto& [name, c] : i.collectives) {
    colls[name] = {{"kernels", c.kernels}, {"cpu_ops", c.cpu_ops}, {"annotations", c.annotations}};
  }
  j["collectives"] = colls;
  j["links"] = {{"gpu_activities", i.gpu_activities},
                {"with_correlation", i.gpu_with_correlation},
                {"linked_to_launch", i.gpu_linked_to_launch},
                {"with_external_id", i.gpu_with_external_id},
                {"linked_to_cpu_op", i.gpu_linked_to_cpu_op}};
  j["skipped"] = {{"total", i.skipped.total()}, {"reasons", SkipsToJson(i.skipped)}};
  j["ignored_fields"] = {{"total", i.ignored_fields.total()}, {"reasons", SkipsToJson(i.ignored_fields)}};
  return j;
}

std::string RenderTraceFileInfo(const TraceFileInfo& i) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<18} {}\n", label, value);
  };
  out += fmt::format("{}\n", i.path);
  line("size", fmt::format("{} on disk{}, {} JSON", FormatByteCount(static_cast<int64_t>(i.file_bytes)), i.gzip ? " (gzip)" : "",
                           FormatByteCount(static_cast<int64_t>(i.json_bytes))));
  std::string rank = i.rank_resolved ? fmt::format("{} (from {})", i.rank.rank, RankSourceName(i.rank.source))
                                     : std::string("unresolved");
  line("rank", fmt::format("{}, world size {}, backend {}", rank,
                           i.world_size ? fmt::format("{}", *i.world_size) : "unknown",
                           i.backend.empty() ? "unknown" : i.backend));
  if (!i.host_name.empty()) line("host", i.host_name);
  if (!i.has_device_properties) {
    line("devices", "not recorded (no deviceProperties)");
  } else if (i.devices.empty()) {
    line("devices", "none (CPU only)");
  } else {
    std::map<std::string, int> names;
    for (const auto& d : i.devices) ++names[d.name];
    std::string list;
    for (const auto& [name, n] : names) list += fmt::format("{}{}x {}", list.empty() ? "" : ", ", n, name);
    line("devices", list);
  }
  line("gpu activity", i.active_gpus.empty() ? std::string("none")
                                              : fmt::format("devices [{}], {} stream(s)",
                                                            fmt::join(i.active_gpus, ", "), i.gpu_streams));
  if (i.has_span) {
    line("time span", fmt::format("{} .. +{}", FormatUtcTime(i.start_ns), FormatNs(static_cast<double>(i.end_ns - i.start_ns))));
  } else {
    line("time span", "no timed events");
  }
  line("profiler steps", i.profiler_steps == 0 ? std::string("none")
                                               : fmt::format("{} (#{}..#{})", i.profiler_steps, i.first_step, i.last_step));
  std::string phases;
  for (const auto& [ph, n] : i.by_phase) phases += fmt::format("{}{}:{}", phases.empty() ? "" : " ", ph, n);
  line("events", fmt::format("{} ({})", i.elements, phases));
  std::vector<std::pair<std::string, uint64_t>> cats(i.by_category.begin(), i.by_category.end());
  std::sort(cats.begin(), cats.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (const auto& [cat, n] : cats) line("", fmt::format("{:>10}  {}", n, cat));
  line("kernels", fmt::format("{} ({} distinct)", i.kernels, i.distinct_kernels));
  if (i.collectives.empty()) {
    line("collectives", "none");
  } else {
    for (const auto& [name, c] : i.collectives) {
      line(&name == &i.collectives.begin()->first ? "collectives" : "",
           fmt::format("{:<20} kernels {:>6}  cpu ops {:>6}  annotations {:>6}", name, c.kernels, c.cpu_ops, c.annotations));
    }
  }
  if (i.gpu_activities > 0) {
    line("cpu-gpu links", fmt::format("{} of {} GPU activities linked to a launch call, {} to a CPU op",
                                      i.gpu_linked_to_launch, i.gpu_activities, i.gpu_linked_to_cpu_op));
  }
  auto skips = [&](std::string_view label, const SkipCounts& s) {
    if (s.total() == 0) return line(label, "none");
    bool first = true;
    for (const auto& [reason, e] : s.by_reason) {
      line(first ? label : "", fmt::format("{:>10}  {} (first at byte {})", e.count, reason, e.first_offset));
      first = false;
    }
  };
  skips("skipped events", i.skipped);
  if (i.ignored_fields.total() > 0) skips("ignored fields", i.ignored_fields);
  return out;
}

}  // namespace rankscope
