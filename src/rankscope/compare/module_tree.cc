#include "rankscope/compare/module_tree.h"

#include <algorithm>

namespace rankscope::compare {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";

bool EndsWith(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

}  // namespace

ModuleTreeBuilder::ModuleTreeBuilder(const TraceModel& model, CompareSummary* out)
    : m_(model), out_(out), frame_kind_(model.strings.size(), 0) {
  ModuleNode root;
  root.name = out->names.Intern("[modules]");
  out->modules.push_back(root);
}

uint32_t ModuleTreeBuilder::NodeFor(uint32_t parent, uint32_t name) {
  const uint64_t key = (static_cast<uint64_t>(parent) << 32) | name;
  if (auto it = children_.find(key); it != children_.end()) return it->second;
  const auto id = static_cast<uint32_t>(out_->modules.size());
  ModuleNode node;
  node.name = name;
  node.parent = parent;
  node.depth = static_cast<uint16_t>(out_->modules[parent].depth + 1);
  out_->modules.push_back(node);
  out_->modules[parent].children.push_back(id);
  children_.emplace(key, id);
  return id;
}

void ModuleTreeBuilder::AddStep(int64_t start, int64_t end, const std::vector<uint32_t>& order) {
  const SliceTable& s = m_.slices;
  auto first = std::lower_bound(order.begin(), order.end(), start, [&](uint32_t i, int64_t t) { return s.ts[i] < t; });
  std::unordered_map<uint32_t, std::vector<uint32_t>> per_track;
  for (auto it = first; it != order.end() && s.ts[*it] < end; ++it) {
    if (s.kind[*it] == ActivityKind::kPythonFrame) per_track[s.track[*it]].push_back(*it);
  }
  if (!per_track.empty()) out_->has_stacks = true;
  std::vector<uint32_t> tracks;
  for (const auto& [track, frames] : per_track) tracks.push_back(track);
  std::sort(tracks.begin(), tracks.end());
  for (uint32_t track : tracks) {
    std::vector<uint32_t>& frames = per_track[track];
    // In start order already (`order`); at equal starts the enclosing (longer) frame first.
    for (size_t a = 0; a < frames.size();) {
      size_t b = a + 1;
      while (b < frames.size() && s.ts[frames[b]] == s.ts[frames[a]]) ++b;
      if (b - a > 1) {
        std::stable_sort(frames.begin() + static_cast<std::ptrdiff_t>(a), frames.begin() + static_cast<std::ptrdiff_t>(b),
                         [&](uint32_t x, uint32_t y) { return s.dur[x] > s.dur[y]; });
      }
      a = b;
    }
    AddTrack(track, frames);
  }
}

void ModuleTreeBuilder::AddTrack(uint32_t track, std::vector<uint32_t>& frames) {
  struct Frame {
    int64_t end;
    uint32_t instance;  // module instance, or kNoIndex for other Python frames
    int64_t child_modules_ns = 0;
  };
  const SliceTable& s = m_.slices;
  std::vector<Frame> stack;
  std::vector<uint32_t>& index = by_track_[track];
  uint32_t innermost = kNoIndex;  // innermost module instance on the stack
  auto pop = [&]() {
    const Frame f = stack.back();
    stack.pop_back();
    if (f.instance == kNoIndex) return;
    const Instance& inst = instances_[f.instance];
    ModuleNode& node = out_->modules[inst.module];
    node.host_self_ns += (inst.end - inst.start) - std::min(f.child_modules_ns, inst.end - inst.start);
    innermost = inst.parent;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->instance != kNoIndex) {
        it->child_modules_ns += inst.end - inst.start;
        break;
      }
    }
  };
  for (const uint32_t i : frames) {
    const int64_t ts = s.ts[i], te = ts + s.dur[i];
    while (!stack.empty() && stack.back().end <= ts) pop();
    uint32_t& kind = frame_kind_[s.name[i]];
    if (kind == 0) {  // once per distinct frame name
      const std::string_view name = m_.Str(s.name[i]);
      kind = name.substr(0, kModulePrefix.size()) == kModulePrefix
                 ? 3 + out_->names.Intern(name.substr(kModulePrefix.size()))
                 : EndsWith(name, ": forward") ? 2 : 1;
    }
    if (kind < 3) {
      // The module's own forward(): the first "...(line): forward" frame inside it.
      if (kind == 2 && innermost != kNoIndex) {
        ModuleNode& node = out_->modules[instances_[innermost].module];
        if (node.source == 0) node.source = out_->names.Intern(m_.Str(s.name[i]));
      }
      stack.push_back({te, kNoIndex});
      continue;
    }
    const uint32_t parent_module = innermost == kNoIndex ? 0 : instances_[innermost].module;
    const uint32_t module = NodeFor(parent_module, kind - 3);
    ModuleNode& node = out_->modules[module];
    ++node.count;
    node.host_ns += te - ts;
    const auto inst = static_cast<uint32_t>(instances_.size());
    instances_.push_back({ts, te, module, innermost});
    index.push_back(inst);
    innermost = inst;
    stack.push_back({te, inst});
  }
  while (!stack.empty()) pop();
}

uint32_t ModuleTreeBuilder::ModuleAt(uint32_t track, int64_t t) const {
  auto found = by_track_.find(track);
  if (found == by_track_.end()) return kNoIndex;
  const std::vector<uint32_t>& list = found->second;
  auto it = std::upper_bound(list.begin(), list.end(), t, [&](int64_t x, uint32_t i) { return x < instances_[i].start; });
  if (it == list.begin()) return kNoIndex;
  uint32_t i = *(it - 1);
  while (i != kNoIndex && instances_[i].end <= t) i = instances_[i].parent;
  return i == kNoIndex ? kNoIndex : instances_[i].module;
}

}  // namespace rankscope::compare
