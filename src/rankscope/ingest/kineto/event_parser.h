// EventParser: reads a chunk of traceEvents elements with simdjson On-Demand.
//
// The tokenizer hands over chunks of whole elements wrapped as "[e0,e1,...]". The parser reads
// the fields rankscope uses into a RawEvent and passes it to its sink (the ModelBuilder, or a
// RecordedEvents when several threads parse one trace); everything else
// is skipped without being materialised. If a chunk is not valid JSON (corrupt bytes, invalid
// UTF-8, too deep), it is split into single elements and each is parsed on its own, so one bad
// event costs one skipped event, not the file. Compiled once per CPU target.
#pragma once

#include <simdjson.h>

#include <string>

#include "rankscope/ingest/kineto/event_sink.h"
#include "rankscope/ingest/kineto/raw_event.h"

#ifndef RANKSCOPE_TARGET_NS
#error "event_parser.h is compiled per CPU target: define RANKSCOPE_TARGET_NS"
#endif

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {

class EventParser {
 public:
  // keep_op_shapes: read "Input Dims" / "Input type" of every op as text (ReaderOptions).
  explicit EventParser(EventSink* sink, bool keep_op_shapes = false)
      : sink_(sink), keep_op_shapes_(keep_op_shapes) {}

  // data[0, size) holds whole elements separated by commas; `offset` is the stream offset of
  // data[0]. data[-1] and data[size .. size + slack) must be writable: the chunk is parsed in
  // place as "[" + elements + "]" (the two bytes are restored afterwards), without a copy.
  void ParseChunk(char* data, size_t size, size_t slack, uint64_t offset);

  // The same for a chunk whose end the tokenizer guessed: all or nothing. Returns false (and
  // takes back every event it added) unless the whole chunk parses as complete elements.
  bool TryParseChunk(char* data, size_t size, size_t slack, uint64_t offset);

 private:
  // Parses the bracketed chunk in one go; returns how many elements were handed to the
  // builder before an error (all of them when *error is empty).
  size_t ParseWhole(const char* doc, size_t len, size_t capacity, uint64_t offset, std::string* error);
  void ParseOneByOne(std::string_view elements, uint64_t offset, size_t already_done);
  void ParseSingle(std::string_view element, uint64_t offset);

  // Objects by reference: copying an On-Demand iterator through the stack costs a
  // store-forwarding stall per event.
  simdjson::error_code ParseEvent(simdjson::ondemand::object& object, RawEvent& ev);
  simdjson::error_code ParseArgs(simdjson::ondemand::object& args, RawEvent& ev);
  simdjson::error_code ReadTextOrArray(simdjson::ondemand::value value, std::string_view* out,
                                       std::string* storage);

  EventSink* sink_;
  bool keep_op_shapes_;
  simdjson::ondemand::parser parser_;
  // The corrupt-chunk path parses elements one at a time with this one, so the views of the
  // chunk's elements parsed before (in parser_'s string buffer) stay valid (EventSink::Views).
  simdjson::ondemand::parser single_parser_;
  RawEvent event_;  // reused for every element (Reset() instead of re-initialising ~500 bytes)
  std::string buffer_;  // a single element + padding (the fallback path)
  // Arrays that we keep as text ("Process Group Ranks": [0, 1]) are rendered here.
  std::string ranks_text_, in_split_text_, out_split_text_;
};

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS
