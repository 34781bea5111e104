#include "rankscope/compare/op_alignment.h"

#include <unordered_map>

#include "rankscope/compare/lcs.h"

namespace rankscope::compare {
namespace {

// Symbols for one side: ids in NEW's name table (BASE names are translated, unknown ones get
// fresh ids that match nothing in NEW).
class Symbols {
 public:
  Symbols(const NameTable& base, const NameTable& neu, const AlignOptions* options) : neu_(neu) {
    if (options) {
      for (const auto& [from, to] : options->op_map) map_.emplace(from, to);
    }
    translated_.assign(base.size(), kUnset);
    base_ = &base;
  }
  uint64_t Base(uint32_t id) {
    if (translated_[id] == kUnset) {
      std::string_view name = base_->Get(id);
      if (auto it = map_.find(std::string(name)); it != map_.end()) name = it->second;
      const uint32_t found = neu_.Find(name);
      translated_[id] = found == NameTable::kNotFound ? next_unknown_++ : found;
    }
    return translated_[id];
  }

 private:
  static constexpr uint64_t kUnset = ~0ull;
  const NameTable* base_ = nullptr;
  const NameTable& neu_;
  std::unordered_map<std::string, std::string> map_;
  std::vector<uint64_t> translated_;
  uint64_t next_unknown_ = 1ull << 40;
};

}  // namespace

std::string_view ModuleClass(std::string_view name) {
  const size_t us = name.rfind('_');
  if (us == std::string_view::npos || us + 1 >= name.size()) return name;
  for (size_t i = us + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, us);
}

StatusOr<std::pair<std::string, std::string>> ParseOpMapping(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument("--op-map {}: expected OLD=NEW (an operator name of BASE = its name in NEW)", text);
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

TreeAlignment AlignOperators(const CompareSummary& base, const CompareSummary& neu, const AlignOptions& options) {
  TreeAlignment t;
  t.base_to_new.assign(base.ops.size(), kNoIndex);
  t.new_to_base.assign(neu.ops.size(), kNoIndex);
  if (base.ops.empty() || neu.ops.empty()) return t;
  Symbols names(base.names, neu.names, &options);
  Symbols shapes(base.names, neu.names, nullptr);
  auto with_shapes = [](uint64_t name, uint64_t shapes) { return name * 0x9E3779B97F4A7C15ull ^ (shapes + 1); };
  std::vector<std::pair<uint32_t, uint32_t>> work = {{0, 0}};
  t.base_to_new[0] = 0;
  t.new_to_base[0] = 0;
  std::vector<uint64_t> a_full, b_full, a_name, b_name, a_gap, b_gap;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  while (!work.empty()) {
    const auto [bn, nn] = work.back();
    work.pop_back();
    const std::vector<uint32_t>& bc = base.ops[bn].children;
    const std::vector<uint32_t>& nc = neu.ops[nn].children;
    if (bc.empty() || nc.empty()) continue;
    a_full.clear(), b_full.clear(), a_name.clear(), b_name.clear();
    for (uint32_t c : bc) {
      a_name.push_back(names.Base(base.ops[c].name));
      a_full.push_back(with_shapes(a_name.back(), shapes.Base(base.ops[c].shapes)));
    }
    for (uint32_t c : nc) {
      b_name.push_back(neu.ops[c].name);
      b_full.push_back(with_shapes(b_name.back(), neu.ops[c].shapes));
    }
    // Pass 1: name and shapes (a permuted sequence of one op with different shapes, e.g. DDP's
    // per-parameter ops in another order, pairs each with its own). Pass 2, unless shapes are
    // required: names only, within the gaps pass 1 left (operators whose shapes changed).
    LcsResult lcs = LongestCommonSubsequence(a_full, b_full);
    t.exact = t.exact && lcs.exact;
    pairs = lcs.pairs;
    if (!options.use_input_shapes) {
      std::vector<std::pair<uint32_t, uint32_t>> filled;
      size_t i = 0, j = 0;
      auto gap = [&](size_t i_end, size_t j_end) {
        if (i_end <= i || j_end <= j) return;
        a_gap.assign(a_name.begin() + static_cast<std::ptrdiff_t>(i), a_name.begin() + static_cast<std::ptrdiff_t>(i_end));
        b_gap.assign(b_name.begin() + static_cast<std::ptrdiff_t>(j), b_name.begin() + static_cast<std::ptrdiff_t>(j_end));
        const LcsResult inner = LongestCommonSubsequence(a_gap, b_gap);
        t.exact = t.exact && inner.exact;
        for (const auto& [x, y] : inner.pairs) filled.emplace_back(static_cast<uint32_t>(i + x), static_cast<uint32_t>(j + y));
      };
      for (const auto& [x, y] : pairs) {
        gap(x, y);
        filled.emplace_back(x, y);
        i = x + 1;
        j = y + 1;
      }
      gap(a_name.size(), b_name.size());
      pairs = std::move(filled);
    }
    for (const auto& [i, j] : pairs) {
      t.base_to_new[bc[i]] = nc[j];
      t.new_to_base[nc[j]] = bc[i];
      work.emplace_back(bc[i], nc[j]);
    }
  }
  return t;
}

TreeAlignment AlignModules(const CompareSummary& base, const CompareSummary& neu) {
  TreeAlignment t;
  t.base_to_new.assign(base.modules.size(), kNoIndex);
  t.new_to_base.assign(neu.modules.size(), kNoIndex);
  if (base.modules.empty() || neu.modules.empty()) return t;
  std::unordered_map<std::string, uint64_t> classes;
  auto symbol = [&](const CompareSummary& s, uint32_t m) {
    const std::string cls(ModuleClass(s.names.Get(s.modules[m].name)));
    return classes.try_emplace(cls, classes.size()).first->second;
  };
  std::vector<std::pair<uint32_t, uint32_t>> work = {{0, 0}};
  t.base_to_new[0] = 0;
  t.new_to_base[0] = 0;
  std::vector<uint64_t> a, b;
  while (!work.empty()) {
    const auto [bm, nm] = work.back();
    work.pop_back();
    const std::vector<uint32_t>& bc = base.modules[bm].children;
    const std::vector<uint32_t>& nc = neu.modules[nm].children;
    a.clear();
    b.clear();
    for (uint32_t c : bc) a.push_back(symbol(base, c));
    for (uint32_t c : nc) b.push_back(symbol(neu, c));
    const LcsResult lcs = LongestCommonSubsequence(a, b);
    t.exact = t.exact && lcs.exact;
    for (const auto& [i, j] : lcs.pairs) {
      t.base_to_new[bc[i]] = nc[j];
      t.new_to_base[nc[j]] = bc[i];
      work.emplace_back(bc[i], nc[j]);
    }
  }
  return t;
}

}  // namespace rankscope::compare
