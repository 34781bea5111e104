#include "rankscope/ingest/kineto/event_parser.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>

#include "rankscope/base/decimal.h"
#include "rankscope/base/hash.h"
#include "rankscope/base/parse_int.h"
#include "rankscope/ingest/kineto/categories.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {
namespace {

namespace od = simdjson::ondemand;
using namespace std::string_view_literals;  // keys as string_view: memcmp of a known size
using simdjson::error_code;

// Errors that mean "this value has another type": the parser can carry on past them.
inline bool IsTypeError(error_code e) {
  return e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_OUT_OF_RANGE ||
         e == simdjson::NUMBER_ERROR;
}

std::string_view TrimToken(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) {
    t.remove_suffix(1);
  }
  return t;
}

// A time in µs (number, or a number in a string) to ns. Sets ev.reject_reason on failure.
error_code ReadMicros(od::value& value, int64_t* out, RawEvent& ev, const char* what) {
  std::string_view token = TrimToken(value.raw_json_token());
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
    token = token.substr(1, token.size() - 2);
  }
  const NumberError err = ParseMicrosToNanos(token, out);
  if (err == NumberError::kNotANumber) {
    ev.reject_reason = what[0] == 't' ? "ts is not a number" : "dur is not a number";
  } else if (err == NumberError::kOutOfRange) {
    ev.reject_reason = what[0] == 't' ? "ts is out of range" : "dur is out of range";
  }
  return simdjson::SUCCESS;
}

error_code ReadId(od::value& value, RawId* out, RawEvent& ev) {
  // Most pids/tids are integers: try that first and only then look at the type.
  const error_code as_int = value.get_int64().get(out->number);
  if (as_int == simdjson::SUCCESS) return as_int;
  if (!IsTypeError(as_int)) return as_int;
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::string) {
    out->is_string = true;
    return value.get_string().get(out->text);
  }
  if (type == od::json_type::number) {
    // A float or a huge integer: keep its text as a string id rather than guess.
    out->is_string = true;
    out->text = TrimToken(value.raw_json_token());
    return simdjson::SUCCESS;
  }
  ev.reject_reason = "pid/tid is neither a number nor a string";
  return simdjson::SUCCESS;
}

// Reads an integer arg; a wrong type only drops that field.
template <typename T>
error_code ReadIntArg(od::value& value, T* out, RawEvent& ev, RawEvent::Field field, const char* why) {
  int64_t v;
  const error_code e = value.get_int64().get(v);
  if (e == simdjson::SUCCESS) {
    *out = static_cast<T>(v);
    ev.present |= field;
    return e;
  }
  if (!IsTypeError(e)) return e;
  bool is_null = false;
  if (value.is_null().get(is_null) == simdjson::SUCCESS && is_null) return simdjson::SUCCESS;
  ev.ignored_field = why;
  return simdjson::SUCCESS;
}

// GPU events write the stream as an integer; HIP runtime calls as a hex string ("0x0").
error_code ReadStreamArg(od::value& value, RawEvent& ev) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    const int base = text.substr(0, 2) == "0x" ? 16 : 10;
    if (base == 16) text.remove_prefix(2);
    if (const std::optional<int64_t> stream = ParseInt(text, base)) {
      ev.stream = *stream;
      ev.present |= RawEvent::kStream;
    }
    return simdjson::SUCCESS;
  }
  return ReadIntArg(value, &ev.stream, ev, RawEvent::kStream, "args.stream is not an integer");
}

error_code ReadStringArg(od::value& value, std::string_view* out, RawEvent& ev, RawEvent::Field field,
                         const char* why) {
  const error_code e = value.get_string().get(*out);
  if (e == simdjson::SUCCESS) {
    ev.present |= field;
    return e;
  }
  if (!IsTypeError(e)) return e;
  ev.ignored_field = why;
  return simdjson::SUCCESS;
}

error_code ReadDim3(od::value& value, int32_t out[3], RawEvent& ev, RawEvent::Field field) {
  od::array array;
  error_code e = value.get_array().get(array);
  // Triton's CPU-side launcher op records a grid expression string ("grid(100,)"): not ours.
  if (IsTypeError(e)) return simdjson::SUCCESS;
  if (e) return e;
  out[0] = out[1] = out[2] = 0;
  int i = 0;
  for (auto element : array) {
    int64_t v;
    e = element.get_int64().get(v);
    if (IsTypeError(e)) {
      ev.ignored_field = "args.grid/block holds a non-integer";
      continue;
    }
    if (e) return e;
    if (i < 3) out[i] = static_cast<int32_t>(v);
    ++i;
  }
  ev.present |= field;
  return simdjson::SUCCESS;
}

// "Input Dims": [[263562], [], ...] -> elements of the first tensor (a [] tensor is a scalar).
error_code ReadFirstTensorElements(od::value& value, RawEvent& ev) {
  od::array tensors;
  error_code e = value.get_array().get(tensors);
  if (IsTypeError(e)) return simdjson::SUCCESS;
  if (e) return e;
  bool first = true;
  for (auto tensor : tensors) {
    if (!first) continue;  // the rest is skipped by the iterator
    first = false;
    od::array dims;
    e = tensor.get_array().get(dims);
    if (IsTypeError(e)) return simdjson::SUCCESS;
    if (e) return e;
    int64_t n = 1;
    for (auto dim : dims) {
      int64_t d;
      e = dim.get_int64().get(d);
      if (IsTypeError(e)) return simdjson::SUCCESS;
      if (e) return e;
      n *= d;
    }
    ev.input_nelems = n;
    ev.present |= RawEvent::kInputNelems;
  }
  return simdjson::SUCCESS;
}

// "Input type": ["float", ...] -> the first entry.
error_code ReadFirstString(od::value& value, RawEvent& ev) {
  od::array types;
  error_code e = value.get_array().get(types);
  if (IsTypeError(e)) return simdjson::SUCCESS;
  if (e) return e;
  bool first = true;
  for (auto type : types) {
    if (!first) continue;
    first = false;
    std::string_view text;
    e = type.get_string().get(text);
    if (IsTypeError(e)) return simdjson::SUCCESS;
    if (e) return e;
    ev.input_type = text;
    ev.present |= RawEvent::kInputType;
  }
  return simdjson::SUCCESS;
}

// "Concrete Inputs" of c10d::send / c10d::recv_: [tensors, process group, peer, tag], the peer
// written as a string ("2"): the group rank the op sends to or receives from. Anything else is
// ignored (the op stays without a peer).
error_code ReadP2pPeer(od::value& value, RawEvent& ev) {
  od::array inputs;
  error_code e = value.get_array().get(inputs);
  if (IsTypeError(e)) return simdjson::SUCCESS;
  if (e) return e;
  size_t i = 0;
  for (auto input : inputs) {
    if (i++ != 2) continue;
    std::string_view text;
    e = input.get_string().get(text);
    if (IsTypeError(e)) return simdjson::SUCCESS;
    if (e) return e;
    int64_t peer = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), peer);
    if (ec != std::errc() || ptr != text.data() + text.size() || peer < 0 || peer > INT32_MAX) {
      ev.ignored_field = "args.Concrete Inputs of a c10d send/recv names no peer rank";
      continue;
    }
    ev.p2p_peer = peer;
    ev.present |= RawEvent::kP2pPeer;
  }
  return simdjson::SUCCESS;
}

// An array argument kept as its JSON text (valid until the next chunk). Not an array: ignored.
error_code ReadArrayText(od::value& value, std::string_view* out, RawEvent& ev, RawEvent::Field field) {
  od::array array;
  error_code e = value.get_array().get(array);
  if (IsTypeError(e)) return simdjson::SUCCESS;
  if (e) return e;
  e = array.raw_json().get(*out);
  if (e) return e;
  ev.present |= field;
  return simdjson::SUCCESS;
}

// ReadFirstTensorElements on the text of "Input Dims" (already read as text): "[[263562],[],...]".
void FirstTensorElementsFromText(RawEvent& ev) {
  const std::string_view t = ev.input_dims_text;
  size_t i = t.find('[');
  if (i == std::string_view::npos) return;
  i = t.find_first_not_of(" \t\r\n", i + 1);
  if (i == std::string_view::npos || t[i] != '[') return;  // not a list of tensors
  int64_t n = 1;
  for (++i; i < t.size() && t[i] != ']';) {
    const size_t end = t.find_first_of(",]", i);
    if (end == std::string_view::npos) return;
    std::string_view digits = t.substr(i, end - i);
    while (!digits.empty() && digits.front() == ' ') digits.remove_prefix(1);
    while (!digits.empty() && digits.back() == ' ') digits.remove_suffix(1);
    int64_t d = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) return;  // not an integer: unknown
    n *= d;
    i = t[end] == ',' ? end + 1 : end;
  }
  ev.input_nelems = n;
  ev.present |= RawEvent::kInputNelems;
}

void HashShape(std::string_view dims_text, RawEvent& ev) {
  ev.shape_hash = HashBytes(dims_text);
  ev.present |= RawEvent::kShapeHash;
}

// "Input Dims" read for its hash (the per-step work signature, analysis/work_signature.h): the
// raw text is a view into the parser's buffer, nothing is interned. `first_tensor`: also the
// first tensor's elements, as ReadFirstTensorElements reads them.
error_code ReadShapeHash(od::value& value, RawEvent& ev, bool first_tensor) {
  od::array array;
  error_code e = value.get_array().get(array);
  if (IsTypeError(e)) return simdjson::SUCCESS;
  if (e) return e;
  e = array.raw_json().get(ev.input_dims_text);
  if (e) return e;
  HashShape(ev.input_dims_text, ev);
  if (first_tensor) FirstTensorElementsFromText(ev);
  return simdjson::SUCCESS;
}

// ReadFirstString on the text of "Input type": ["float", ...] -> float (no escapes expected).
void FirstStringFromText(RawEvent& ev) {
  const std::string_view t = ev.input_types_text;
  const size_t open = t.find('"');
  if (open == std::string_view::npos) return;
  const size_t close = t.find('"', open + 1);
  if (close == std::string_view::npos || t.substr(open + 1, close - open - 1).find('\\') != std::string_view::npos) return;
  ev.input_type = t.substr(open + 1, close - open - 1);
  ev.present |= RawEvent::kInputType;
}

// simdjson 3.0 has no document::at_end(): past the end, current_location() is an error.
bool AtEnd(od::document& doc) {
  const char* location;
  return doc.current_location().get(location) != simdjson::SUCCESS;
}

}  // namespace

error_code EventParser::ReadTextOrArray(od::value value, std::string_view* out, std::string* storage) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::string) return value.get_string().get(*out);
  if (type != od::json_type::array) return simdjson::INCORRECT_TYPE;
  od::array array;
  if (auto e = value.get_array().get(array)) return e;
  storage->clear();
  storage->push_back('[');
  bool first = true;
  for (auto element : array) {
    od::value v;
    if (auto e = element.get(v)) return e;
    const std::string_view token = v.raw_json_token();
    if (!first) storage->append(", ");
    storage->append(TrimToken(token));
    first = false;
  }
  storage->push_back(']');
  *out = *storage;
  return simdjson::SUCCESS;
}

error_code EventParser::ParseArgs(od::object& args, RawEvent& ev) {
  // A collective annotation's shapes give its message size; every other op's "Input Dims" is
  // only hashed (the step's work signature), never interned. Kineto writes "name" before "args";
  // when the name comes later, both are read from the text just in case (ModelBuilder keeps
  // the size only for collective annotations, the hash only for CPU ops).
  const bool collective_annotation = !ev.has(RawEvent::kName) || !CollectiveAnnotationOp(ev.name).empty();
  const bool point_to_point = !ev.has(RawEvent::kName) || IsC10dPointToPointOp(ev.name);
  const bool named_annotation = ev.has(RawEvent::kName) && collective_annotation;
  for (auto field_result : args) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return e;
    const od::raw_json_string key = field.key();
    od::value& v = field.value();
    error_code e = simdjson::SUCCESS;
    switch (key.raw()[0]) {
      case 'E':
        if (key.unsafe_is_equal("External id"sv)) {
          e = ReadIntArg(v, &ev.external_id, ev, RawEvent::kExternalId, "args.External id is not an integer");
        }
        break;
      case 'e':
        if (key.unsafe_is_equal("external id"sv)) {
          e = ReadIntArg(v, &ev.external_id, ev, RawEvent::kExternalId, "args.external id is not an integer");
        }
        break;
      case 'c':
        if (key.unsafe_is_equal("correlation"sv)) {
          e = ReadIntArg(v, &ev.correlation, ev, RawEvent::kCorrelation, "args.correlation is not an integer");
        }
        break;
      case 's':
        if (key.unsafe_is_equal("stream"sv)) {
          e = ReadStreamArg(v, ev);
        } else if (key.unsafe_is_equal("shared memory"sv)) {
          e = ReadIntArg(v, &ev.shared_memory, ev, RawEvent::kSharedMemory, "args.shared memory is not an integer");
        } else if (key.unsafe_is_equal("sort_index"sv)) {
          e = ReadIntArg(v, &ev.sort_index, ev, RawEvent::kSortIndex, "args.sort_index is not an integer");
        }
        break;
      case 'd':
        if (key.unsafe_is_equal("device"sv)) {
          e = ReadIntArg(v, &ev.device, ev, RawEvent::kDevice, "args.device is not an integer");
        } else if (key.unsafe_is_equal("dtype"sv)) {
          e = ReadStringArg(v, &ev.dtype, ev, RawEvent::kDtype, "args.dtype is not a string");
        }
        break;
      case 'g':
        if (key.unsafe_is_equal("grid"sv)) e = ReadDim3(v, ev.grid, ev, RawEvent::kGrid);
        break;
      case 'b':
        if (key.unsafe_is_equal("block"sv)) {
          e = ReadDim3(v, ev.block, ev, RawEvent::kBlock);
        } else if (key.unsafe_is_equal("bytes"sv)) {
          e = ReadIntArg(v, &ev.bytes, ev, RawEvent::kBytes, "args.bytes is not an integer");
        }
        break;
      case 'r':
        if (key.unsafe_is_equal("registers per thread"sv)) {
          e = ReadIntArg(v, &ev.registers, ev, RawEvent::kRegisters, "args.registers per thread is not an integer");
        }
        break;
      case 'P':
        if (key.unsafe_is_equal("Python id"sv)) {
          e = ReadIntArg(v, &ev.python_id, ev, RawEvent::kPythonId, "args.Python id is not an integer");
        } else if (key.unsafe_is_equal("Python parent id"sv)) {
          e = ReadIntArg(v, &ev.python_parent_id, ev, RawEvent::kPythonParentId, "args.Python parent id is not an integer");
        } else if (key.unsafe_is_equal("Process Group Name"sv)) {
          e = ReadStringArg(v, &ev.pg_name, ev, RawEvent::kPgName, "args.Process Group Name is not a string");
        } else if (key.unsafe_is_equal("Process Group Description"sv)) {
          e = ReadStringArg(v, &ev.pg_desc, ev, RawEvent::kPgDesc, "args.Process Group Description is not a string");
        } else if (key.unsafe_is_equal("Process Group Ranks"sv)) {
          e = ReadTextOrArray(v, &ev.pg_ranks, &ranks_text_);
          if (e == simdjson::SUCCESS) ev.present |= RawEvent::kPgRanks;
        }
        break;
      case 'C':
        if (key.unsafe_is_equal("Collective name"sv)) {
          e = ReadStringArg(v, &ev.collective_name, ev, RawEvent::kCollectiveName, "args.Collective name is not a string");
        } else if (point_to_point && key.unsafe_is_equal("Concrete Inputs"sv)) {
          e = ReadP2pPeer(v, ev);
        }
        break;
      case 'I':
        if (key.unsafe_is_equal("In msg nelems"sv)) {
          e = ReadIntArg(v, &ev.in_nelems, ev, RawEvent::kInNelems, "args.In msg nelems is not an integer");
        } else if (key.unsafe_is_equal("In split size"sv)) {
          e = ReadTextOrArray(v, &ev.in_split, &in_split_text_);
          if (e == simdjson::SUCCESS) ev.present |= RawEvent::kInSplit;
        } else if (keep_op_shapes_ && key.unsafe_is_equal("Input Dims"sv)) {
          // The whole array as text; a collective annotation's first tensor is read from it.
          e = ReadArrayText(v, &ev.input_dims_text, ev, RawEvent::kInputDimsText);
          if (e == simdjson::SUCCESS && collective_annotation) FirstTensorElementsFromText(ev);
          if (e == simdjson::SUCCESS && ev.has(RawEvent::kInputDimsText)) HashShape(ev.input_dims_text, ev);
        } else if (!named_annotation && key.unsafe_is_equal("Input Dims"sv)) {
          // Every other op's shapes are hashed (the work signature); before its name is known, an
          // event that may be a collective annotation also gets its first tensor from the text.
          e = ReadShapeHash(v, ev, collective_annotation);
        } else if (keep_op_shapes_ && key.unsafe_is_equal("Input type"sv)) {
          e = ReadArrayText(v, &ev.input_types_text, ev, RawEvent::kInputTypesText);
          if (e == simdjson::SUCCESS && collective_annotation) FirstStringFromText(ev);
        } else if (collective_annotation && key.unsafe_is_equal("Input Dims"sv)) {
          e = ReadFirstTensorElements(v, ev);
        } else if (collective_annotation && key.unsafe_is_equal("Input type"sv)) {
          e = ReadFirstString(v, ev);
        }
        break;
      case 'O':
        if (key.unsafe_is_equal("Out msg nelems"sv)) {
          e = ReadIntArg(v, &ev.out_nelems, ev, RawEvent::kOutNelems, "args.Out msg nelems is not an integer");
        } else if (key.unsafe_is_equal("Out split size"sv)) {
          e = ReadTextOrArray(v, &ev.out_split, &out_split_text_);
          if (e == simdjson::SUCCESS) ev.present |= RawEvent::kOutSplit;
        }
        break;
      case 'F':
        if (key.unsafe_is_equal("Fwd thread id"sv)) {
          e = ReadIntArg(v, &ev.fwd_thread_id, ev, RawEvent::kFwdThreadId, "args.Fwd thread id is not an integer");
        }
        break;
      case 'G':
        if (key.unsafe_is_equal("Group size"sv)) {
          e = ReadIntArg(v, &ev.group_size, ev, RawEvent::kGroupSize, "args.Group size is not an integer");
        }
        break;
      case 'S':
        if (key.unsafe_is_equal("Seq"sv)) e = ReadIntArg(v, &ev.seq, ev, RawEvent::kSeq, "args.Seq is not an integer");
        break;
      case 'B':
        if (key.unsafe_is_equal("Bytes"sv)) {
          e = ReadIntArg(v, &ev.mem_bytes, ev, RawEvent::kMemBytes, "args.Bytes is not an integer");
        }
        break;
      case 'T':
        if (key.unsafe_is_equal("Total Allocated"sv)) {
          e = ReadIntArg(v, &ev.total_allocated, ev, RawEvent::kTotalAllocated, "args.Total Allocated is not an integer");
        } else if (key.unsafe_is_equal("Total Reserved"sv)) {
          e = ReadIntArg(v, &ev.total_reserved, ev, RawEvent::kTotalReserved, "args.Total Reserved is not an integer");
        }
        break;
      case 'A':
        if (key.unsafe_is_equal("Addr"sv)) {
          uint64_t addr;
          e = v.get_uint64().get(addr);
          if (e == simdjson::SUCCESS) {
            ev.addr = addr;
            ev.present |= RawEvent::kAddr;
          } else if (IsTypeError(e)) {
            e = simdjson::SUCCESS;  // addresses are informative only
          }
        }
        break;
      case 'D':
        if (key.unsafe_is_equal("Device Type"sv)) {
          e = ReadIntArg(v, &ev.device_type, ev, RawEvent::kDeviceType, "args.Device Type is not an integer");
        } else if (key.unsafe_is_equal("Device Id"sv)) {
          e = ReadIntArg(v, &ev.device_id, ev, RawEvent::kDeviceId, "args.Device Id is not an integer");
        }
        break;
      case 'n':
        if (key.unsafe_is_equal("name"sv)) {
          e = ReadStringArg(v, &ev.arg_name, ev, RawEvent::kArgName, "args.name is not a string");
        }
        break;
      case 'l':
        if (key.unsafe_is_equal("labels"sv)) {
          e = ReadStringArg(v, &ev.arg_labels, ev, RawEvent::kArgLabels, "args.labels is not a string");
        }
        break;
      default:
        break;
    }
    if (e) return e;
  }
  return simdjson::SUCCESS;
}

error_code EventParser::ParseEvent(od::object& object, RawEvent& ev) {
  for (auto field_result : object) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return e;
    const od::raw_json_string key = field.key();
    od::value& v = field.value();
    error_code e = simdjson::SUCCESS;
    std::string_view text;
    switch (key.raw()[0]) {
      case 'p':
        if (key.unsafe_is_equal("ph"sv)) {
          // Read "X" straight from the input: the common one-letter case needs no unescaping.
          const std::string_view token = v.raw_json_token();
          if (token.size() >= 3 && token[0] == '"' && token[2] == '"' && token[1] != '\\') {
            ev.ph = token[1];
            ev.present |= RawEvent::kPh;
          } else {
            e = v.get_string().get(text);
            if (e == simdjson::SUCCESS && text.size() == 1) {
              ev.ph = text[0];
              ev.present |= RawEvent::kPh;
            } else if (e == simdjson::SUCCESS || IsTypeError(e)) {
              ev.reject_reason = "ph is not a one-character string";
              e = simdjson::SUCCESS;
            }
          }
        } else if (key.unsafe_is_equal("pid"sv)) {
          e = ReadId(v, &ev.pid, ev);
          ev.present |= RawEvent::kPid;
        }
        break;
      case 't':
        if (key.unsafe_is_equal("ts"sv)) {
          e = ReadMicros(v, &ev.ts, ev, "ts");
          ev.present |= RawEvent::kTs;
        } else if (key.unsafe_is_equal("tid"sv)) {
          e = ReadId(v, &ev.tid, ev);
          ev.present |= RawEvent::kTid;
        }
        break;
      case 'd':
        if (key.unsafe_is_equal("dur"sv)) {
          e = ReadMicros(v, &ev.dur, ev, "dur");
          ev.present |= RawEvent::kDur;
        }
        break;
      case 'n':
        if (key.unsafe_is_equal("name"sv)) {
          e = v.get_string().get(ev.name);
          if (IsTypeError(e)) {
            ev.reject_reason = "name is not a string";
            e = simdjson::SUCCESS;
          } else {
            ev.present |= RawEvent::kName;
          }
        }
        break;
      case 'c':
        if (key.unsafe_is_equal("cat"sv)) {
          e = v.get_string().get(ev.cat);
          if (IsTypeError(e)) {
            ev.ignored_field = "cat is not a string";
            e = simdjson::SUCCESS;
          } else if (e == simdjson::SUCCESS) {
            ev.present |= RawEvent::kCat;
            ev.category_spelling = FindCategorySpelling(ev.cat);
          }
        }
        break;
      case 'a':
        if (key.unsafe_is_equal("args"sv)) {
          od::object args;
          e = v.get_object().get(args);
          if (IsTypeError(e)) {
            ev.ignored_field = "args is not an object";
            e = simdjson::SUCCESS;
          } else if (e == simdjson::SUCCESS) {
            e = ParseArgs(args, ev);
          }
        }
        break;
      case 'i':
        if (key.unsafe_is_equal("id"sv)) {
          RawId id;
          e = ReadId(v, &id, ev);
          ev.flow_id = id.number;
          if (id.is_string) ev.flow_id_text = id.text;
          ev.present |= RawEvent::kId;
        }
        break;
      case 'b':
        if (key.unsafe_is_equal("bp"sv)) {
          if (v.get_string().get(text) == simdjson::SUCCESS && text == "e") ev.present |= RawEvent::kBindEnclosing;
        }
        break;
      case 's':
        if (key.unsafe_is_equal("s"sv)) {
          if (v.get_string().get(text) == simdjson::SUCCESS && !text.empty()) {
            ev.scope = text[0];
            ev.present |= RawEvent::kScope;
          }
        }
        break;
      default:
        break;
    }
    if (e) return e;
  }
  return simdjson::SUCCESS;
}

size_t EventParser::ParseWhole(const char* doc_text, size_t len, size_t capacity, uint64_t offset,
                               std::string* error) {
  size_t done = 0;
  auto fail = [&](error_code e) {
    *error = simdjson::error_message(e);
    return done;
  };
  od::document doc;
  if (auto e = parser_.iterate(doc_text, len, capacity).get(doc)) return fail(e);
  od::array array;
  if (auto e = doc.get_array().get(array)) return fail(e);
  for (auto element_result : array) {
    od::value element;
    if (auto e = element_result.get(element)) return fail(e);
    const char* location = nullptr;
    if (auto e = element.current_location().get(location)) return fail(e);
    const uint64_t element_offset = offset + static_cast<uint64_t>(location - doc_text - 1);
    od::object object;
    const error_code e = element.get_object().get(object);
    if (IsTypeError(e)) {
      sink_->Skip("traceEvents element is not an object", element_offset);
      ++done;
      continue;
    }
    if (e) return fail(e);
    event_.Reset(element_offset);
    if (auto pe = ParseEvent(object, event_)) return fail(pe);
    sink_->Add(event_, EventSink::Views::kUntilNextChunk);
    ++done;
  }
  if (!AtEnd(doc)) *error = "unexpected content after the last element";
  return done;
}

void EventParser::ParseSingle(std::string_view element, uint64_t offset) {
  buffer_.resize(element.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(buffer_.data(), element.data(), element.size());
  od::document doc;
  od::object object;
  RawEvent& ev = event_;
  ev.Reset(offset);
  error_code e = single_parser_.iterate(buffer_.data(), element.size(), buffer_.size()).get(doc);
  if (!e) e = doc.get_object().get(object);
  if (IsTypeError(e)) return sink_->Skip("traceEvents element is not an object", offset);
  if (!e) e = ParseEvent(object, ev);
  if (!e && !AtEnd(doc)) e = simdjson::TRAILING_CONTENT;
  if (e) return sink_->Skip(fmt::format("malformed event: {}", simdjson::error_message(e)), offset);
  sink_->Add(ev, EventSink::Views::kDuringCall);  // the next element reuses the parser
}

// Splits `elements` at top-level commas (outside strings and brackets).
void EventParser::ParseOneByOne(std::string_view elements, uint64_t offset, size_t already_done) {
  size_t index = 0, start = 0, depth = 0;
  bool in_string = false, escaped = false;
  auto emit = [&](size_t end) {
    size_t b = start, e = end;
    while (b < e && (elements[b] == ' ' || elements[b] == '\n' || elements[b] == '\r' || elements[b] == '\t')) ++b;
    while (e > b && (elements[e - 1] == ' ' || elements[e - 1] == '\n' || elements[e - 1] == '\r' || elements[e - 1] == '\t')) --e;
    if (index++ < already_done) return;
    if (b == e) return sink_->Skip("empty traceEvents element", offset + b);
    ParseSingle(elements.substr(b, e - b), offset + b);
  };
  for (size_t i = 0; i < elements.size(); ++i) {
    const char c = elements[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      emit(i);
      start = i + 1;
    }
  }
  emit(elements.size());
}

void EventParser::ParseChunk(char* data, size_t size, size_t slack, uint64_t offset) {
  const char before = data[-1], after = data[size];
  data[-1] = '[';
  data[size] = ']';
  std::string error;
  const size_t done = ParseWhole(data - 1, size + 2, size + 1 + slack, offset, &error);
  data[-1] = before;
  data[size] = after;
  if (!error.empty()) ParseOneByOne(std::string_view(data, size), offset, done);
}

bool EventParser::TryParseChunk(char* data, size_t size, size_t slack, uint64_t offset) {
  sink_->BeginTentative();
  const char before = data[-1], after = data[size];
  data[-1] = '[';
  data[size] = ']';
  std::string error;
  ParseWhole(data - 1, size + 2, size + 1 + slack, offset, &error);
  data[-1] = before;
  data[size] = after;
  if (error.empty()) {
    sink_->CommitTentative();
    return true;
  }
  sink_->AbandonTentative();
  return false;
}

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS
