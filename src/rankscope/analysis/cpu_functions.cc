#include "rankscope/analysis/cpu_functions.h"

#include <algorithm>
#include <unordered_map>

#include "rankscope/analysis/function_table.h"
#include "rankscope/analysis/gpu_functions.h"
#include "rankscope/analysis/wait_functions.h"

namespace rankscope {
namespace {

// A table of slices of the categories `pick` accepts, keyed by name.
template <typename Pick, typename Skip>
FunctionTable ByName(const TraceModel& m, const std::vector<uint32_t>& order, const Window& w, const IntervalSet& busy,
                     size_t max_rows, FunctionTableKind kind, Pick pick, Skip skip_name) {
  const SliceTable& s = m.slices;
  constexpr uint32_t kNew = 0xFFFFFFFFu;
  std::vector<uint32_t> row_of_name(m.strings.size(), kNew);  // StringIds are dense
  std::vector<FunctionStat> rows;
  FunctionAccumulator acc(w, busy);  // `order` is by start: instances come in start order
  for (const uint32_t i : order) {
    if (!pick(s.kind[i])) continue;
    const int64_t start = s.ts[i], end = s.ts[i] + s.dur[i];
    if (!w.Touches(start, end)) continue;
    uint32_t& row = row_of_name[s.name[i]];
    if (row == kNew && skip_name(s.name[i])) continue;
    if (row == kNew) {
      row = static_cast<uint32_t>(rows.size());
      rows.push_back(FunctionStat{.name = std::string(m.Str(s.name[i]))});
    }
    acc.Add(row, start, end);
  }
  acc.Finish(rows);
  FunctionTable table = FinishTable(std::move(rows), max_rows, w.length());
  for (FunctionStat& r : table.rows) r.wait = IsWaitFunction(kind, r.name);
  return table;
}

}  // namespace

std::vector<uint32_t> CollectorThreadTracks(const TraceModel& m) {
  std::vector<uint32_t> tracks;
  std::vector<bool> checked(m.strings.size(), false);
  const SliceTable& s = m.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != ActivityKind::kPythonFrame || checked[s.name[i]]) continue;
    checked[s.name[i]] = true;
    if (!IsCollectorThreadFrame(m.Str(s.name[i]))) continue;
    for (size_t j = 0; j < s.size(); ++j) {  // rare: one name, usually one instance
      if (s.kind[j] == ActivityKind::kPythonFrame && s.name[j] == s.name[i]) tracks.push_back(s.track[j]);
    }
  }
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
  return tracks;
}

namespace {

// Call-path ids: a trie of (parent path, frame name) built while walking each frame's parents.
class PathTrie {
 public:
  uint32_t Child(uint32_t parent, StringId name) {
    const uint64_t key = (static_cast<uint64_t>(parent) << 32) | name;
    auto [it, inserted] = ids_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
    if (inserted) nodes_.push_back({parent, name});
    return it->second;
  }
  std::string Text(const TraceModel& m, uint32_t node) const {
    std::vector<StringId> names;
    for (uint32_t n = node; n != kRoot; n = nodes_[n].parent) names.push_back(nodes_[n].name);
    std::string out;
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      if (!out.empty()) out += '|';
      out += m.Str(*it);
    }
    return out;
  }
  static constexpr uint32_t kRoot = 0xFFFFFFFFu;

 private:
  struct Node {
    uint32_t parent;
    StringId name;
  };
  std::unordered_map<uint64_t, uint32_t> ids_;
  std::vector<Node> nodes_;
};

// Path node of every python_function slice (index = row in model.python).
std::vector<uint32_t> PathNodes(const TraceModel& m, PathTrie& trie) {
  const SliceTable& s = m.slices;
  std::vector<std::pair<int64_t, uint32_t>> by_id;  // Python id -> slice
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == ActivityKind::kPythonFrame && s.detail[i] != kNoDetail && m.python[s.detail[i]].python_id != kNoId) {
      by_id.emplace_back(m.python[s.detail[i]].python_id, static_cast<uint32_t>(i));
    }
  }
  std::sort(by_id.begin(), by_id.end());
  auto slice_of = [&](int64_t id) -> int64_t {
    auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
    return it != by_id.end() && it->first == id ? static_cast<int64_t>(it->second) : int64_t{-1};
  };
  constexpr uint32_t kUnset = 0xFFFFFFFEu;
  std::vector<uint32_t> node(m.python.size(), kUnset);
  std::vector<uint32_t> chain;  // frames whose node is not known yet, leaf first
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != ActivityKind::kPythonFrame || s.detail[i] == kNoDetail) continue;
    chain.clear();
    int64_t cur = static_cast<int64_t>(i);
    // Walk up until a frame with a known node or a root; a cycle in corrupt ids stops at depth.
    while (cur >= 0 && node[s.detail[cur]] == kUnset && chain.size() < 4096) {
      chain.push_back(static_cast<uint32_t>(cur));
      node[s.detail[cur]] = kUnset - 1;  // in progress: guards against parent cycles
      cur = slice_of(m.python[s.detail[cur]].parent_id);
    }
    uint32_t parent = cur >= 0 && node[s.detail[cur]] < kUnset - 1 ? node[s.detail[cur]] : PathTrie::kRoot;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      parent = trie.Child(parent, s.name[*it]);
      node[s.detail[*it]] = parent;
    }
  }
  return node;
}

}  // namespace

std::string ThreadLabel(const TraceModel& m, uint32_t track) {
  const Track& t = m.tracks[track];
  std::string label = m.JsonIdText(t.tid);
  const std::string_view name = m.Str(t.thread_name);
  // Kineto names threads "thread 8979 (python3)": show the part in parentheses.
  const size_t open = name.rfind('(');
  if (open != std::string_view::npos && name.back() == ')') {
    label += " " + std::string(name.substr(open));
  } else if (!name.empty()) {
    label += " (" + std::string(name) + ")";
  }
  return label;
}

FunctionTable BuildRuntimeCallTable(const TraceModel& m, const std::vector<uint32_t>& order, const Window& w,
                                    const IntervalSet& busy, size_t max_rows) {
  return ByName(m, order, w, busy, max_rows, FunctionTableKind::kRuntimeCall,
                [](ActivityKind c) { return c == ActivityKind::kRuntimeCall || c == ActivityKind::kDriverCall; },
                [](StringId) { return false; });
}

FunctionTable BuildCpuOpTable(const TraceModel& m, const std::vector<uint32_t>& order, const Window& w,
                              const IntervalSet& busy, size_t max_rows) {
  // 2021 traces file ProfilerStep#N under "Operator": it is the step, not an op.
  return ByName(m, order, w, busy, max_rows, FunctionTableKind::kCpuOp,
                [](ActivityKind c) { return c == ActivityKind::kHostOp; },
                [&](StringId name) { return m.Str(name).starts_with("ProfilerStep#"); });
}

FunctionTable BuildPythonPathTable(const TraceModel& m, const std::vector<uint32_t>& order, const Window& w,
                                   const IntervalSet& busy, size_t max_rows, uint32_t* collector_threads) {
  if (m.python.empty()) return {};
  const std::vector<uint32_t> collector = CollectorThreadTracks(m);
  if (collector_threads) *collector_threads = static_cast<uint32_t>(collector.size());
  PathTrie trie;
  const std::vector<uint32_t> node = PathNodes(m, trie);
  const SliceTable& s = m.slices;
  std::unordered_map<uint64_t, uint32_t> ids;  // (path node, track) -> row
  std::vector<std::pair<uint32_t, uint32_t>> keys;  // row -> (node, track)
  FunctionAccumulator acc(w, busy);  // `order` is by start: instances come in start order
  for (const uint32_t i : order) {
    if (s.kind[i] != ActivityKind::kPythonFrame || s.detail[i] == kNoDetail) continue;
    const int64_t start = s.ts[i], end = s.ts[i] + s.dur[i];
    if (!w.Touches(start, end) || node[s.detail[i]] >= PathTrie::kRoot - 1) continue;
    if (std::binary_search(collector.begin(), collector.end(), s.track[i])) continue;
    const uint64_t key = (static_cast<uint64_t>(node[s.detail[i]]) << 32) | s.track[i];
    auto [it, inserted] = ids.try_emplace(key, static_cast<uint32_t>(keys.size()));
    if (inserted) keys.emplace_back(node[s.detail[i]], s.track[i]);
    acc.Add(it->second, start, end);
  }
  std::vector<FunctionStat> rows(keys.size());
  acc.Finish(rows);
  // Names are long: build them only for the rows that survive the cap.
  for (size_t k = 0; k < rows.size(); ++k) rows[k].detail = std::to_string(k);
  FunctionTable table = FinishTable(std::move(rows), max_rows, w.length());
  for (FunctionStat& r : table.rows) {
    const auto [path, track] = keys[std::stoul(r.detail)];
    r.name = trie.Text(m, path);
    r.detail = ThreadLabel(m, track);
    const size_t bar = r.name.rfind('|');
    r.wait = IsWaitFunction(FunctionTableKind::kPythonFrame,
                            bar == std::string::npos ? std::string_view(r.name) : std::string_view(r.name).substr(bar + 1));
  }
  return table;
}

}  // namespace rankscope
