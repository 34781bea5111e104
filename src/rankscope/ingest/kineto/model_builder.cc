#include "rankscope/ingest/kineto/model_builder.h"

#include <fmt/format.h>

#include "rankscope/base/hash.h"
#include "rankscope/base/parse_int.h"

namespace rankscope::kineto {
namespace {

bool IsMemoryInstant(std::string_view name) { return name == "[memory]"; }

// "stream 7" -> 7 (2021 traces name GPU tids this way).
std::optional<int64_t> ParseStreamText(std::string_view text) {
  constexpr std::string_view kPrefix = "stream ";
  if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
  return ParseInt(text);
}

}  // namespace

JsonId ModelBuilder::Intern(const RawId& id) {
  if (!id.is_string) return JsonId{id.number, false};
  return JsonId{model_->strings.Intern(id.text), true};
}

uint32_t ModelBuilder::ProcessFor(const JsonId& pid) {
  auto& index = pid.is_string ? string_process_index_ : int_process_index_;
  auto [it, inserted] = index.try_emplace(pid.value, static_cast<uint32_t>(model_->processes.size()));
  if (inserted) model_->processes.push_back(Process{pid});
  return it->second;
}

uint32_t ModelBuilder::TrackFor(const RawEvent& ev) {
  TrackKey key{Intern(ev.pid), Intern(ev.tid)};
  if (last_track_ != 0xFFFFFFFFu && key == last_key_) return last_track_;
  auto [it, inserted] = track_index_.try_emplace(key, static_cast<uint32_t>(model_->tracks.size()));
  if (inserted) {
    model_->tracks.push_back(Track{key.pid, key.tid});
    ProcessFor(key.pid);
  }
  last_key_ = key;
  last_track_ = it->second;
  return it->second;
}

ActivityKind ModelBuilder::CountCategory(const RawEvent& ev, FlowKind* flow_kind) {
  IngestStats& stats = model_->stats;
  *flow_kind = FlowKind::kOther;
  if (ev.category_spelling >= 0) {
    ++by_known_category_[ev.category_spelling];
    const CategorySpelling& spelling = kKnownCategories[ev.category_spelling];
    *flow_kind = spelling.flow_kind;
    if (spelling.dma_is_memcpy && ev.name.starts_with("dma")) return ActivityKind::kDeviceMemcpy;
    return spelling.kind;
  }
  if (!ev.has(RawEvent::kCat)) {
    ++stats.without_category;
    return ActivityKind::kNone;
  }
  ++stats.by_category[std::string(ev.cat)];
  return ActivityKind::kOther;
}

void ModelBuilder::Add(const RawEvent& ev) {
  IngestStats& stats = model_->stats;
  ++stats.elements;
  if (ev.reject_reason != nullptr) {
    stats.skipped.Add(ev.reject_reason, ev.offset);
    return;
  }
  if (!ev.has(RawEvent::kPh)) {
    stats.skipped.Add("event without \"ph\"", ev.offset);
    return;
  }
  ++stats.by_phase[static_cast<unsigned char>(ev.ph) & 0x7F];
  FlowKind flow_kind;
  const ActivityKind kind = CountCategory(ev, &flow_kind);
  if (ev.ignored_field != nullptr) stats.ignored_fields.Add(ev.ignored_field, ev.offset);

  switch (ev.ph) {
    case 'X':
      if (!ev.has(RawEvent::kTs)) return stats.skipped.Add("complete event (ph X) without ts", ev.offset);
      if (!ev.has(RawEvent::kDur)) return stats.skipped.Add("complete event (ph X) without dur", ev.offset);
      if (ev.dur < 0) return stats.skipped.Add("complete event (ph X) with negative dur", ev.offset);
      return AddSlice(ev, kind);
    case 'i':
    case 'I':
      if (!ev.has(RawEvent::kTs)) return stats.skipped.Add("instant event without ts", ev.offset);
      return AddInstant(ev, kind);
    case 's':
    case 'f':
    case 't':
      if (!ev.has(RawEvent::kTs)) return stats.skipped.Add("flow event without ts", ev.offset);
      if (!ev.has(RawEvent::kId)) return stats.skipped.Add("flow event without id", ev.offset);
      return AddFlow(ev, kind == ActivityKind::kFlow ? flow_kind : FlowKind::kOther);
    case 'M':
      return AddMetadata(ev);
    default:
      stats.skipped.Add(fmt::format("unsupported phase \"{}\"", ev.ph), ev.offset);
  }
}

void ModelBuilder::AddSlice(const RawEvent& ev, ActivityKind kind) {
  SliceTable& s = model_->slices;
  const uint32_t track = TrackFor(ev);
  const auto row = static_cast<uint32_t>(s.size());
  s.ts.push_back(ev.ts);
  s.dur.push_back(ev.dur);
  s.name.push_back(model_->strings.Intern(ev.name));
  s.track.push_back(track);
  s.kind.push_back(kind);
  s.correlation.push_back(ev.has(RawEvent::kCorrelation) ? ev.correlation : kNoId);
  s.external_id.push_back(ev.has(RawEvent::kExternalId) ? ev.external_id : kNoId);
  if (IsDeviceActivity(kind)) {
    s.detail.push_back(static_cast<uint32_t>(model_->gpu.size()));
    AddGpuInfo(ev, track);
  } else if (kind == ActivityKind::kPythonFrame) {
    s.detail.push_back(static_cast<uint32_t>(model_->python.size()));
    model_->python.push_back(PythonFrameInfo{
        ev.has(RawEvent::kPythonId) ? ev.python_id : kNoId,
        ev.has(RawEvent::kPythonParentId) ? ev.python_parent_id : kNoId});
  } else {
    s.detail.push_back(kNoDetail);
  }
  if (ev.has(RawEvent::kFwdThreadId) && kind == ActivityKind::kHostOp) {
    (ev.fwd_thread_id != 0 ? model_->backward_ops : model_->forward_ops).push_back(row);
  }
  if (ev.has(RawEvent::kInputDimsText) || ev.has(RawEvent::kInputTypesText)) AddOpShape(ev, row);
  if (ev.has(RawEvent::kShapeHash) && kind == ActivityKind::kHostOp) {
    const uint64_t h = HashBytes(ev.name) * 0x9E3779B97F4A7C15ull ^ ev.shape_hash;
    model_->op_work.push_back({row, static_cast<uint32_t>(h ^ (h >> 32))});
  }
  if (ev.has(RawEvent::kP2pPeer) && kind == ActivityKind::kHostOp && IsC10dPointToPointOp(ev.name)) {
    model_->p2p_peers.push_back({row, static_cast<int32_t>(ev.p2p_peer)});
  }
  if (ev.has(RawEvent::kCollectiveName)) {
    AddCollective(ev, row);
  } else if (ev.has(RawEvent::kInputNelems) || ev.has(RawEvent::kInputType) || ev.name.starts_with("gloo:")) {
    // gloo's spans are the collectives of a CPU backend even without record_shapes (then the
    // message size is unknown).
    AddAnnotationCollective(ev, row);
  }
}

void ModelBuilder::AddOpShape(const RawEvent& ev, uint32_t slice) {
  model_->op_shapes.push_back({slice, ev.has(RawEvent::kInputDimsText) ? model_->strings.Intern(ev.input_dims_text) : 0,
                               ev.has(RawEvent::kInputTypesText) ? model_->strings.Intern(ev.input_types_text) : 0});
}

// gloo (and CPU-side nccl) collectives carry no "Collective name" args in recent PyTorch: the
// annotation's name says the op and its first input tensor says the message size.
void ModelBuilder::AddAnnotationCollective(const RawEvent& ev, uint32_t slice) {
  const std::string_view op = CollectiveAnnotationOp(ev.name);
  if (op.empty()) return;
  StringPool& sp = model_->strings;
  CollectiveInfo c;
  c.slice = slice;
  c.source = CollectiveSource::kAnnotationShape;
  c.collective_name = sp.Intern(op);
  if (ev.has(RawEvent::kInputType)) c.dtype = sp.Intern(ev.input_type);
  if (ev.has(RawEvent::kInputNelems)) c.in_msg_nelems = ev.input_nelems;
  model_->collectives.push_back(c);
}

void ModelBuilder::AddGpuInfo(const RawEvent& ev, uint32_t track) {
  GpuActivityInfo g;
  const Track& t = model_->tracks[track];
  if (ev.has(RawEvent::kDevice)) {
    g.device = static_cast<int32_t>(ev.device);
  } else if (!t.pid.is_string) {
    g.device = static_cast<int32_t>(t.pid.value);
  }
  int64_t stream = -1;
  if (ev.has(RawEvent::kStream)) {
    stream = ev.stream;
  } else if (!t.tid.is_string) {
    stream = t.tid.value;
  } else {
    stream = ParseStreamText(model_->strings.Get(static_cast<StringId>(t.tid.value))).value_or(-1);
  }
  g.stream = static_cast<int32_t>(stream);
  for (int i = 0; i < 3; ++i) {
    if (ev.has(RawEvent::kGrid)) g.grid[i] = ev.grid[i];
    if (ev.has(RawEvent::kBlock)) g.block[i] = ev.block[i];
  }
  if (ev.has(RawEvent::kBytes)) g.bytes = ev.bytes;
  if (ev.has(RawEvent::kRegisters)) g.registers_per_thread = static_cast<int32_t>(ev.registers);
  if (ev.has(RawEvent::kSharedMemory)) g.shared_memory = static_cast<int32_t>(ev.shared_memory);
  model_->gpu.push_back(g);
}

void ModelBuilder::AddCollective(const RawEvent& ev, uint32_t slice) {
  StringPool& sp = model_->strings;
  CollectiveInfo c;
  c.slice = slice;
  c.collective_name = sp.Intern(ev.collective_name);
  if (ev.has(RawEvent::kDtype)) c.dtype = sp.Intern(ev.dtype);
  if (ev.has(RawEvent::kInNelems)) c.in_msg_nelems = ev.in_nelems;
  if (ev.has(RawEvent::kOutNelems)) c.out_msg_nelems = ev.out_nelems;
  if (ev.has(RawEvent::kGroupSize)) c.group_size = ev.group_size;
  if (ev.has(RawEvent::kPgName)) c.pg_name = sp.Intern(ev.pg_name);
  if (ev.has(RawEvent::kPgDesc)) c.pg_desc = sp.Intern(ev.pg_desc);
  if (ev.has(RawEvent::kPgRanks)) c.pg_ranks = sp.Intern(ev.pg_ranks);
  if (ev.has(RawEvent::kSeq)) c.seq = ev.seq;
  if (ev.has(RawEvent::kInSplit)) c.in_split = sp.Intern(ev.in_split);
  if (ev.has(RawEvent::kOutSplit)) c.out_split = sp.Intern(ev.out_split);
  model_->collectives.push_back(c);
}

void ModelBuilder::AddInstant(const RawEvent& ev, ActivityKind kind) {
  const uint32_t track = TrackFor(ev);
  if (IsMemoryInstant(ev.name)) return AddMemory(ev, track);
  InstantTable& t = model_->instants;
  t.ts.push_back(ev.ts);
  t.name.push_back(model_->strings.Intern(ev.name));
  t.track.push_back(track);
  t.kind.push_back(kind);
}

void ModelBuilder::AddMemory(const RawEvent& ev, uint32_t track) {
  MemoryEvent m;
  m.ts = ev.ts;
  m.track = track;
  if (ev.has(RawEvent::kDeviceType)) m.device_type = static_cast<int32_t>(ev.device_type);
  if (ev.has(RawEvent::kDeviceId)) m.device_id = static_cast<int32_t>(ev.device_id);
  if (ev.has(RawEvent::kMemBytes)) m.bytes = ev.mem_bytes;
  if (ev.has(RawEvent::kTotalAllocated)) m.total_allocated = ev.total_allocated;
  if (ev.has(RawEvent::kTotalReserved)) m.total_reserved = ev.total_reserved;
  if (ev.has(RawEvent::kAddr)) m.addr = ev.addr;
  model_->memory.push_back(m);
}

void ModelBuilder::AddFlow(const RawEvent& ev, FlowKind kind) {
  FlowEvent f;
  f.id = ev.flow_id_text.empty() ? ev.flow_id
                                 : static_cast<int64_t>(model_->strings.Intern(ev.flow_id_text)) | (int64_t{1} << 62);
  f.ts = ev.ts;
  f.track = TrackFor(ev);
  f.kind = kind;
  f.phase = ev.ph;
  f.binds_enclosing = ev.has(RawEvent::kBindEnclosing);
  model_->flows.push_back(f);
}

void ModelBuilder::AddMetadata(const RawEvent& ev) {
  if (!ev.has(RawEvent::kPid)) return;
  const JsonId pid = Intern(ev.pid);
  if (ev.name == "process_name" || ev.name == "process_labels") {
    Process& p = model_->processes[ProcessFor(pid)];
    const bool is_name = ev.name == "process_name";
    if (!ev.has(is_name ? RawEvent::kArgName : RawEvent::kArgLabels)) return;
    const StringId value = model_->strings.Intern(is_name ? ev.arg_name : ev.arg_labels);
    (is_name ? p.name : p.labels) = value;
  } else if (ev.name == "thread_name" || ev.name == "thread_sort_index") {
    Track& t = model_->tracks[TrackFor(ev)];
    if (ev.name == "thread_name") {
      if (ev.has(RawEvent::kArgName)) t.thread_name = model_->strings.Intern(ev.arg_name);
    } else if (ev.has(RawEvent::kSortIndex)) {
      t.sort_index = ev.sort_index;
    }
  }
  // process_sort_index and unknown metadata carry nothing analysis uses.
}

ModelBuilder::Checkpoint ModelBuilder::MakeCheckpoint() const {
  const TraceModel& m = *model_;
  return Checkpoint{m.slices.size(),      m.gpu.size(),         m.python.size(),       m.collectives.size(),
                    m.op_shapes.size(),   m.op_work.size(),     m.p2p_peers.size(),   m.forward_ops.size(),   m.backward_ops.size(),
                    m.instants.size(),    m.memory.size(),      m.flows.size(),        m.stats,
                    by_known_category_};
}

void ModelBuilder::Rollback(const Checkpoint& c) {
  TraceModel& m = *model_;
  SliceTable& s = m.slices;
  s.ts.resize(c.slices);
  s.dur.resize(c.slices);
  s.name.resize(c.slices);
  s.track.resize(c.slices);
  s.kind.resize(c.slices);
  s.correlation.resize(c.slices);
  s.external_id.resize(c.slices);
  s.detail.resize(c.slices);
  m.gpu.resize(c.gpu);
  m.python.resize(c.python);
  m.collectives.resize(c.collectives);
  m.op_shapes.resize(c.op_shapes);
  m.op_work.resize(c.op_work);
  m.p2p_peers.resize(c.p2p_peers);
  m.forward_ops.resize(c.forward_ops);
  m.backward_ops.resize(c.backward_ops);
  m.instants.ts.resize(c.instants);
  m.instants.name.resize(c.instants);
  m.instants.track.resize(c.instants);
  m.instants.kind.resize(c.instants);
  m.memory.resize(c.memory);
  m.flows.resize(c.flows);
  m.stats = c.stats;
  by_known_category_ = c.by_known_category;
}

void ModelBuilder::Finish() {
  for (int i = 0; i < kNumKnownCategories; ++i) {
    if (by_known_category_[i] > 0) model_->stats.by_category[std::string(kKnownCategories[i].text)] += by_known_category_[i];
  }
  by_known_category_ = {};
}

}  // namespace rankscope::kineto
