#include "rankscope/hang/pickle_reader.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "rankscope/base/utf8.h"

namespace rankscope::hang {
namespace {

using Json = nlohmann::json;

// Opcodes (Python's Lib/pickle.py names them).
enum Op : uint8_t {
  kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kDup = '2',
  kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kNone = 'N', kBinFloat = 'G',
  kBinUnicode = 'X', kBinBytes = 'B', kShortBinBytes = 'C',
  kAppend = 'a', kAppends = 'e', kEmptyList = ']', kList = 'l',
  kEmptyDict = '}', kDict = 'd', kSetItem = 's', kSetItems = 'u',
  kEmptyTuple = ')', kTuple = 't',
  kBinGet = 'h', kLongBinGet = 'j', kBinPut = 'q', kLongBinPut = 'r',
  kProto = 0x80, kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89,
  kLong1 = 0x8a, kLong4 = 0x8b, kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e,
  kEmptySet = 0x8f, kAddItems = 0x90, kFrozenSet = 0x91, kMemoize = 0x94, kFrame = 0x95, kByteArray8 = 0x96,
};

// The opcodes refused because they load code or objects, by name for the message.
const char* RefusedName(uint8_t op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: case 0x83: case 0x84: return "EXT";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 'I': case 'L': case 'F': case 'S': case 'V': case 'T': case 'U': case 'p': case 'g':
      return "a text opcode of protocol 0 or 1";
    default: return nullptr;
  }
}

enum class Kind : uint8_t { kNone, kBool, kInt, kUnsigned, kFloat, kStr, kBytes, kList, kTuple, kDict, kSet };

// One Python object. Containers hold their items in `items_[item_list]` (a dict: key, value,
// key, value, ...); strings and bytes are slices of the input.
struct Node {
  Kind kind = Kind::kNone;
  bool flag = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  size_t offset = 0, length = 0;
  uint32_t item_list = 0;
};

class Decoder {
 public:
  Decoder(std::string_view in, const PickleLimits& limits) : in_(in), limits_(limits) {}

  StatusOr<Json> Decode() {
    RANKSCOPE_ASSIGN_OR_RETURN(uint32_t root, Run());
    emitted_ = 0;
    return ToJson(root, 0);
  }

 private:
  // ---- reading the input
  Status Truncated() const {
    return DataLoss("a pickle cut off after {} bytes (in the opcode at byte {}): a truncated dump?", in_.size(), op_at_);
  }
  Status Need(uint64_t n) const { return n <= in_.size() - pos_ ? OkStatus() : Truncated(); }
  StatusOr<uint64_t> Unsigned(size_t bytes) {  // little-endian
    RANKSCOPE_RETURN_IF_ERROR(Need(bytes));
    uint64_t v = 0;
    for (size_t k = 0; k < bytes; ++k) v |= uint64_t{static_cast<unsigned char>(in_[pos_ + k])} << (8 * k);
    pos_ += bytes;
    return v;
  }

  // ---- the objects
  Status Budget(size_t n = 1) {
    work_ += n;
    if (work_ > limits_.max_values) {
      return OutOfRange("a pickle with more than {} values (byte {}): larger than any flight-recorder dump",
                        limits_.max_values, op_at_);
    }
    return OkStatus();
  }
  StatusOr<uint32_t> New(Node n) {
    RANKSCOPE_RETURN_IF_ERROR(Budget());
    if (n.kind == Kind::kList || n.kind == Kind::kTuple || n.kind == Kind::kDict || n.kind == Kind::kSet) {
      n.item_list = static_cast<uint32_t>(items_.size());
      items_.emplace_back();
    }
    nodes_.push_back(n);
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  Status Push(StatusOr<uint32_t> node) {
    if (!node.ok()) return node.status();
    stack_.push_back(*node);
    return OkStatus();
  }
  StatusOr<uint32_t> Pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) {
      return DataLoss("a malformed pickle: opcode at byte {} pops an empty stack", op_at_);
    }
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  StatusOr<uint32_t> Top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) {
      return DataLoss("a malformed pickle: opcode at byte {} needs a value on the stack", op_at_);
    }
    return stack_.back();
  }
  // The items above the last MARK, which is removed.
  StatusOr<std::vector<uint32_t>> PopMark() {
    if (marks_.empty()) return DataLoss("a malformed pickle: opcode at byte {} without a MARK", op_at_);
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  StatusOr<uint32_t> Tuple(std::vector<uint32_t> items) {
    RANKSCOPE_ASSIGN_OR_RETURN(uint32_t t, New({.kind = Kind::kTuple}));
    items_[nodes_[t].item_list] = std::move(items);
    return t;
  }
  Status Extend(uint32_t container, const std::vector<uint32_t>& values, Kind want, const char* what) {
    const Node& c = nodes_[container];
    const bool set_like = want == Kind::kSet && c.kind == Kind::kSet;
    if (c.kind != want && !set_like) return DataLoss("a malformed pickle: {} at byte {} on a value that is not a {}", what, op_at_,
                                                     want == Kind::kList ? "list" : want == Kind::kDict ? "dict" : "set");
    if (want == Kind::kDict && values.size() % 2) return DataLoss("a malformed pickle: {} at byte {} with a key and no value", what, op_at_);
    RANKSCOPE_RETURN_IF_ERROR(Budget(values.size()));
    auto& items = items_[c.item_list];
    items.insert(items.end(), values.begin(), values.end());
    return OkStatus();
  }
  StatusOr<uint32_t> String(Kind kind, uint64_t length) {
    RANKSCOPE_RETURN_IF_ERROR(Need(length));
    Node n{.kind = kind, .offset = pos_, .length = static_cast<size_t>(length)};
    pos_ += static_cast<size_t>(length);
    return New(n);
  }
  StatusOr<uint32_t> Long(uint64_t n) {
    if (n > 1024) return OutOfRange("a pickled integer of {} bytes at byte {}: not a flight-recorder value", n, op_at_);
    RANKSCOPE_RETURN_IF_ERROR(Need(n));
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(in_[pos_ + k]); };
    Node node{.kind = Kind::kInt};
    const bool negative = n > 0 && (byte(n - 1) & 0x80);
    if (n <= 8) {
      uint64_t v = negative ? ~uint64_t{0} : 0;
      for (size_t k = 0; k < n; ++k) v = (v & ~(uint64_t{0xff} << (8 * k))) | (uint64_t{byte(k)} << (8 * k));
      node.i = static_cast<int64_t>(v);
    } else if (n == 9 && byte(8) == 0) {  // 2^63 .. 2^64 - 1
      node.kind = Kind::kUnsigned;
      for (size_t k = 0; k < 8; ++k) node.u |= uint64_t{byte(k)} << (8 * k);
    } else {  // beyond 64 bits: as near as a double gets
      node.kind = Kind::kFloat;
      for (size_t k = n; k-- > 0;) node.f = node.f * 256 + byte(k);
      if (negative) node.f -= std::ldexp(1.0, static_cast<int>(8 * n));
    }
    pos_ += static_cast<size_t>(n);
    return New(node);
  }
  StatusOr<uint32_t> Memo(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return DataLoss("a malformed pickle: memo {} at byte {} was never stored", key, op_at_);
    return it->second;
  }
  Status Put(uint64_t key) {
    RANKSCOPE_ASSIGN_OR_RETURN(uint32_t top, Top());
    RANKSCOPE_RETURN_IF_ERROR(Budget());
    memo_[key] = top;
    return OkStatus();
  }

  Status Refuse(uint8_t op) {
    const char* name = RefusedName(op);
    std::string what = name ? name : fmt::format("0x{:02x}", op);
    if (op == 'c') {  // GLOBAL module\nname\n: say which, it tells what wrote the file
      const std::string_view rest = in_.substr(pos_, 200);
      const size_t a = rest.find('\n');
      const size_t b = a == std::string_view::npos ? a : rest.find('\n', a + 1);
      if (b != std::string_view::npos) what += fmt::format(" {}.{}", rest.substr(0, a), rest.substr(a + 1, b - a - 1));
    }
    return InvalidArgument("pickle opcode {} at byte {}: rankscope reads pickles of plain data only (dicts, lists, "
                           "tuples, strings, numbers) and never loads classes or calls functions; this is not a "
                           "flight-recorder dump as PyTorch writes it", ValidUtf8(what), op_at_);
  }

  StatusOr<uint32_t> Run() {
    while (true) {
      op_at_ = pos_;
      if (pos_ >= in_.size()) return Truncated();
      const auto op = static_cast<uint8_t>(in_[pos_++]);
      switch (op) {
        case kProto: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t v, Unsigned(1));
          if (v < 2 || v > 5) return InvalidArgument("pickle protocol {} at byte {}: rankscope reads protocols 2 to 5", v, op_at_);
          break;
        }
        case kFrame: {  // a length hint for buffered readers: the opcodes follow inline
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t n, Unsigned(8));
          RANKSCOPE_RETURN_IF_ERROR(Need(n));
          break;
        }
        case kStop: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t root, Pop());
          return root;
        }
        case kMark:
          RANKSCOPE_RETURN_IF_ERROR(Budget());
          marks_.push_back(stack_.size());
          break;
        case kPop:
          if (!marks_.empty() && marks_.back() == stack_.size()) {
            marks_.pop_back();  // POP of a MARK, as Python does
          } else {
            RANKSCOPE_RETURN_IF_ERROR(Pop().status());
          }
          break;
        case kPopMark:
          RANKSCOPE_RETURN_IF_ERROR(PopMark().status());
          break;
        case kDup: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t top, Top());
          RANKSCOPE_RETURN_IF_ERROR(Budget());
          stack_.push_back(top);
          break;
        }
        case kNone: RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kNone}))); break;
        case kNewTrue: RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kBool, .flag = true}))); break;
        case kNewFalse: RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kBool, .flag = false}))); break;
        case kBinInt: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t v, Unsigned(4));
          RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kInt, .i = static_cast<int32_t>(static_cast<uint32_t>(v))})));
          break;
        }
        case kBinInt1:
        case kBinInt2: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t v, Unsigned(op == kBinInt1 ? 1 : 2));
          RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kInt, .i = static_cast<int64_t>(v)})));
          break;
        }
        case kLong1:
        case kLong4: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t n, Unsigned(op == kLong1 ? 1 : 4));
          RANKSCOPE_RETURN_IF_ERROR(Push(Long(n)));
          break;
        }
        case kBinFloat: {
          RANKSCOPE_RETURN_IF_ERROR(Need(8));
          uint64_t bits = 0;
          for (size_t k = 0; k < 8; ++k) bits = (bits << 8) | static_cast<unsigned char>(in_[pos_ + k]);  // big-endian
          pos_ += 8;
          RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kFloat, .f = std::bit_cast<double>(bits)})));
          break;
        }
        case kShortBinUnicode:
        case kBinUnicode:
        case kBinUnicode8: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t n, Unsigned(op == kShortBinUnicode ? 1 : op == kBinUnicode ? 4 : 8));
          RANKSCOPE_RETURN_IF_ERROR(Push(String(Kind::kStr, n)));
          break;
        }
        case kShortBinBytes:
        case kBinBytes:
        case kBinBytes8:
        case kByteArray8: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t n, Unsigned(op == kShortBinBytes ? 1 : op == kBinBytes ? 4 : 8));
          RANKSCOPE_RETURN_IF_ERROR(Push(String(Kind::kBytes, n)));
          break;
        }
        case kEmptyList: RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kList}))); break;
        case kEmptyDict: RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kDict}))); break;
        case kEmptySet: RANKSCOPE_RETURN_IF_ERROR(Push(New({.kind = Kind::kSet}))); break;
        case kEmptyTuple: RANKSCOPE_RETURN_IF_ERROR(Push(Tuple({}))); break;
        case kTuple1:
        case kTuple2:
        case kTuple3: {
          std::vector<uint32_t> items(op - kTuple1 + 1);
          for (size_t k = items.size(); k-- > 0;) {
            RANKSCOPE_ASSIGN_OR_RETURN(items[k], Pop());
          }
          RANKSCOPE_RETURN_IF_ERROR(Budget(items.size()));
          RANKSCOPE_RETURN_IF_ERROR(Push(Tuple(std::move(items))));
          break;
        }
        case kTuple:
        case kFrozenSet: {
          RANKSCOPE_ASSIGN_OR_RETURN(std::vector<uint32_t> items, PopMark());
          RANKSCOPE_RETURN_IF_ERROR(Budget(items.size()));
          RANKSCOPE_RETURN_IF_ERROR(Push(Tuple(std::move(items))));
          break;
        }
        case kList:
        case kDict: {
          RANKSCOPE_ASSIGN_OR_RETURN(std::vector<uint32_t> items, PopMark());
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t c, New({.kind = op == kList ? Kind::kList : Kind::kDict}));
          RANKSCOPE_RETURN_IF_ERROR(Extend(c, items, nodes_[c].kind, op == kList ? "LIST" : "DICT"));
          stack_.push_back(c);
          break;
        }
        case kAppend: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t v, Pop());
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t list, Top());
          RANKSCOPE_RETURN_IF_ERROR(Extend(list, {v}, Kind::kList, "APPEND"));
          break;
        }
        case kSetItem: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t value, Pop());
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t key, Pop());
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t dict, Top());
          RANKSCOPE_RETURN_IF_ERROR(Extend(dict, {key, value}, Kind::kDict, "SETITEM"));
          break;
        }
        case kAppends:
        case kSetItems:
        case kAddItems: {
          RANKSCOPE_ASSIGN_OR_RETURN(std::vector<uint32_t> items, PopMark());
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t c, Top());
          const Kind want = op == kAppends ? Kind::kList : op == kSetItems ? Kind::kDict : Kind::kSet;
          RANKSCOPE_RETURN_IF_ERROR(Extend(c, items, want, op == kAppends ? "APPENDS" : op == kSetItems ? "SETITEMS" : "ADDITEMS"));
          break;
        }
        case kBinPut:
        case kLongBinPut: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t key, Unsigned(op == kBinPut ? 1 : 4));
          RANKSCOPE_RETURN_IF_ERROR(Put(key));
          break;
        }
        case kMemoize:
          RANKSCOPE_RETURN_IF_ERROR(Put(memo_.size()));
          break;
        case kBinGet:
        case kLongBinGet: {
          RANKSCOPE_ASSIGN_OR_RETURN(uint64_t key, Unsigned(op == kBinGet ? 1 : 4));
          RANKSCOPE_ASSIGN_OR_RETURN(uint32_t v, Memo(key));
          RANKSCOPE_RETURN_IF_ERROR(Budget());
          stack_.push_back(v);
          break;
        }
        default:
          return Refuse(op);
      }
    }
  }

  // ---- to JSON
  Status Emit() {
    if (++emitted_ > limits_.max_values) {
      return OutOfRange("a pickle that expands to more than {} values (a container referred to many times)",
                        limits_.max_values);
    }
    return OkStatus();
  }

  std::string_view Slice(const Node& n) const { return in_.substr(n.offset, n.length); }

  StatusOr<std::string> KeyText(uint32_t key, size_t depth) {
    const Node& n = nodes_[key];
    switch (n.kind) {
      case Kind::kStr: return ValidUtf8(Slice(n));
      case Kind::kNone: return std::string("None");
      case Kind::kBool: return std::string(n.flag ? "True" : "False");
      default: break;
    }
    RANKSCOPE_ASSIGN_OR_RETURN(Json j, ToJson(key, depth));
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }

  StatusOr<Json> ToJson(uint32_t index, size_t depth) {
    if (depth > limits_.max_depth) {
      return OutOfRange("a pickle nested deeper than {} levels (or a container that holds itself)", limits_.max_depth);
    }
    RANKSCOPE_RETURN_IF_ERROR(Emit());
    const Node& n = nodes_[index];
    switch (n.kind) {
      case Kind::kNone: return Json(nullptr);
      case Kind::kBool: return Json(n.flag);
      case Kind::kInt: return Json(n.i);
      case Kind::kUnsigned: return Json(n.u);
      case Kind::kFloat: return Json(n.f);
      case Kind::kStr: return Json(ValidUtf8(Slice(n)));
      case Kind::kBytes: {
        const std::string_view s = Slice(n);
        return Json::binary(Json::binary_t::container_type(s.begin(), s.end()));
      }
      case Kind::kList:
      case Kind::kTuple:
      case Kind::kSet: {
        Json out = Json::array();
        for (uint32_t item : items_[n.item_list]) {
          RANKSCOPE_ASSIGN_OR_RETURN(Json v, ToJson(item, depth + 1));
          out.push_back(std::move(v));
        }
        return out;
      }
      case Kind::kDict: {
        Json out = Json::object();
        const auto& items = items_[n.item_list];
        for (size_t k = 0; k + 1 < items.size(); k += 2) {
          RANKSCOPE_ASSIGN_OR_RETURN(std::string key, KeyText(items[k], depth + 1));
          RANKSCOPE_ASSIGN_OR_RETURN(Json v, ToJson(items[k + 1], depth + 1));
          out[key] = std::move(v);
        }
        return out;
      }
    }
    return Json(nullptr);
  }

  std::string_view in_;
  PickleLimits limits_;
  size_t pos_ = 0, op_at_ = 0;
  size_t work_ = 0, emitted_ = 0;
  std::vector<Node> nodes_;
  std::vector<std::vector<uint32_t>> items_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
};

}  // namespace

bool LooksLikePickle(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == kProto && data[1] >= 2 && data[1] <= 5;
}

StatusOr<Json> ReadPickle(std::string_view data, const PickleLimits& limits) {
  return Decoder(data, limits).Decode();
}

}  // namespace rankscope::hang
