#include "rankscope/ingest/pipelined_source.h"

#include <algorithm>
#include <cstring>

namespace rankscope {

PipelinedSource::PipelinedSource(std::unique_ptr<ByteSource> inner, size_t block_bytes, size_t depth)
    : inner_(std::move(inner)),
      block_bytes_(std::max<size_t>(block_bytes, 1)),
      depth_(std::max<size_t>(depth, 1)),
      gzip_(inner_->is_gzip()) {
  set_size_hint(inner_->size_hint());
  producer_ = std::thread([this] { Produce(); });
}

PipelinedSource::~PipelinedSource() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  producer_.join();
}

void PipelinedSource::Produce() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
      if (stop_) return;
    }
    std::string block(block_bytes_, '\0');
    size_t filled = 0;
    Status error;
    while (filled < block.size()) {  // a short read is not the end: only 0 is
      auto n = inner_->Read(block.data() + filled, block.size() - filled);
      if (!n.ok()) {
        error = n.status();
        break;
      }
      if (*n == 0) break;
      filled += *n;
    }
    block.resize(filled);
    std::lock_guard lock(mu_);
    raw_consumed_ = inner_->raw_bytes_consumed();
    if (!block.empty()) ready_.push_back(std::move(block));
    if (!error.ok() || filled < block_bytes_) {
      error_ = error;
      end_ = true;
    }
    changed_.notify_all();
    if (end_) return;
  }
}

StatusOr<size_t> PipelinedSource::Read(char* dst, size_t max) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return !ready_.empty() || end_; });
  if (ready_.empty()) {
    if (!error_.ok()) return error_;
    return size_t{0};
  }
  const std::string& front = ready_.front();
  const size_t n = std::min(max, front.size() - offset_);
  std::memcpy(dst, front.data() + offset_, n);
  offset_ += n;
  if (offset_ == front.size()) {
    ready_.pop_front();
    offset_ = 0;
    changed_.notify_all();
  }
  return n;
}

uint64_t PipelinedSource::raw_bytes_consumed() const {
  std::lock_guard lock(mu_);
  return raw_consumed_;
}

std::unique_ptr<ByteSource> PipelineIfCompressed(std::unique_ptr<ByteSource> source) {
  if (!source->is_gzip()) return source;
  return std::make_unique<PipelinedSource>(std::move(source));
}

}  // namespace rankscope
