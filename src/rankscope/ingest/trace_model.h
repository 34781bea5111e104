// TraceModel: one rank's trace after ingestion, in compact columnar tables.
//
// Times are integer nanoseconds on the trace's own clock: `ts` as written in the file, converted
// exactly from its decimal microseconds. The absolute (unix epoch) time of a timestamp is
// `info.time_origin_ns + ts` (Kineto writes ts relative to baseTimeNanoseconds when it has one).
//
// Every name is an id into `strings`. Links between CPU and GPU work are kept as the raw ids the
// profiler wrote: `correlation` (runtime launch <-> GPU activity) and `external_id` (CPU op <->
// GPU activity); analysis builds the joins it needs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rankscope/base/string_pool.h"
#include "rankscope/ingest/activity_kind.h"

namespace rankscope {

inline constexpr int64_t kNoId = -1;          // absent correlation / external id / python id
inline constexpr uint32_t kNoDetail = 0xFFFFFFFFu;

// pid and tid are integers in most traces but strings in some ("Spans", "stream 7", "").
struct JsonId {
  int64_t value = 0;       // the integer, or the StringId of the string
  bool is_string = false;
  bool operator==(const JsonId&) const = default;
};

struct Track {
  JsonId pid;
  JsonId tid;
  StringId thread_name = StringPool::kEmptyId;  // from ph:M thread_name
  int64_t sort_index = 0;
};

struct Process {
  JsonId pid;
  StringId name = StringPool::kEmptyId;    // from ph:M process_name
  StringId labels = StringPool::kEmptyId;  // from ph:M process_labels ("CPU", "GPU 0")
};

// ph:X complete events (host ops, annotations, Python frames, runtime calls, device activity).
struct SliceTable {
  std::vector<int64_t> ts;
  std::vector<int64_t> dur;
  std::vector<StringId> name;
  std::vector<uint32_t> track;
  std::vector<ActivityKind> kind;     // what the event is (format-neutral)
  std::vector<int64_t> correlation;   // args.correlation, or kNoId
  std::vector<int64_t> external_id;   // args["External id"] / args["external id"], or kNoId
  // Row in `gpu` (device activity) or `python` (Python frames); kNoDetail otherwise.
  std::vector<uint32_t> detail;

  size_t size() const { return ts.size(); }
  void reserve(size_t n);
  size_t MemoryBytes() const;
};

// Extra columns of a device activity (kernel, memcpy, memset, sync) on a GPU or another accelerator.
struct GpuActivityInfo {
  int32_t device = -1;   // args.device, else the GPU event's pid
  int32_t stream = -1;   // args.stream, else the GPU event's tid ("stream 7" -> 7)
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int64_t bytes = -1;    // memcpy / memset size
  int32_t registers_per_thread = -1;
  int32_t shared_memory = -1;
};
static_assert(sizeof(GpuActivityInfo) == 48, "GpuActivityInfo is a hot struct: keep it small");

struct PythonFrameInfo {
  int64_t python_id = kNoId;
  int64_t parent_id = kNoId;
};

// Where a CollectiveInfo's fields came from.
enum class CollectiveSource : uint8_t {
  kArgs,             // "Collective name", "In msg nelems", ... (record_param_comms, NCCL kernels)
  kAnnotationShape,  // a "gloo:all_reduce"-style annotation: name + first "Input Dims"/"Input type"
};

// "gloo:all_reduce", "nccl:all_reduce", ...: the annotation PyTorch's process groups record
// around each collective. Returns the part after the backend prefix, or an empty view.
std::string_view CollectiveAnnotationOp(std::string_view name);

// c10d's point-to-point ops ("c10d::send", "c10d::recv_", "c10d::recv_any_source_"): with
// record_shapes their "Concrete Inputs" name the peer.
bool IsC10dPointToPointOp(std::string_view name);

// Communication metadata of a slice (record_param_comms, NCCL kernels in newer traces, ...).
struct CollectiveInfo {
  uint32_t slice = 0;                        // row in SliceTable
  CollectiveSource source = CollectiveSource::kArgs;
  StringId collective_name = StringPool::kEmptyId;
  StringId dtype = StringPool::kEmptyId;
  int64_t in_msg_nelems = -1;
  int64_t out_msg_nelems = -1;
  int64_t group_size = -1;
  StringId pg_name = StringPool::kEmptyId;   // "Process Group Name"
  StringId pg_desc = StringPool::kEmptyId;   // "Process Group Description"
  StringId pg_ranks = StringPool::kEmptyId;  // "Process Group Ranks", as written ("[0, 1]")
  int64_t seq = -1;                          // "Seq" when the profiler records it
  StringId in_split = StringPool::kEmptyId;
  StringId out_split = StringPool::kEmptyId;
};

// The peer of a c10d point-to-point op (IsC10dPointToPointOp), as a rank of the op's process
// group (the trace does not say which group: the rank summary resolves it).
struct P2pPeer {
  uint32_t slice = 0;
  int32_t group_rank = -1;
};

// A CPU op's input shapes and types (record_shapes=True), read only with
// ReaderOptions::keep_op_shapes: "Input Dims" and "Input type" as interned JSON text, as written
// (e.g. `[[64, 256], [512, 256], [512]]` and `["float", "float", "float"]`). Traces repeat a few
// shapes many times, so consumers normalise the text once per distinct id.
struct OpShape {
  uint32_t slice = 0;
  StringId dims = StringPool::kEmptyId;
  StringId types = StringPool::kEmptyId;
};

// What a CPU op with recorded input shapes did, as a 32-bit hash of its name and "Input Dims" as
// written: the same operator on the same shapes hashes the same on every rank. Read from every
// trace that has shapes (record_shapes=True), without interning them; analysis sums it per step
// into the step's work signature (analysis/work_signature.h). 8 bytes per such op.
struct OpWork {
  uint32_t slice = 0;
  uint32_t hash = 0;
};
static_assert(sizeof(OpWork) == 8);

struct InstantTable {  // ph:i / ph:I, except [memory]
  std::vector<int64_t> ts;
  std::vector<StringId> name;
  std::vector<uint32_t> track;
  std::vector<ActivityKind> kind;     // what the event is (format-neutral)
  size_t size() const { return ts.size(); }
};

struct MemoryEvent {  // [memory] instants (profile_memory=True)
  int64_t ts = 0;
  uint32_t track = 0;
  int32_t device_type = -1;  // 0 CPU, 1 CUDA, ...
  int32_t device_id = -1;
  int64_t bytes = 0;         // + allocation, - free
  int64_t total_allocated = -1;
  int64_t total_reserved = -1;
  uint64_t addr = 0;
};

struct FlowEvent {  // ph:s / ph:f / ph:t
  int64_t id = 0;
  int64_t ts = 0;
  uint32_t track = 0;
  FlowKind kind = FlowKind::kOther;
  char phase = 's';
  bool binds_enclosing = false;  // "bp": "e"
};

struct DeviceProperties {
  int64_t id = -1;
  std::string name;
  int64_t total_global_mem = -1;
  int64_t compute_major = -1;
  int64_t compute_minor = -1;
  int64_t num_sms = -1;
  int64_t max_threads_per_block = -1;
  int64_t warp_size = -1;
};

struct ProcessGroupConfig {
  std::string name;
  std::string desc;
  std::string backend_config;
  int64_t size = -1;
  std::vector<int64_t> ranks;
};

struct DistributedInfo {
  bool present = false;
  std::string backend;
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
  std::optional<int64_t> pg_count;
  std::string nccl_version;
  std::vector<ProcessGroupConfig> pg_config;
};

// The top-level keys of the trace object (everything but traceEvents).
// The recorded window's CPU time of the process's threads: how long they ran and how long they
// were runnable but waited for a CPU (Linux schedstat), as rankscope's collector writes it
// (`rankscope_cpu_sched`, python/rankscope/_cpu_sched.py). -1: not recorded.
struct CpuSchedWindow {
  int64_t run_ns = -1;
  int64_t wait_ns = -1;
  int64_t threads = -1;
  bool known() const { return run_ns >= 0 && wait_ns >= 0; }
};

struct TraceInfo {
  std::optional<int64_t> schema_version;
  std::optional<int64_t> base_time_ns;    // baseTimeNanoseconds
  int64_t time_origin_ns = 0;             // base_time_ns, or 0 when ts is absolute
  DistributedInfo distributed;
  bool has_device_properties = false;
  std::vector<DeviceProperties> devices;
  std::string trace_name;
  std::string display_time_unit;
  std::string host_name;
  std::string trace_id;
  CpuSchedWindow cpu_sched;
  // Other scalar top-level keys, as text (e.g. "cupti_version": "18").
  std::map<std::string, std::string> extra;
};

// Why events were not loaded, and field values that were ignored.
struct SkipCounts {
  struct Entry {
    uint64_t count = 0;
    uint64_t first_offset = 0;  // byte offset (uncompressed) of the first occurrence
  };
  std::map<std::string, Entry> by_reason;
  void Add(const std::string& reason, uint64_t offset);
  uint64_t total() const;
};

struct IngestStats {
  uint64_t file_bytes = 0;   // bytes on disk
  uint64_t json_bytes = 0;   // bytes of the trace after gunzip (JSON for Kineto)
  bool gzip = false;
  uint64_t elements = 0;     // elements of traceEvents
  uint64_t by_phase[128] = {};
  // Events per category as the format spells it (Kineto's "kernel" and "Kernel" stay apart),
  // and events that have none.
  std::map<std::string, uint64_t> by_category;
  uint64_t without_category = 0;
  SkipCounts skipped;         // events dropped
  SkipCounts ignored_fields;  // events kept, one field ignored
  uint64_t chunks = 0;                // pieces the traceEvents array was parsed in
  uint64_t chunk_guesses_missed = 0;  // guessed chunk ends that did not parse (re-cut exactly)
};

struct TraceModel {
  std::string path;
  TraceInfo info;
  StringPool strings;
  std::vector<Track> tracks;
  std::vector<Process> processes;
  SliceTable slices;
  std::vector<GpuActivityInfo> gpu;
  std::vector<PythonFrameInfo> python;
  std::vector<CollectiveInfo> collectives;  // sorted by slice
  std::vector<OpShape> op_shapes;           // sorted by slice; empty unless keep_op_shapes
  std::vector<OpWork> op_work;              // sorted by slice: the CPU ops with "Input Dims"
  std::vector<P2pPeer> p2p_peers;           // sorted by slice
  // CPU ops autograd recorded, by their "Fwd thread id" arg (sorted slice rows): 0 on forward
  // ops, the forward thread's id on ops run by the backward pass.
  std::vector<uint32_t> forward_ops;
  std::vector<uint32_t> backward_ops;
  InstantTable instants;
  std::vector<MemoryEvent> memory;
  std::vector<FlowEvent> flows;
  IngestStats stats;

  int64_t AbsoluteNs(int64_t ts) const { return info.time_origin_ns + ts; }
  std::string_view Str(StringId id) const { return strings.Get(id); }
  const GpuActivityInfo* GpuInfo(size_t slice) const {
    const uint32_t d = slices.detail[slice];
    return d != kNoDetail && IsDeviceActivity(slices.kind[slice]) ? &gpu[d] : nullptr;
  }
  std::string JsonIdText(const JsonId& id) const;
  size_t MemoryBytes() const;
};

}  // namespace rankscope
