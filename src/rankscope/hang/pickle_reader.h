// A reader of pickled plain data: what PyTorch writes for a Flight Recorder dump on a timeout
// (TORCH_NCCL_DUMP_ON_TIMEOUT / TORCH_FR_DUMP_TEMP_FILE, torch._C._distributed_c10d._dump_fr_trace()):
// torch::jit::Pickler's protocol 2 of dicts, lists, tuples, strings, ints, floats, bools and
// None; and what Python's pickle writes for such data at protocols 2 to 5 (frames, memo,
// short strings, bytes).
//
// It never executes anything: opcodes that name a class or call a function (GLOBAL,
// STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, persistent ids, out-of-band buffers)
// and the text opcodes of protocols 0 and 1 are refused with the opcode and its byte offset.
// It is bounded: the number of values created (and emitted, since a memo reference can repeat
// a container), the nesting depth, and every length read is checked against the input.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope::hang {

struct PickleLimits {
  size_t max_values = 4'000'000;  // a dump of 2000 entries holds about 100,000
  size_t max_depth = 64;
};

// The pickle as JSON: dict -> object (a key that is not a str is written as text: 3 -> "3",
// None -> "None"), list, tuple, set and frozenset -> array, str -> string (invalid UTF-8
// replaced by U+FFFD, so that the value can always be written out again), bytes and bytearray
// -> binary, int -> integer (beyond 64 bits: a float), float, bool, None -> null.
// Errors (truncated input, a refused opcode, a limit) name the byte offset.
StatusOr<nlohmann::json> ReadPickle(std::string_view data, const PickleLimits& limits = {});

// A pickle of protocol 2 or later starts with PROTO (0x80) and the protocol number.
bool LooksLikePickle(std::string_view data);

}  // namespace rankscope::hang
