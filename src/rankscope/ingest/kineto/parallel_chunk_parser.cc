#include "rankscope/ingest/kineto/parallel_chunk_parser.h"

#include <cstring>
#include <system_error>

#include "rankscope/ingest/kineto/top_level_parser.h"
#include "rankscope/ingest/kineto/trace_tokenizer.h"

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {

ParallelChunkParser::ParallelChunkParser(bool keep_op_shapes, unsigned threads, size_t chunk_bytes)
    : keep_op_shapes_(keep_op_shapes), chunk_bytes_(chunk_bytes) {
  for (unsigned i = 0; i < threads; ++i) {
    try {
      threads_.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;  // no more threads: parse with those there are
    }
  }
  max_queued_ = 2 * threads_.size() + 2;
}

ParallelChunkParser::~ParallelChunkParser() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ParallelChunkParser::Parse(Item& item) {
  item.events.Clear();
  if (!item.parser) item.parser = std::make_unique<EventParser>(&item.events, keep_op_shapes_);
  item.parser->ParseChunk(item.bytes.data() + 1, item.size, TraceTokenizer::kChunkSlack, item.offset);
}

void ParallelChunkParser::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    work_ready_.wait(lock, [&] { return stop_ || !to_parse_.empty(); });
    if (stop_) return;
    Item* item = to_parse_.front();
    to_parse_.pop_front();
    lock.unlock();
    Parse(*item);
    lock.lock();
    item->done = true;
    item_done_.notify_all();
  }
}

std::unique_ptr<ParallelChunkParser::Item> ParallelChunkParser::TakeSpare() {
  std::unique_lock lock(mu_);
  room_.wait(lock, [&] { return items_ < max_queued_; });
  ++items_;
  if (spare_.empty()) return std::make_unique<Item>();
  std::unique_ptr<Item> item = std::move(spare_.back());
  spare_.pop_back();
  return item;
}

void ParallelChunkParser::Queue(std::unique_ptr<Item> item, bool to_parse) {
  Item* raw = item.get();
  {
    std::lock_guard lock(mu_);
    in_order_.push_back(std::move(item));
    if (to_parse) to_parse_.push_back(raw);
  }
  if (to_parse) work_ready_.notify_one();
  item_done_.notify_all();  // a top-level value is ready at once; a new item wakes the builder
}

void ParallelChunkParser::SubmitChunk(const char* data, size_t size, uint64_t offset) {
  std::unique_ptr<Item> item = TakeSpare();
  item->top_level = false;
  item->bytes.resize(1 + size + TraceTokenizer::kChunkSlack);
  item->bytes[0] = ' ';
  std::memcpy(item->bytes.data() + 1, data, size);
  item->size = size;
  item->offset = offset;
  item->done = false;
  Queue(std::move(item), /*to_parse=*/true);
}

void ParallelChunkParser::SubmitTopLevel(std::string_view key, std::string_view value, uint64_t offset) {
  std::unique_ptr<Item> item = TakeSpare();
  item->top_level = true;
  item->key.assign(key);
  item->value.assign(value);
  item->offset = offset;
  item->done = true;
  Queue(std::move(item), /*to_parse=*/false);
}

void ParallelChunkParser::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  item_done_.notify_all();
}

void ParallelChunkParser::BuildInOrder(ModelBuilder* builder, TraceModel* model) {
  while (true) {
    Item* oldest = nullptr;
    {
      std::unique_lock lock(mu_);
      item_done_.wait(lock, [&] { return (!in_order_.empty() && in_order_.front()->done) || (closed_ && in_order_.empty()); });
      if (in_order_.empty()) return;
      oldest = in_order_.front().get();
    }
    // A done item is no other thread's any more: built without the lock.
    if (oldest->top_level) {
      ApplyTopLevelValue(oldest->key, oldest->value, oldest->offset, model);
    } else {
      oldest->events.Replay(builder);
      if (oldest->bytes.capacity() > 4 * chunk_bytes_ + (1u << 20)) {  // one huge element: not kept for reuse
        std::vector<char>().swap(oldest->bytes);
        oldest->parser.reset();
        oldest->events = RecordedEvents();
      }
    }
    {
      std::lock_guard lock(mu_);
      spare_.push_back(std::move(in_order_.front()));
      in_order_.pop_front();
      --items_;
    }
    room_.notify_one();
  }
}

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS
