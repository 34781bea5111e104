// TraceFormat: one way traces are written down (Kineto JSON, ...), as a plug-in of the reader.
//
// A format recognises its files from their first bytes and their name (Sniff), then reads a
// whole file into the format-neutral TraceModel (Read), mapping its own event types onto
// ActivityKind. Each format lives in its own folder under ingest/ and is registered by one line
// in ingest/CMakeLists.txt: docs/architecture.md, "Adding a trace format".
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "rankscope/base/status.h"
#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/reader_options.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

class TraceFormat {
 public:
  // How many bytes from the start of a file (after gunzip) Sniff is shown at most.
  static constexpr size_t kSniffBytes = 4096;

  virtual ~TraceFormat() = default;

  // A short stable id ("kineto").
  virtual std::string_view name() const = 0;

  // Endings of its file names (".json", ".json.gz"): directories are searched for these.
  virtual std::span<const std::string_view> file_suffixes() const = 0;

  // Whether a file is in this format, from its first bytes (`head`: kSniffBytes of them, fewer
  // when the file is shorter; gzip is already inflated) and its name. Cheap and without I/O; it
  // may accept a file that Read then rejects with a clear error.
  virtual bool Sniff(std::string_view head, std::string_view file_name) const = 0;

  // Reads the whole of `source` (from its first byte, gzip already inflated) into `model`.
  // Errors say what is wrong and where (byte offsets); the caller adds the file name. Must not
  // crash, hang or allocate without bound on any input.
  virtual Status Read(ByteSource* source, const ReaderOptions& options, TraceModel* model) const = 0;
};

}  // namespace rankscope
