#include "rankscope/cluster/wrapped_paths.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

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
  for (size_t start = 0;;) {
    const size_t bar = path.find('|', start);
    out.push_back(path.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    if (bar == std::string_view::npos) return out;
    start = bar + 1;
  }
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
      it->value_ns += s.value_ns;
      it->calls += s.calls;
      it->per_call_ns = std::max(it->per_call_ns, s.per_call_ns);
    }
  }
  std::sort(to->samples.begin(), to->samples.end(),
            [](const FunctionValue& a, const FunctionValue& b) { return a.rank < b.rank; });
  to->wait = to->wait || from.wait;
}

}  // namespace

size_t AlignWrappedPaths(std::vector<FunctionSamples>* functions) {
  std::vector<Partial> partial = PartialPaths(*functions);
  if (partial.size() < 2) return 0;
  // Candidates share the first and the last frame.
  std::map<std::pair<std::string_view, std::string_view>, std::vector<size_t>> by_ends;
  for (size_t i = 0; i < partial.size(); ++i) by_ends[{partial[i].frames.front(), partial[i].frames.back()}].push_back(i);
  // Longest paths first: a wrapped path is longer than its counterpart.
  std::vector<size_t> order(partial.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return partial[a].frames.size() > partial[b].frames.size(); });
  std::vector<bool> removed(functions->size(), false), target(functions->size(), false);
  std::vector<size_t> aligned;  // partial indices merged away
  for (size_t p : order) {
    const Partial& from = partial[p];
    if (target[from.index]) continue;
    const Partial* best = nullptr;
    for (size_t q : by_ends[{from.frames.front(), from.frames.back()}]) {
      const Partial& to = partial[q];
      if (removed[to.index] || !WrapsOneBlock(from.frames, to.frames) || !Complementary(from, to)) continue;
      if (!best || to.frames.size() > best->frames.size()) best = &to;  // the closest chain
    }
    if (!best) continue;
    MergeInto((*functions)[from.index], from.has, &(*functions)[best->index]);
    removed[from.index] = true;
    target[best->index] = true;
    aligned.push_back(p);
  }
  // The wrappers' own paths: ran only by the ranks of an aligned path that they hold.
  for (const Partial& w : partial) {
    if (removed[w.index] || target[w.index]) continue;
    for (size_t p : aligned) {
      const Partial& from = partial[p];
      if (Includes(from.has, w.has) && CallPathHolds((*functions)[w.index].name, (*functions)[from.index].name)) {
        removed[w.index] = true;
        break;
      }
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < functions->size(); ++i) {
    if (removed[i]) continue;
    if (kept != i) (*functions)[kept] = std::move((*functions)[i]);
    ++kept;
  }
  functions->resize(kept);
  return aligned.size();
}

}  // namespace rankscope
