// StringPool: interns strings to dense 32-bit ids (Perfetto-style).
//
// Trace names repeat millions of times (the same kernel, the same aten op); each event stores a
// 4-byte id instead of a string. Id 0 is always the empty string. Views returned by Get() stay
// valid for the life of the pool: characters live in fixed arena blocks that never move.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace rankscope {

using StringId = uint32_t;

class StringPool {
 public:
  static constexpr StringId kEmptyId = 0;

  StringPool();
  StringPool(StringPool&&) noexcept = default;
  StringPool& operator=(StringPool&&) noexcept = default;

  StringId Intern(std::string_view s);
  // The id of `s` if it was interned, else kNotFound.
  static constexpr StringId kNotFound = 0xFFFFFFFFu;
  StringId Find(std::string_view s) const;

  std::string_view Get(StringId id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  size_t MemoryBytes() const;

 private:
  std::string_view CopyIntoArena(std::string_view s);
  void Grow();
  size_t FindSlot(std::string_view s, uint64_t hash) const;

  std::vector<std::unique_ptr<char[]>> blocks_;      // small strings, packed
  std::vector<std::unique_ptr<char[]>> big_blocks_;  // one per large string
  size_t block_used_ = 0;
  size_t block_capacity_ = 0;
  size_t arena_bytes_ = 0;
  std::vector<std::string_view> strings_;
  // Open addressing, linear probing. Each slot: high 32 bits = hash bits, low 32 = id + 1
  // (0 = empty), so most mismatches are rejected without touching the string.
  std::vector<uint64_t> slots_;
};

}  // namespace rankscope
