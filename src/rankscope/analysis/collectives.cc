#include "rankscope/analysis/collectives.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "rankscope/analysis/comm_kernel_name.h"
#include "rankscope/analysis/gpu_functions.h"
#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

// One instance before it is summarised.
struct Pending {
  int64_t start, end, launch, bytes, seq, step;
  uint32_t type, group;
  int32_t stream;
  double exposed_ns;
  bool timed;  // the span is the transfer itself (GPU kernel, gloo), not just the CPU call
};

using TypeKey = std::tuple<std::string, std::string, std::string, std::string, int64_t, bool>;
using GroupKey = std::tuple<std::string, std::string, std::string>;

// "void ncclKernel_X(...)" / "dpsk::ep::dispatch<...>(...)" -> a short, stable name.
std::string ShortKernelName(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  for (char stop : {'(', '<'}) {
    if (const size_t p = name.find(stop); p != std::string_view::npos && p > 0) name = name.substr(0, p);
  }
  return std::string(name);
}

int64_t StepAt(const std::vector<ProfilerStep>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t, [](int64_t x, const ProfilerStep& s) { return x < s.start; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->end ? it->number : -1;
}

class Builder {
 public:
  Builder(const TraceModel& m, const Window& w, const CollectiveInputs& in, RankSummary* out)
      : m_(m), w_(w), in_(in), out_(out) {
    for (size_t k = 0; k < m.collectives.size(); ++k) {
      const CollectiveInfo& c = m.collectives[k];
      const ActivityKind kind = m.slices.kind[c.slice];
      if (!IsDeviceActivity(kind) && c.source == CollectiveSource::kArgs && m.slices.external_id[c.slice] != kNoId) {
        by_external_id_.emplace_back(m.slices.external_id[c.slice], static_cast<uint32_t>(k));
      }
    }
    std::sort(by_external_id_.begin(), by_external_id_.end());
  }

  void AddGpu(size_t activity) {
    const GpuActivity& a = (*in_.activities)[activity];
    const std::string_view name = m_.Str(m_.slices.name[a.slice]);
    CommKernelName decoded;
    const bool known = DecodeCommKernelName(name, &decoded);
    const CollectiveInfo* info = InfoFor(a.slice);
    std::string op = info ? CanonicalCollectiveName(m_.Str(info->collective_name))
                          : known ? CanonicalCollectiveName(decoded.op) : ShortKernelName(name);
    std::string dtype = info && info->dtype != StringPool::kEmptyId ? std::string(m_.Str(info->dtype)) : decoded.dtype;
    const int64_t launch = a.launch != kNoSlice ? m_.slices.ts[a.launch] : -1;
    Add(a.start, a.end, launch, a.stream, info, std::move(op), decoded.algorithm, decoded.protocol, std::move(dtype),
        true, in_.timeline->owned_ns[activity], StepAt(*in_.steps, launch >= 0 ? launch : a.start), true);
  }

  // `exposed_ns`: the instance's share of the instants in which CPU collectives run and the
  // training threads compute nothing (1/k each when k collectives run together).
  // Only a CPU backend's span (gloo) is the transfer; for NCCL it is the CPU call that
  // enqueued the kernel, so its duration says nothing about bandwidth.
  void AddCpu(const CollectiveInfo& info, double exposed_ns) {
    const int64_t start = m_.slices.ts[info.slice], end = start + m_.slices.dur[info.slice];
    std::string dtype = info.dtype != StringPool::kEmptyId ? std::string(m_.Str(info.dtype)) : "";
    const std::string_view name = m_.Str(m_.slices.name[info.slice]);
    const bool timed = info.source == CollectiveSource::kAnnotationShape ? name.substr(0, 5) == "gloo:"
                                                                        : m_.info.distributed.backend == "gloo";
    Add(start, end, start, -1, &info, CanonicalCollectiveName(m_.Str(info.collective_name)), "", "", std::move(dtype),
        false, exposed_ns, StepAt(*in_.steps, start), timed);
  }

  void Finish();

 private:
  const CollectiveInfo* InfoFor(uint32_t slice) const {
    auto it = std::lower_bound(m_.collectives.begin(), m_.collectives.end(), slice,
                               [](const CollectiveInfo& c, uint32_t s) { return c.slice < s; });
    if (it != m_.collectives.end() && it->slice == slice) return &*it;
    const int64_t ext = m_.slices.external_id[slice];
    if (ext == kNoId) return nullptr;
    auto jt = std::lower_bound(by_external_id_.begin(), by_external_id_.end(), std::make_pair(ext, 0u));
    return jt != by_external_id_.end() && jt->first == ext ? &m_.collectives[jt->second] : nullptr;
  }

  // The collective's own "Group size"; else the size every configured process group shares;
  // else, with no group configuration at all, the world.
  int64_t GroupSize(const CollectiveInfo* info) const {
    if (info && info->group_size > 0) return info->group_size;
    const DistributedInfo& d = m_.info.distributed;
    if (d.pg_config.empty()) return d.world_size.value_or(-1);
    const int64_t size = d.pg_config.front().size;
    for (const ProcessGroupConfig& pg : d.pg_config) {
      if (pg.size != size) return -1;
    }
    return size > 0 ? size : -1;
  }

  int64_t Bytes(const CollectiveInfo* info, const std::string& op, const std::string& dtype) const {
    if (!info) return -1;
    int64_t n = op == "all_gather" || op == "gather" || op == "recv" ? info->out_msg_nelems : info->in_msg_nelems;
    if (n < 0) n = std::max(info->in_msg_nelems, info->out_msg_nelems);
    const int size = ElementBytes(dtype);
    return n >= 0 && size > 0 ? n * size : -1;
  }

  uint32_t GroupIndex(const CollectiveInfo* info) {
    GroupKey key{info ? std::string(m_.Str(info->pg_name)) : "", info ? std::string(m_.Str(info->pg_desc)) : "",
                 info ? std::string(m_.Str(info->pg_ranks)) : ""};
    auto [it, inserted] = groups_.try_emplace(key, static_cast<uint32_t>(out_->process_groups.size()));
    if (inserted) out_->process_groups.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), GroupSize(info)});
    return it->second;
  }

  void Add(int64_t start, int64_t end, int64_t launch, int32_t stream, const CollectiveInfo* info, std::string op,
           std::string algorithm, std::string protocol, std::string dtype, bool on_gpu, double exposed, int64_t step,
           bool timed) {
    const int64_t n = GroupSize(info);
    const int64_t bytes = Bytes(info, op, dtype);
    TypeKey key{op, algorithm, protocol, dtype, n, on_gpu};
    auto [it, inserted] = types_.try_emplace(key, static_cast<uint32_t>(out_->collective_types.size()));
    if (inserted) {
      CollectiveType t;
      std::tie(t.op, t.algorithm, t.protocol, t.dtype, t.group_size, t.on_gpu) = key;
      out_->collective_types.push_back(std::move(t));
    }
    pending_.push_back(
        {start, end, launch, bytes, info ? info->seq : -1, step, it->second, GroupIndex(info), stream, exposed, timed});
  }

  const TraceModel& m_;
  const Window& w_;
  const CollectiveInputs& in_;
  RankSummary* out_;
  std::vector<std::pair<int64_t, uint32_t>> by_external_id_;
  std::map<TypeKey, uint32_t> types_;
  std::map<GroupKey, uint32_t> groups_;
  std::vector<Pending> pending_;
};

void Builder::Finish() {
  std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) { return a.start < b.start; });
  std::vector<uint32_t> next_in_group(out_->process_groups.size(), 0);
  std::vector<std::vector<int64_t>> durations(out_->collective_types.size());
  std::vector<std::vector<int64_t>> algbw(out_->collective_types.size());  // bytes/s, rounded
  std::vector<std::vector<Interval>> spans(out_->collective_types.size());
  std::vector<Interval> all_spans;
  const int64_t origin = m_.info.time_origin_ns;
  std::vector<double> step_exposed(out_->steps.size(), 0.0);
  std::map<int64_t, size_t> step_index;  // step number -> index into out_->steps (the steps of W)
  for (size_t s = 0; s < out_->steps.size(); ++s) step_index.emplace(out_->steps[s].number, s);
  for (const Pending& p : pending_) {
    const uint32_t index_in_group = next_in_group[p.group]++;
    if (auto it = step_index.find(p.step); it != step_index.end()) step_exposed[it->second] += p.exposed_ns;
    CollectiveType& t = out_->collective_types[p.type];
    const int64_t a = std::max(p.start, w_.start), b = std::min(p.end, w_.end);
    if (b > a) {
      spans[p.type].push_back({a, b});
      all_spans.push_back({a, b});
      t.exposed_ns += p.exposed_ns;
    }
    if (!w_.Contains(p.start)) continue;
    durations[p.type].push_back(p.end - p.start);
    if (p.bytes >= 0) {
      t.bytes = std::max<int64_t>(t.bytes, 0) + p.bytes;
      if (p.timed && p.end > p.start) algbw[p.type].push_back(static_cast<int64_t>(static_cast<double>(p.bytes) * 1e9 / static_cast<double>(p.end - p.start)));
    }
    if (out_->collectives.size() >= in_.max_instances) {
      ++out_->omitted_collectives;
      continue;
    }
    out_->collectives.push_back({origin + p.start, origin + p.end, p.launch >= 0 ? origin + p.launch : -1, p.bytes,
                                 p.seq, p.step, p.type, p.group, index_in_group, p.stream});
  }
  for (size_t k = 0; k < out_->collective_types.size(); ++k) {
    CollectiveType& t = out_->collective_types[k];
    const DurationStats d = Summarize(durations[k]);
    t.count = d.count;
    t.total_ns = d.total;
    t.median_ns = d.median;
    t.p99_ns = d.p99;
    t.max_ns = d.max;
    t.algbw_gbps = static_cast<double>(Quantile(algbw[k], 0.5)) / 1e9;
    t.busbw_gbps = t.algbw_gbps * BusBandwidthFactor(t.op, t.group_size);
    const IntervalSet busy = IntervalSet::Union(spans[k]);
    t.busy_ns = busy.Length();
    t.overlap_ns = IntersectionLength(busy, t.on_gpu ? in_.timeline->compute : *in_.host_compute);
  }
  for (size_t s = 0; s < step_exposed.size(); ++s) out_->steps[s].comm_exposed_ns = std::llround(step_exposed[s]);
  const IntervalSet all = IntervalSet::Union(all_spans);
  out_->comm_busy_ns = all.Length();
  out_->comm_host_overlap_ns = IntersectionLength(all, *in_.host_compute);
}

// CPU collectives: the process group's own spans ("gloo:all_reduce"); without them, the
// record_param_comms ops that carry "Collective name".
std::vector<const CollectiveInfo*> CpuCollectives(const TraceModel& m) {
  std::vector<const CollectiveInfo*> annotations, ops;
  for (const CollectiveInfo& c : m.collectives) {
    if (IsDeviceActivity(m.slices.kind[c.slice])) continue;
    if (m.Str(c.collective_name) == "wait") continue;  // c10d's Work::wait, not a collective
    (c.source == CollectiveSource::kAnnotationShape ? annotations : ops).push_back(&c);
  }
  return annotations.empty() ? ops : annotations;
}

// Exposed time of each CPU collective: the GPU timeline's ownership rule applied to the host,
// with the training threads' CPU ops as "compute" and the collectives as "communication".
std::vector<double> CpuExposure(const TraceModel& m, const std::vector<const CollectiveInfo*>& cpu, const Window& w,
                                const IntervalSet& host_compute) {
  std::vector<GpuActivity> host;
  for (const CollectiveInfo* c : cpu) {
    GpuActivity a;
    a.start = m.slices.ts[c->slice];
    a.end = a.start + m.slices.dur[c->slice];
    a.cls = ActivityClass::kCommunication;
    host.push_back(a);
  }
  for (const Interval& iv : host_compute.intervals()) {
    GpuActivity a;
    a.start = iv.start;
    a.end = iv.end;
    a.cls = ActivityClass::kCompute;
    host.push_back(a);
  }
  GpuTimeline t = SweepGpuTimeline(host, w);
  t.owned_ns.resize(cpu.size());
  return t.owned_ns;
}

}  // namespace

int ElementBytes(std::string_view dtype) {
  static const std::pair<std::string_view, int> kSizes[] = {
      {"float", 4}, {"float32", 4}, {"f32", 4}, {"int", 4}, {"int32", 4}, {"int32_t", 4}, {"i32", 4},
      {"uint32_t", 4}, {"u32", 4}, {"half", 2}, {"float16", 2}, {"f16", 2}, {"bfloat16", 2}, {"bf16", 2},
      {"__nv_bfloat16", 2}, {"hip_bfloat16", 2}, {"rccl_bfloat16", 2}, {"short", 2}, {"int16", 2},
      {"double", 8}, {"float64", 8}, {"f64", 8}, {"long", 8}, {"int64", 8}, {"int64_t", 8}, {"i64", 8},
      {"uint64_t", 8}, {"u64", 8}, {"byte", 1}, {"char", 1}, {"bool", 1}, {"int8", 1}, {"uint8", 1},
      {"int8_t", 1}, {"uint8_t", 1}, {"i8", 1}, {"u8", 1}, {"f8e4m3", 1}, {"f8e5m2", 1}, {"fp8_e4m3", 1},
      {"fp8_e5m2", 1}, {"__nv_fp8_e4m3", 1}, {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
  };
  std::string lower;
  if (dtype.substr(0, 5) == "c10::") dtype.remove_prefix(5);
  for (char c : dtype) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  for (const auto& [name, size] : kSizes) {
    if (lower == name) return size;
  }
  return 0;
}

double BusBandwidthFactor(std::string_view op, int64_t n) {
  if (op == "broadcast" || op == "reduce" || op == "send" || op == "recv" || op == "send_recv") return 1.0;
  if (n <= 0) return 0.0;
  const double ratio = static_cast<double>(n - 1) / static_cast<double>(n);
  if (op == "all_reduce") return 2.0 * ratio;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return ratio;
  return 1.0;
}

std::vector<uint32_t> CollectiveTracks(const TraceModel& m) {
  std::vector<uint32_t> tracks;
  for (const CollectiveInfo& c : m.collectives) {
    if (c.source == CollectiveSource::kAnnotationShape) tracks.push_back(m.slices.track[c.slice]);
  }
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
  return tracks;
}

void AnalyzeCollectives(const TraceModel& m, const Window& w, const CollectiveInputs& in, RankSummary* out) {
  Builder b(m, w, in, out);
  bool any_gpu = false;
  for (size_t i = 0; i < in.activities->size(); ++i) {
    if ((*in.activities)[i].cls != ActivityClass::kCommunication) continue;
    b.AddGpu(i);
    any_gpu = true;
  }
  // CPU collectives describe communication only in CPU-only traces: in a GPU trace the CPU
  // spans are enqueue calls, and a GPU trace without communication kernels has none.
  if (!any_gpu && in.activities->empty()) {
    std::vector<const CollectiveInfo*> cpu = CpuCollectives(m);
    const std::vector<double> exposed = CpuExposure(m, cpu, w, *in.host_compute);
    for (size_t k = 0; k < cpu.size(); ++k) b.AddCpu(*cpu[k], exposed[k]);
  }
  b.Finish();
}

}  // namespace rankscope
