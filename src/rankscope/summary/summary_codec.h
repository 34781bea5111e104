// The rank summary format (".rsum", docs/scale.md): one rank's RankSummary in a compact,
// versioned binary file, so that the map (trace -> summary) can run where the trace is (on the
// node, in another MPI process) and only the summary travels to the reduce.
//
//   offset  size  field
//        0     8  magic "RKSUMMRY"
//        8     4  format version, little endian (kSummaryFormatVersion)
//       12     4  reserved, 0
//       16     8  payload length in bytes, little endian
//       24     8  HashBytes(payload): corruption is an error, not a wrong report
//       32     …  payload: producer, options key, trace identity, then the summary's fields
//                 (summary_fields.h) as LEB128 varints (signed: zigzag), IEEE doubles, and
//                 length-prefixed strings and arrays
//
// Compatibility rule: a reader accepts exactly its own format version. A summary is a cache of
// an analysis, so an older one is re-made from its trace, and a newer one is an error that says
// which rankscope wrote it. Any change to the fields, or to how the analysis computes them,
// bumps the version.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/base/status.h"

namespace rankscope::summary {

// 3: the window's CPU run/wait (cpu_sched); 4: p2p peers; 5: the steps' work signatures
inline constexpr uint32_t kSummaryFormatVersion = 8;
inline constexpr std::string_view kSummaryMagic = "RKSUMMRY";
inline constexpr size_t kSummaryHeaderBytes = 32;

// The trace a summary was made from, to tell whether it is still current: size, modification
// time, and a hash of the size and the first and last 64 KiB (reading the whole trace to check
// a summary would cost most of what the summary saves).
struct TraceIdentity {
  std::string file_name;  // base name of the trace
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t sample_hash = 0;
  bool operator==(const TraceIdentity&) const = default;
};

struct SummaryFile {
  std::string producer;     // "rankscope summary format N" plus the writer's build, informational
  std::string options_key;  // the analysis options the summary was computed with (engine)
  TraceIdentity trace;
  RankSummary summary;      // path, rank and rank_resolved are not stored
};

std::string EncodeSummary(const SummaryFile& file);

// Checks magic, version, length and hash, then decodes. Errors: kDataLoss for a corrupt or
// truncated file, kNotATrace for a file that is not a summary, kFailedPrecondition for another
// format version (the message names both versions).
StatusOr<SummaryFile> DecodeSummary(std::string_view bytes);

// The payload alone (no header, no hash check): the fuzz target reaches the field decoder here.
StatusOr<SummaryFile> DecodeSummaryPayload(std::string_view payload);

}  // namespace rankscope::summary
