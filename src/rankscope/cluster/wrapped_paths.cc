#include "rankscope/cluster/wrapped_paths.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "rankscope/cluster/path_key.h"

namespace rankscope {
namespace {

// The frame of a module's forward in a Python call path ("nn.Module: Linear_1").
constexpr std::string_view kModuleFrame = "nn.Module: ";
constexpr std::string_view kBuiltinFrame = "<built-in";

// A Python path that some of its ranks ran and others did not (a known 0).
struct Partial {
  size_t index = 0;                      // into the functions
  std::vector<std::string_view> frames;  // the path split at '|'
  std::vector<uint32_t> has, lacks;      // rank indices, ascending
};

std::vector<std::string_view> Frames(std::string_view path) {
  std::vector<std::string_view> out;
  ForEachFrame(path, [&](std::string_view frame, bool) { out.push_back(frame); });
  return out;
}

bool Includes(const std::vector<uint32_t>& set, const std::vector<uint32_t>& subset) {
  return std::includes(set.begin(), set.end(), subset.begin(), subset.end());
}

// Whether `outer` is `inner` with one wrapper's frames inserted: a block of frames, none of them
// a module's call (a wrapper is a function: "nn.Module: X" frames there mean other code), between
// a shared prefix and a shared suffix of at least one frame each, which starts with a module or
// a Python function (what the wrapper calls).
bool WrapsOneBlock(const std::vector<std::string_view>& outer, const std::vector<std::string_view>& inner) {
  if (inner.size() < 2 || inner.size() >= outer.size()) return false;
  size_t prefix = 0;
  while (prefix + 1 < inner.size() && outer[prefix] == inner[prefix]) ++prefix;
  if (prefix == 0) return false;
  const size_t suffix = inner.size() - prefix;  // the rest of inner must end outer
  // What a wrapper calls is a module or a Python function: a builtin (len, getattr) is called
  // from everywhere, and matching it alone would align unrelated code.
  if (inner[prefix].starts_with(kBuiltinFrame)) return false;
  for (size_t k = 1; k <= suffix; ++k) {
    if (outer[outer.size() - k] != inner[inner.size() - k]) return false;
  }
  for (size_t i = prefix; i < outer.size() - suffix; ++i) {
    if (outer[i].starts_with(kModuleFrame)) return false;
  }
  return true;
}

// Each other's complement: the ranks that ran one path are known not to have run the other.
bool Complementary(const Partial& a, const Partial& b) { return Includes(b.lacks, a.has) && Includes(a.lacks, b.has); }

std::vector<Partial> PartialPaths(const std::vector<FunctionSamples>& functions) {
  std::vector<Partial> out;
  for (size_t i = 0; i < functions.size(); ++i) {
    const FunctionSamples& f = functions[i];
    if (f.kind != FunctionKind::kPythonPath) continue;
    Partial p;
    p.index = i;
    for (const FunctionValue& s : f.samples) (s.value_ns > 0 ? p.has : p.lacks).push_back(s.rank);
    if (p.has.empty() || p.lacks.empty()) continue;
    std::sort(p.has.begin(), p.has.end());
    std::sort(p.lacks.begin(), p.lacks.end());
    p.frames = Frames(f.name);
    out.push_back(std::move(p));
  }
  return out;
}

// `from`'s samples of the ranks that ran it become `to`'s.
void MergeInto(const FunctionSamples& from, const std::vector<uint32_t>& ranks, FunctionSamples* to) {
  for (const FunctionValue& s : from.samples) {
    if (!std::binary_search(ranks.begin(), ranks.end(), s.rank)) continue;
    auto it = std::find_if(to->samples.begin(), to->samples.end(), [&](const FunctionValue& t) { return t.rank == s.rank; });
    if (it == to->samples.end()) {
      to->samples.push_back(s);
    } else {
      it->Add(s);
    }
  }
  std::sort(to->samples.begin(), to->samples.end(),
            [](const FunctionValue& a, const FunctionValue& b) { return a.rank < b.rank; });
  to->wait = to->wait || from.wait;
}

// One alignment after another (wrapped_paths.h); `partial` views the functions' names.
class Aligner {
 public:
  explicit Aligner(std::vector<FunctionSamples>* functions)
      : functions_(*functions), partial_(PartialPaths(*functions)), removed_(functions->size(), false),
        target_(functions->size(), false) {}

  size_t Run() {
    if (partial_.size() < 2) return 0;
    AlignPairs();
    if (pairs_.empty()) return 0;
    DropWrappers();
    MoveUnderAligned();
    Compact();
    return pairs_.size();
  }

 private:
  const std::string& Name(const Partial& p) const { return functions_[p.index].name; }

  // Longest paths first (a wrapped path is longer than its counterpart), each merged into the
  // closest path it wraps.
  void AlignPairs() {
    std::map<std::pair<std::string_view, std::string_view>, std::vector<size_t>> by_ends;  // first, last frame
    for (size_t i = 0; i < partial_.size(); ++i) by_ends[{partial_[i].frames.front(), partial_[i].frames.back()}].push_back(i);
    std::vector<size_t> order(partial_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return partial_[a].frames.size() > partial_[b].frames.size(); });
    for (size_t p : order) {
      const Partial& from = partial_[p];
      if (target_[from.index]) continue;
      std::optional<size_t> best;
      for (size_t q : by_ends[{from.frames.front(), from.frames.back()}]) {
        const Partial& to = partial_[q];
        if (removed_[to.index] || !WrapsOneBlock(from.frames, to.frames) || !Complementary(from, to)) continue;
        if (!best || to.frames.size() > partial_[*best].frames.size()) best = q;
      }
      if (!best) continue;
      MergeInto(functions_[from.index], from.has, &functions_[partial_[*best].index]);
      removed_[from.index] = true;
      target_[partial_[*best].index] = true;
      pairs_.emplace_back(p, *best);
    }
  }

  // The wrappers' own paths: run only by the ranks of an aligned path that they hold.
  void DropWrappers() {
    for (const Partial& w : partial_) {
      if (removed_[w.index] || target_[w.index]) continue;
      for (const auto& [p, q] : pairs_) {
        if (Includes(partial_[p].has, w.has) && CallPathHolds(Name(w), Name(partial_[p]))) {
          removed_[w.index] = true;
          break;
        }
      }
    }
  }

  // Calls inside an aligned path that its peers do not make (extra work inside the wrapped call)
  // move under the peers' path with it, where the deepest path is found as usual.
  void MoveUnderAligned() {
    std::map<std::string, size_t> by_name;
    for (size_t i = 0; i < functions_.size(); ++i) {
      if (functions_[i].kind == FunctionKind::kPythonPath && !removed_[i]) by_name.emplace(functions_[i].name, i);
    }
    for (const Partial& w : partial_) {
      if (removed_[w.index] || target_[w.index]) continue;
      const std::pair<size_t, size_t>* under = nullptr;
      for (const auto& pair : pairs_) {
        const Partial& from = partial_[pair.first];
        if (!Includes(from.has, w.has) || !CallPathHolds(Name(from), Name(w))) continue;
        if (!under || Name(from).size() > Name(partial_[under->first]).size()) under = &pair;
      }
      if (!under) continue;
      FunctionSamples& moved = functions_[w.index];
      std::string name = Name(partial_[under->second]) + moved.name.substr(Name(partial_[under->first]).size());
      if (auto it = by_name.find(name); it != by_name.end()) {
        MergeInto(moved, w.has, &functions_[it->second]);
        removed_[w.index] = true;
      } else {
        moved.name = std::move(name);
        by_name.emplace(moved.name, w.index);
        renamed_ = true;
      }
    }
  }

  // Removes the merged entries, and keeps the key order (kind, name, detail) after a rename.
  void Compact() {
    size_t kept = 0;
    for (size_t i = 0; i < functions_.size(); ++i) {
      if (removed_[i]) continue;
      if (kept != i) functions_[kept] = std::move(functions_[i]);
      ++kept;
    }
    functions_.resize(kept);
    if (!renamed_) return;
    std::stable_sort(functions_.begin(), functions_.end(), [](const FunctionSamples& a, const FunctionSamples& b) {
      return std::tie(a.kind, a.name, a.detail) < std::tie(b.kind, b.name, b.detail);
    });
  }

  std::vector<FunctionSamples>& functions_;
  std::vector<Partial> partial_;
  std::vector<bool> removed_, target_;                 // by function index
  std::vector<std::pair<size_t, size_t>> pairs_;       // (wrapped, counterpart): partial indices
  bool renamed_ = false;
};

}  // namespace

size_t AlignWrappedPaths(std::vector<FunctionSamples>* functions) { return Aligner(functions).Run(); }

}  // namespace rankscope
