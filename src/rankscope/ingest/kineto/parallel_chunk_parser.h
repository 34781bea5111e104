// ParallelChunkParser: one trace read by several threads into the model a one-thread read
// builds (ReaderOptions::parse_threads).
//
//   cutting thread:  TraceTokenizer cuts chunks at exact element boundaries and queues a copy of
//                    each (and the top-level values, in file order)
//   parse threads:   turn chunks into RecordedEvents (simdjson and the field reading: ~2/3 of a
//                    one-thread read's time)
//   calling thread:  replays them into the ModelBuilder, oldest first (interning, tracks,
//                    tables: the part that must stay in order)
//
// Bounded: at most 2 x threads + 2 items are queued; the cutter waits for the builder beyond
// that. Each chunk holds its bytes (chunk_bytes), a simdjson parser sized for them (~5x) and its
// events: ~1,000 per 256 KB of Kineto JSON (~0.5 MB); a hostile trace of empty objects packs
// ~85,000 (~40 MB). A chunk made big by one huge element (up to max_event_bytes) gives its memory
// back once built. Compiled once per CPU target.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rankscope/ingest/kineto/event_parser.h"
#include "rankscope/ingest/kineto/model_builder.h"
#include "rankscope/ingest/kineto/recorded_events.h"

#ifndef RANKSCOPE_TARGET_NS
#error "parallel_chunk_parser.h is compiled per CPU target: define RANKSCOPE_TARGET_NS"
#endif

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {

class ParallelChunkParser {
 public:
  // Starts `threads` parse threads; started() is false if none could be. `chunk_bytes`: the
  // tokenizer's target chunk size (ReaderOptions).
  ParallelChunkParser(bool keep_op_shapes, unsigned threads, size_t chunk_bytes);
  ~ParallelChunkParser();
  ParallelChunkParser(const ParallelChunkParser&) = delete;
  ParallelChunkParser& operator=(const ParallelChunkParser&) = delete;
  bool started() const { return !threads_.empty(); }

  // From the cutting thread, in file order. A chunk is data[0, size): whole elements, as
  // TraceTokenizer::ChunkFn hands them over; it is copied.
  void SubmitChunk(const char* data, size_t size, uint64_t offset);
  void SubmitTopLevel(std::string_view key, std::string_view value, uint64_t offset);
  // Nothing more will be submitted.
  void Close();

  // On the calling thread: builds `model` from every item in file order, until Close() and the
  // last item.
  void BuildInOrder(ModelBuilder* builder, TraceModel* model);

 private:
  struct Item {
    bool top_level = false;
    // A chunk: [0] is the byte before it, then its bytes, then slack for the parser.
    std::vector<char> bytes;
    size_t size = 0;
    uint64_t offset = 0;
    RecordedEvents events;
    // Its own parser: the events' views point into its string buffer until they are replayed.
    std::unique_ptr<EventParser> parser;
    // A top-level value.
    std::string key, value;
    bool done = false;
  };
  void Work();
  void Parse(Item& item);
  std::unique_ptr<Item> TakeSpare();  // waits for room
  void Queue(std::unique_ptr<Item> item, bool to_parse);

  const bool keep_op_shapes_;
  const size_t chunk_bytes_;
  size_t max_queued_ = 1;
  std::mutex mu_;
  std::condition_variable work_ready_, item_done_, room_;
  std::deque<Item*> to_parse_;                 // waiting for a parse thread
  std::deque<std::unique_ptr<Item>> in_order_;  // every queued item, in file order
  std::vector<std::unique_ptr<Item>> spare_;    // built items, reused
  size_t items_ = 0;                            // queued or being built
  bool closed_ = false;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS
