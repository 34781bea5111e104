#include "rankscope/report/trace_file_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <set>
#include <unordered_set>

#include "rankscope/analysis/comm_kernel_name.h"

namespace rankscope {
namespace {

// "ProfilerStep#12" -> 12
std::optional<int64_t> ProfilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || ptr != name.data() + name.size()) return std::nullopt;
  return n;
}

// "nccl:all_reduce", "gloo:broadcast" -> the collective part.
std::optional<std::string_view> CollectiveAnnotation(std::string_view name) {
  for (std::string_view prefix : {"nccl:", "gloo:", "rccl:", "hccl:", "mpi:", "ucc:"}) {
    if (name.substr(0, prefix.size()) == prefix && name.size() > prefix.size()) return name.substr(prefix.size());
  }
  return std::nullopt;
}

bool IsCpuSide(ActivityKind c) {
  return c == ActivityKind::kHostOp || c == ActivityKind::kAnnotation || c == ActivityKind::kPythonFrame;
}

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
    if (IsCpuSide(c)) {
      cpu_tracks.insert(s.track[i]);
      if (auto coll = CollectiveAnnotation(name)) ++info->collectives[CanonicalCollectiveName(*coll)].annotations;
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

std::string FormatBytes(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MiB", b / double(1ull << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

std::string FormatUtc(int64_t ns) {
  const std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:06d} UTC", buf, (ns % 1000000000) / 1000);
}

std::string FormatDuration(int64_t ns) {
  if (ns >= 1000000000) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1000000) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} us", ns / 1e3);
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
  line("size", fmt::format("{} on disk{}, {} JSON", FormatBytes(i.file_bytes), i.gzip ? " (gzip)" : "",
                           FormatBytes(i.json_bytes)));
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
    line("time span", fmt::format("{} .. +{}", FormatUtc(i.start_ns), FormatDuration(i.end_ns - i.start_ns)));
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
