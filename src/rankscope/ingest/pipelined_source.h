// PipelinedSource: a ByteSource read ahead on its own thread, so that gzip inflate and JSON
// parsing of one big trace run on two cores at once (rank 0's multi-GB trace is often the
// critical path of a whole job's analysis; docs/scale.md). The bytes are exactly the inner
// source's, in order, so the model read from them is identical; only who inflates them changes.
// Memory: `depth` blocks of `block_bytes` at most.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rankscope/ingest/byte_source.h"

namespace rankscope {

class PipelinedSource : public ByteSource {
 public:
  PipelinedSource(std::unique_ptr<ByteSource> inner, size_t block_bytes = 1 << 20, size_t depth = 4);
  ~PipelinedSource() override;
  PipelinedSource(const PipelinedSource&) = delete;
  PipelinedSource& operator=(const PipelinedSource&) = delete;

  StatusOr<size_t> Read(char* dst, size_t max) override;
  uint64_t raw_bytes_consumed() const override;
  bool is_gzip() const override { return gzip_; }

 private:
  void Produce();

  std::unique_ptr<ByteSource> inner_;
  const size_t block_bytes_;
  const size_t depth_;
  const bool gzip_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> ready_;  // filled blocks, oldest first
  size_t offset_ = 0;              // consumed bytes of ready_.front()
  bool end_ = false;               // the inner source is exhausted (or failed)
  bool stop_ = false;              // the reader is gone
  Status error_;
  uint64_t raw_consumed_ = 0;      // the inner source's count, as of the last block handed over
  std::thread producer_;
};

// Wraps `source` in a PipelinedSource when it is gzip (plain JSON is read faster than a thread
// hand-off would save).
std::unique_ptr<ByteSource> PipelineIfCompressed(std::unique_ptr<ByteSource> source);

}  // namespace rankscope
