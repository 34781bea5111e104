// RecordedEvents: an EventSink that keeps what a parse thread read from one chunk, to be handed
// to the ModelBuilder later, in file order (parallel_chunk_parser.h).
//
// Each event is copied; its strings are copied only where they would not outlive the chunk
// (EventSink::Views): the chunk's bytes and its parser stay with the recording until it is
// replayed (ParallelChunkParser keeps one parser per chunk in flight). Only the views the event's
// `present` bits (or RawEvent::Reset) vouch for are copied; the others are left empty, which the
// builder never reads. Replay() makes the same Add/Skip calls, in the same order, that the parser
// would have made on the builder directly, so the model is identical.
// Memory: the chunk's events (~0.5 KB each) and the strings copied (at most the chunk's bytes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/ingest/kineto/event_sink.h"

namespace rankscope::kineto {

class RecordedEvents final : public EventSink {
 public:
  void Add(const RawEvent& ev, Views views) override;
  void Skip(const std::string& reason, uint64_t offset) override;
  void BeginTentative() override;
  void CommitTentative() override {}
  void AbandonTentative() override;

  // Hands everything recorded to `sink`, in order.
  void Replay(EventSink* sink) const;
  // Empty again, keeping the capacity (a parse thread reuses one per chunk in flight).
  void Clear();
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    bool skipped = false;
    RawEvent event;          // when !skipped
    std::string reason;      // when skipped
    uint64_t offset = 0;     // when skipped
  };
  std::string_view Keep(std::string_view s);

  std::vector<Entry> entries_;
  size_t used_ = 0;  // entries_[0, used_) are this chunk's; the rest is reused capacity
  // Strings in fixed blocks that never move (views into them stay valid until Clear()).
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_ = 0, block_used_ = 0;
  std::vector<size_t> block_sizes_;
  size_t tentative_used_ = 0, tentative_block_ = 0, tentative_block_used_ = 0;
};

}  // namespace rankscope::kineto
