// PyTorch's Flight Recorder: each rank's ring buffer of its recent collectives (2000 by
// default; TORCH_FR_BUFFER_SIZE / TORCH_NCCL_TRACE_BUFFER_SIZE). The collector dumps it with
// `torch._C._distributed_c10d._dump_fr_trace_json()` into rank<R>.flightrecorder beside the
// stacks, adding a "rankscope" object (rank, job, host, dump time, and every process group's
// global ranks, which gloo's dump leaves empty). The dumps PyTorch writes itself (NCCL on a
// timeout with TORCH_NCCL_DUMP_ON_TIMEOUT, to $TORCH_FR_DUMP_TEMP_FILE<rank>, by default
// /tmp/nccl_trace_rank_<R>) are pickles of the same structure, read with pickle_reader.h; their
// rank comes from the file name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::hang {

struct FrEntry {
  int64_t record_id = -1;
  std::string pg_id;         // this rank's numbering of its process groups
  std::string pg_name;       // the group's name, the same on every rank ("0" = the default group)
  std::string pg_desc;       // "default_pg", or what the program called it
  int64_t collective_seq_id = 0;  // per group, per collective launch
  int64_t p2p_seq_id = 0;
  int64_t op_id = 0;
  bool is_p2p = false;
  std::string profiling_name;  // "gloo:all_reduce", "nccl:all_reduce", ...
  std::vector<std::vector<int64_t>> input_sizes, output_sizes;
  std::vector<std::string> input_dtypes, output_dtypes;
  std::string state;         // "scheduled", "started", "completed"
  bool retired = false;      // no longer watched: completed (gloo), or timed out (NCCL, not completed)
  int64_t time_created_ns = 0;
  int64_t timeout_ms = 0;

  // gloo leaves `state` at "scheduled" and retires an entry when its work completes; NCCL
  // moves `state` to "completed" (a retired NCCL entry that is not completed timed out).
  bool completed() const;
  // The op without the backend: "all_reduce".
  std::string_view op() const;
};

struct ProcessGroupInfo {
  std::string name, desc;
  std::vector<int64_t> ranks;  // global ranks, ascending; empty when the dump does not say
};

struct FrDump {
  std::string path;
  std::string version;
  int64_t rank = -1;
  int64_t world_size = -1;
  int64_t pid = 0;
  std::string job, host, capture;
  int64_t time_unix_ns = 0;           // when it was dumped (0: unknown)
  bool from_rankscope = false;        // written by the rankscope collector
  std::map<std::string, ProcessGroupInfo> groups;  // by group name
  std::vector<FrEntry> entries;       // in record order
  size_t skipped_entries = 0;         // entries that were not objects or lacked a group
};

// Parses a Flight Recorder dump, JSON or pickled (told apart by the pickle's first bytes).
// `rank_hint` is used when the dump does not name its rank (PyTorch's own dumps). A truncated or
// malformed dump, or a pickle that is not plain data, is an error naming the byte offset.
StatusOr<FrDump> ParseFlightRecorder(std::string_view text, std::string_view path, int64_t rank_hint);

inline constexpr size_t kMaxFlightRecorderBytes = 256u << 20;

}  // namespace rankscope::hang
