// NameTable: the strings a compare summary keeps once its trace model is gone (operator names,
// shapes, module names, kernel names), interned to dense ids. Id 0 is the empty string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rankscope::compare {

class NameTable {
 public:
  NameTable() { Intern(""); }
  uint32_t Intern(std::string_view s) {
    auto it = index_.find(std::string(s));
    if (it != index_.end()) return it->second;
    const auto id = static_cast<uint32_t>(names_.size());
    names_.emplace_back(s);
    index_.emplace(names_.back(), id);
    return id;
  }
  // kNotFound when `s` was never interned.
  static constexpr uint32_t kNotFound = 0xFFFFFFFFu;
  uint32_t Find(std::string_view s) const {
    auto it = index_.find(std::string(s));
    return it == index_.end() ? kNotFound : it->second;
  }
  const std::string& Get(uint32_t id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace rankscope::compare
