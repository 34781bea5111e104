// EventSink: where the event parser puts what it read, one element at a time.
//
// The model builder is the sink when one thread reads a trace; a RecordedEvents is the sink of a
// parse thread when several parse one trace (parallel_chunk_parser.h), and is replayed into the
// builder in file order afterwards, so both paths hand the builder the same calls.
#pragma once

#include <cstdint>
#include <string>

#include "rankscope/ingest/kineto/raw_event.h"

namespace rankscope::kineto {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // How long the string views of an added event stay valid.
  enum class Views {
    // Until the parser's next chunk: they point into the chunk's bytes or into simdjson's
    // string buffer for the chunk. Except pg_ranks, in_split and out_split, which may point
    // into the parser's scratch strings and are valid during the call only.
    kUntilNextChunk,
    kDuringCall,  // all of them (an element parsed on its own, in the corrupt-chunk path)
  };
  // One parsed element.
  virtual void Add(const RawEvent& ev, Views views) = 0;
  // An element that could not be parsed at all, and why.
  virtual void Skip(const std::string& reason, uint64_t offset) = 0;

  // A chunk parsed on a guess (TraceTokenizer's guessed ends) is all or nothing: what it adds
  // after BeginTentative() is kept by CommitTentative() or taken back by AbandonTentative().
  virtual void BeginTentative() = 0;
  virtual void CommitTentative() = 0;
  virtual void AbandonTentative() = 0;
};

}  // namespace rankscope::kineto
