// RawEvent: the fields of one traceEvents element, as the event parser read them.
//
// The parser fills it without deciding anything; ModelBuilder decides what the event is and
// where it goes. Strings are views into the JSON parser's buffer, valid for the current chunk.
#pragma once

#include <cstdint>
#include <string_view>

namespace rankscope::kineto {

struct RawId {  // a pid or tid: an integer or a string
  int64_t number = 0;
  std::string_view text;
  bool is_string = false;
};

struct RawEvent {
  // Which optional fields are present.
  enum Field : uint64_t {
    kPh = 1ull << 0, kCat = 1ull << 1, kName = 1ull << 2, kPid = 1ull << 3, kTid = 1ull << 4,
    kTs = 1ull << 5, kDur = 1ull << 6, kId = 1ull << 7, kBindEnclosing = 1ull << 8,
    kScope = 1ull << 9,
    // args
    kExternalId = 1ull << 16, kCorrelation = 1ull << 17, kStream = 1ull << 18,
    kDevice = 1ull << 19, kGrid = 1ull << 20, kBlock = 1ull << 21, kBytes = 1ull << 22,
    kRegisters = 1ull << 23, kSharedMemory = 1ull << 24, kPythonId = 1ull << 25,
    kPythonParentId = 1ull << 26, kCollectiveName = 1ull << 27, kDtype = 1ull << 28,
    kInNelems = 1ull << 29, kOutNelems = 1ull << 30, kGroupSize = 1ull << 31,
    kPgName = 1ull << 32, kPgDesc = 1ull << 33, kPgRanks = 1ull << 34, kSeq = 1ull << 35,
    kInSplit = 1ull << 36, kOutSplit = 1ull << 37, kMemBytes = 1ull << 38,
    kTotalAllocated = 1ull << 39, kTotalReserved = 1ull << 40, kAddr = 1ull << 41,
    kDeviceType = 1ull << 42, kDeviceId = 1ull << 43, kArgName = 1ull << 44,
    kArgLabels = 1ull << 45, kSortIndex = 1ull << 46,
    // First tensor of "Input Dims" / "Input type", read only for collective annotations.
    kInputNelems = 1ull << 47, kInputType = 1ull << 48,
    kFwdThreadId = 1ull << 49,
    // "Input Dims" / "Input type" as raw JSON text (ReaderOptions::keep_op_shapes).
    kInputDimsText = 1ull << 50, kInputTypesText = 1ull << 51,
    // The peer of c10d's point-to-point ops ("Concrete Inputs"[2], record_shapes).
    kP2pPeer = 1ull << 52,
    // A hash of "Input Dims" as written, read on every event that has it (the work signature).
    kShapeHash = 1ull << 53,
  };
  uint64_t present = 0;
  bool has(Field f) const { return (present & f) != 0; }

  uint64_t offset = 0;  // byte offset of the element in the uncompressed JSON
  char ph = 0;
  int category_spelling = -1;  // index into kKnownCategories, or -1
  std::string_view cat;        // as written, when category_spelling == -1
  std::string_view name;
  RawId pid, tid;
  int64_t ts = 0, dur = 0;     // ns
  int64_t flow_id = 0;
  std::string_view flow_id_text;  // string flow ids
  char scope = 0;

  int64_t external_id = 0, correlation = 0, stream = 0, device = 0;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int64_t bytes = 0, registers = 0, shared_memory = 0;
  int64_t python_id = 0, python_parent_id = 0;
  std::string_view collective_name, dtype, pg_name, pg_desc, pg_ranks, in_split, out_split;
  int64_t in_nelems = 0, out_nelems = 0, group_size = 0, seq = 0;
  int64_t mem_bytes = 0, total_allocated = 0, total_reserved = 0, device_type = 0, device_id = 0;
  uint64_t addr = 0;
  std::string_view arg_name, arg_labels;
  int64_t sort_index = 0;
  int64_t fwd_thread_id = 0;      // "Fwd thread id": 0 on autograd-recorded forward ops, the
                                  // forward thread's id on backward ops
  int64_t input_nelems = 0;       // elements of the first input tensor
  std::string_view input_type;    // its dtype as the profiler spells it ("float")
  std::string_view input_dims_text, input_types_text;  // the whole arrays, as written
  int64_t p2p_peer = 0;           // c10d::send's dst / c10d::recv_'s src, a rank of the op's group
  uint64_t shape_hash = 0;        // HashBytes of "Input Dims" as written

  // Why this event cannot be used (set by the parser), or nullptr.
  const char* reject_reason = nullptr;
  // A field that was present but unusable (the event is kept without it), or nullptr.
  const char* ignored_field = nullptr;

  // Ready for the next element. Fields guarded by a `present` bit keep stale values; the
  // ones read unconditionally are cleared.
  void Reset(uint64_t element_offset) {
    present = 0;
    offset = element_offset;
    category_spelling = -1;
    name = {};
    pid = {};
    tid = {};
    flow_id_text = {};
    reject_reason = nullptr;
    ignored_field = nullptr;
  }
};

}  // namespace rankscope::kineto
