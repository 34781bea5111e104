#include "rankscope/base/string_pool.h"

#include <cstring>

#include "rankscope/base/hash.h"

namespace rankscope {
namespace {
constexpr size_t kBlockSize = 64 * 1024;
constexpr size_t kInitialSlots = 1024;
}  // namespace

StringPool::StringPool() : slots_(kInitialSlots, 0) {
  strings_.emplace_back();  // id 0 = ""
}

size_t StringPool::FindSlot(std::string_view s, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  const uint64_t tag = hash >> 32;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return i;
    if ((slot >> 32) == tag && strings_[(slot & 0xFFFFFFFFu) - 1] == s) return i;
  }
}

StringId StringPool::Find(std::string_view s) const {
  if (s.empty()) return kEmptyId;
  const uint64_t slot = slots_[FindSlot(s, HashBytes(s))];
  return slot == 0 ? kNotFound : static_cast<StringId>((slot & 0xFFFFFFFFu) - 1);
}

StringId StringPool::Intern(std::string_view s) {
  if (s.empty()) return kEmptyId;
  const uint64_t hash = HashBytes(s);
  size_t i = FindSlot(s, hash);
  if (slots_[i] != 0) return static_cast<StringId>((slots_[i] & 0xFFFFFFFFu) - 1);
  const auto id = static_cast<StringId>(strings_.size());
  strings_.push_back(CopyIntoArena(s));
  slots_[i] = (hash & 0xFFFFFFFF00000000ull) | (uint64_t{id} + 1);
  if (strings_.size() * 2 > slots_.size()) Grow();
  return id;
}

void StringPool::Grow() {
  std::vector<uint64_t> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, 0);
  const size_t mask = slots_.size() - 1;
  for (uint64_t slot : old) {
    if (slot == 0) continue;
    // Recompute the full hash: the slot only kept its top 32 bits.
    const uint64_t hash = HashBytes(strings_[(slot & 0xFFFFFFFFu) - 1]);
    size_t i = hash & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

std::string_view StringPool::CopyIntoArena(std::string_view s) {
  if (s.size() > kBlockSize / 4) {  // big strings get a block of their own
    big_blocks_.emplace_back(new char[s.size()]);
    std::memcpy(big_blocks_.back().get(), s.data(), s.size());
    arena_bytes_ += s.size();
    return {big_blocks_.back().get(), s.size()};
  }
  if (blocks_.empty() || block_used_ + s.size() > block_capacity_) {
    blocks_.emplace_back(new char[kBlockSize]);
    block_used_ = 0;
    block_capacity_ = kBlockSize;
    arena_bytes_ += kBlockSize;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return {dst, s.size()};
}

size_t StringPool::MemoryBytes() const {
  return arena_bytes_ + strings_.capacity() * sizeof(std::string_view) +
         slots_.capacity() * sizeof(uint64_t);
}

}  // namespace rankscope
