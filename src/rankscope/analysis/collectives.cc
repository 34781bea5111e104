#include "rankscope/analysis/collectives.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
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
  int32_t peer = -1;  // a point-to-point transfer's other end (a global rank), when known
};

// What a CPU-side record of a collective is.
enum class CpuRecord : uint8_t {
  kTransfer,  // a CPU backend's own span (gloo:all_reduce on gloo's worker thread): the collective
  kCall,      // record_param_comms, c10d ops, a GPU backend's annotation: the call that starts it
};

struct CpuCollective {
  uint32_t slice = 0;
  const CollectiveInfo* info = nullptr;  // null for c10d ops (no args)
  std::string op;                        // canonical
  CpuRecord record = CpuRecord::kCall;
};

// The backends whose annotation spans run the collective on the CPU (gloo's worker threads,
// MPI, UCC): from the moment the rank starts it to the moment it completes. A GPU backend's
// annotation (nccl:all_reduce) only enqueues a kernel.
bool CpuBackendAnnotation(std::string_view name) {
  for (std::string_view prefix : {"gloo:", "mpi:", "ucc:"}) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

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
  // rank's own work runs nothing (1/k each when k collectives run together). Only a transfer
  // span (gloo) is the collective itself; a call (record_param_comms of NCCL, a c10d op) only
  // starts it, so its duration says nothing about bandwidth.
  // `posted`: where the c10d op that posted a point-to-point transfer began (PostingOps), or -1;
  // `peer`: the global rank at its other end, or -1.
  void AddCpu(const CpuCollective& c, double exposed_ns, int64_t posted = -1, int32_t peer = -1) {
    const int64_t span_start = m_.slices.ts[c.slice], end = span_start + m_.slices.dur[c.slice];
    const int64_t start = posted >= 0 && posted < span_start ? posted : span_start;
    const CollectiveInfo* info = c.info;
    std::string dtype = info && info->dtype != StringPool::kEmptyId ? std::string(m_.Str(info->dtype)) : "";
    Add(start, end, start, -1, info, c.op, "", "", std::move(dtype), false, exposed_ns, StepAt(*in_.steps, start),
        c.record == CpuRecord::kTransfer);
    pending_.back().peer = peer;
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
                                 p.seq, p.step, p.type, p.group, index_in_group, p.stream, p.peer});
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

// The slices that launched communication kernels: their External ids.
std::vector<int64_t> CommKernelExternalIds(const TraceModel& m, const std::vector<GpuActivity>& acts) {
  std::vector<int64_t> ids;
  for (const GpuActivity& a : acts) {
    if (a.cls == ActivityClass::kCommunication && m.slices.external_id[a.slice] != kNoId) {
      ids.push_back(m.slices.external_id[a.slice]);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// c10d's dispatcher ops ("c10d::allreduce_", "c10d::broadcast_", ...): every process group
// backend records one per collective call, even without annotations or record_param_comms.
std::string C10dOp(std::string_view name) {
  if (name.substr(0, 6) != "c10d::") return "";
  name.remove_prefix(6);
  while (!name.empty() && name.back() == '_') name.remove_suffix(1);
  if (name.empty() || name == "wait" || name == "monitored_barrier") return "";
  return CanonicalCollectiveName(name);
}

// Every CPU-side record of a collective the rank made, each collective once, from the best
// evidence the trace has: a CPU backend's transfer spans; else record_param_comms ops; else a
// GPU backend's annotations (nccl:all_reduce of a collective that launched no kernel, e.g. on a
// single rank); else c10d ops. Left out: GPU-timeline copies of annotations (gpu_user_annotation), c10d's
// Work::wait, and the CPU side of collectives that ran as communication kernels (their kernels
// are the instances).
std::vector<CpuCollective> CpuCollectives(const TraceModel& m, const std::vector<GpuActivity>& acts) {
  const std::vector<int64_t> launched = CommKernelExternalIds(m, acts);
  const bool has_comm_kernels =
      std::any_of(acts.begin(), acts.end(), [](const GpuActivity& a) { return a.cls == ActivityClass::kCommunication; });
  std::vector<CpuCollective> transfers, calls, annotated_calls, c10d;
  for (const CollectiveInfo& c : m.collectives) {
    const ActivityKind kind = m.slices.kind[c.slice];
    if (IsDeviceActivity(kind) || kind == ActivityKind::kDeviceAnnotation) continue;
    std::string op = CanonicalCollectiveName(m.Str(c.collective_name));
    if (op == "wait") continue;  // c10d's Work::wait, not a collective
    const std::string_view name = m.Str(m.slices.name[c.slice]);
    if (c.source == CollectiveSource::kAnnotationShape && CpuBackendAnnotation(name)) {
      transfers.push_back({c.slice, &c, std::move(op), CpuRecord::kTransfer});
      continue;
    }
    const int64_t ext = m.slices.external_id[c.slice];
    if (ext != kNoId && std::binary_search(launched.begin(), launched.end(), ext)) continue;
    if (c.source == CollectiveSource::kAnnotationShape && has_comm_kernels) continue;  // nccl:... enqueues a kernel
    if (c.source == CollectiveSource::kAnnotationShape) {  // nccl:all_reduce without a kernel
      annotated_calls.push_back({c.slice, &c, std::move(op), CpuRecord::kCall});
      continue;
    }
    // record_param_comms of a CPU backend spans the collective too (older gloo traces).
    const bool transfer = m.info.distributed.backend == "gloo";
    calls.push_back({c.slice, &c, std::move(op), transfer ? CpuRecord::kTransfer : CpuRecord::kCall});
  }
  if (!transfers.empty()) return transfers;
  if (!calls.empty()) return calls;
  if (!annotated_calls.empty()) return annotated_calls;
  if (has_comm_kernels) return {};
  const SliceTable& s = m.slices;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != ActivityKind::kHostOp) continue;
    std::string op = C10dOp(m.Str(s.name[i]));
    if (!op.empty()) c10d.push_back({i, nullptr, std::move(op), CpuRecord::kCall});
  }
  return c10d;
}

// Exposed time of each CPU collective: the GPU timeline's ownership rule applied to the host,
// with the collectives as "communication" and the rank's own work as "compute": the CPU ops of
// its training threads and, in a GPU trace, its compute kernels. What neither hides is the
// time the rank waited for its peers.
std::vector<double> CpuExposure(const TraceModel& m, const std::vector<CpuCollective>& cpu, const Window& w,
                                const IntervalSet& own_work) {
  std::vector<GpuActivity> host;
  for (const CpuCollective& c : cpu) {
    GpuActivity a;
    a.start = m.slices.ts[c.slice];
    a.end = a.start + m.slices.dur[c.slice];
    a.cls = ActivityClass::kCommunication;
    host.push_back(a);
  }
  for (const Interval& iv : own_work.intervals()) {
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

double CommunicationExposedNs(const RankSummary& r) {
  double exposed = 0;
  for (const CollectiveType& t : r.collective_types) exposed += t.exposed_ns;
  return exposed;
}

std::vector<uint32_t> CollectiveTracks(const TraceModel& m) {
  std::vector<uint32_t> tracks;
  for (const CollectiveInfo& c : m.collectives) {
    if (c.source == CollectiveSource::kAnnotationShape && m.slices.kind[c.slice] != ActivityKind::kDeviceAnnotation &&
        CpuBackendAnnotation(m.Str(m.slices.name[c.slice]))) {
      tracks.push_back(m.slices.track[c.slice]);
    }
  }
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
  return tracks;
}

// gloo's send/recv span is only the final wait of a blocking point-to-point call: the transfer
// (a rendezvous with the peer) runs inside the c10d op just before it on the same thread
// (c10d::send 20.8 ms, then gloo:send 0.06 ms), or around it (a send that waited for its peer
// starts its span 2 ms into a 4 ms op). The transfer's instance starts where that op
// began, so a receive is never seen to end before its sender started.
class PostingOps {
  // A hostile trace's times may sit at the ends of int64.
  static int64_t SaturatingAdd(int64_t a, int64_t b) {
    int64_t out = 0;
    return __builtin_add_overflow(a, b, &out) ? (b > 0 ? INT64_MAX : INT64_MIN) : out;
  }

 public:
  explicit PostingOps(const TraceModel& m) {
    const SliceTable& s = m.slices;
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.kind[i] != ActivityKind::kHostOp) continue;
      if (!IsC10dPointToPointOp(m.Str(s.name[i]))) continue;
      ops_.push_back({s.track[i], s.ts[i], SaturatingAdd(s.ts[i], s.dur[i]), i});
    }
    std::sort(ops_.begin(), ops_.end());
  }
  struct Posting {
    int64_t start = -1;        // where the op began, or -1 when there is none
    uint32_t slice = UINT32_MAX;
  };
  // The last op on `track` that began before `span_start` and had not ended more than kJoin
  // before it: the span runs inside the op (a send that waited for its peer: the span starts
  // milliseconds before the op ends) or just after it.
  Posting PostedAt(uint32_t track, int64_t span_start) const {
    constexpr int64_t kJoin = 500'000;  // 0.5 ms
    auto it = std::lower_bound(ops_.begin(), ops_.end(), Op{track, span_start, INT64_MIN, 0});
    if (it == ops_.begin()) return {};
    --it;
    if (it->track != track || it->end < SaturatingAdd(span_start, -kJoin)) return {};
    return {it->start, it->slice};
  }

 private:
  struct Op {
    uint32_t track;
    int64_t start, end;
    uint32_t slice;
    bool operator<(const Op& o) const { return std::tie(track, start, end) < std::tie(o.track, o.start, o.end); }
  };
  std::vector<Op> ops_;
};

// A description the layout reads as a pipeline group (cluster/layout.cc).
bool PipelineDescription(std::string_view desc) { return desc == "pp" || desc == "pipe" || desc == "pipeline"; }

// The global rank at the other end of a point-to-point op whose trace names its peer as a rank
// of the op's process group, which the trace does not name. Every configured group of this rank
// with more members than that number is a candidate; the peer is known when the candidates agree
// (a group that maps the number to this rank itself is not one), or when one pipeline group is
// among them (point-to-point transfers are the pipeline's); else -1. No group configuration:
// the default group, whose ranks are the global ones.
int32_t GlobalPeer(const DistributedInfo& d, int32_t group_rank) {
  if (!d.rank || group_rank < 0) return -1;
  const int64_t self = *d.rank;
  if (d.pg_config.empty()) return group_rank != self ? group_rank : -1;
  std::set<int64_t> answers, pipeline;
  for (const ProcessGroupConfig& g : d.pg_config) {
    if (std::find(g.ranks.begin(), g.ranks.end(), self) == g.ranks.end()) continue;
    if (static_cast<size_t>(group_rank) >= g.ranks.size() || g.ranks[group_rank] == self) continue;
    if (g.ranks[group_rank] < 0 || g.ranks[group_rank] > INT32_MAX) continue;  // a hostile list
    answers.insert(g.ranks[group_rank]);
    if (PipelineDescription(g.desc)) pipeline.insert(g.ranks[group_rank]);
  }
  if (answers.size() == 1) return static_cast<int32_t>(*answers.begin());
  if (pipeline.size() == 1) return static_cast<int32_t>(*pipeline.begin());
  return -1;
}

// The peer the trace recorded for the c10d op at `slice` (TraceModel::p2p_peers), or -1.
int32_t RecordedPeer(const TraceModel& m, uint32_t slice) {
  auto it = std::lower_bound(m.p2p_peers.begin(), m.p2p_peers.end(), slice,
                             [](const P2pPeer& p, uint32_t s) { return p.slice < s; });
  return it != m.p2p_peers.end() && it->slice == slice ? GlobalPeer(m.info.distributed, it->group_rank) : -1;
}

void AnalyzeCollectives(const TraceModel& m, const Window& w, const CollectiveInputs& in, RankSummary* out) {
  Builder b(m, w, in, out);
  for (size_t i = 0; i < in.activities->size(); ++i) {
    if ((*in.activities)[i].cls == ActivityClass::kCommunication) b.AddGpu(i);
  }
  // The CPU side counts in every trace: gloo with CUDA tensors runs its collectives on the host
  // next to a busy GPU, and a trace without communication kernels may still have c10d calls.
  std::vector<CpuCollective> cpu = CpuCollectives(m, *in.activities);
  std::vector<Interval> own;
  for (const Interval& iv : in.host_compute->intervals()) own.push_back(iv);
  for (const Interval& iv : in.timeline->compute.intervals()) own.push_back(iv);
  const std::vector<double> exposed = CpuExposure(m, cpu, w, IntervalSet::Union(own));
  const bool p2p = std::any_of(cpu.begin(), cpu.end(), [](const CpuCollective& c) {
    return c.record == CpuRecord::kTransfer && (c.op == "send" || c.op == "recv");
  });
  const PostingOps posting = p2p ? PostingOps(m) : PostingOps(TraceModel{});
  for (size_t k = 0; k < cpu.size(); ++k) {
    const CpuCollective& c = cpu[k];
    const bool transfer = c.record == CpuRecord::kTransfer && (c.op == "send" || c.op == "recv");
    const PostingOps::Posting posted =
        transfer ? posting.PostedAt(m.slices.track[c.slice], m.slices.ts[c.slice]) : PostingOps::Posting{};
    b.AddCpu(c, exposed[k], posted.start, posted.slice != UINT32_MAX ? RecordedPeer(m, posted.slice) : -1);
  }
  b.Finish();
}

}  // namespace rankscope
