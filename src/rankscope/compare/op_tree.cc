#include "rankscope/compare/op_tree.h"

#include <algorithm>

namespace rankscope::compare {
namespace {

bool IsStepAnnotation(std::string_view name) { return name.substr(0, 13) == "ProfilerStep#"; }

// "thread 13509 (pt_gloo_runloop)" -> "pt_gloo_runloop"; other names as they are.
std::string_view ShortThreadName(std::string_view name) {
  const size_t open = name.find('(');
  if (name.substr(0, 7) == "thread " && open != std::string_view::npos && name.back() == ')') {
    return name.substr(open + 1, name.size() - open - 2);
  }
  return name;
}

StepPhase PhaseAt(const std::vector<PhasePiece>& pieces, int64_t t) {
  auto it = std::upper_bound(pieces.begin(), pieces.end(), t, [](int64_t x, const PhasePiece& p) { return x < p.end; });
  return it != pieces.end() && it->start <= t ? it->phase : StepPhase::kOther;
}

}  // namespace

std::string_view OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kRank: return "rank";
    case OpKind::kThread: return "thread";
    case OpKind::kCpuOp: return "cpu_op";
    case OpKind::kAnnotation: return "annotation";
  }
  return "?";
}

OpTreeBuilder::OpTreeBuilder(const TraceModel& model, CompareSummary* out, size_t max_nodes)
    : m_(model), out_(out), max_nodes_(std::max<size_t>(max_nodes, 16)) {
  name_of_slice_name_.assign(model.strings.size(), 0);
  OpNode rank;
  rank.name = out->names.Intern("[rank]");
  rank.kind = OpKind::kRank;
  out->ops.push_back(rank);
  OpNode step;
  step.name = out->names.Intern("[step]");
  op_shape_of_slice_.assign(model.op_shapes.empty() ? 0 : model.slices.size(), 0);
  for (size_t k = 0; k < model.op_shapes.size(); ++k) op_shape_of_slice_[model.op_shapes[k].slice] = static_cast<uint32_t>(k + 1);
  step.kind = OpKind::kThread;
  step.parent = 0;
  step.depth = 1;
  out->ops.push_back(step);
  out->ops[0].children.push_back(1);
}

uint32_t OpTreeBuilder::NodeFor(uint32_t parent, uint32_t name, uint32_t occurrence, uint32_t position, uint16_t depth,
                               bool* created) {
  *created = false;
  const std::vector<uint32_t>& siblings = out_->ops[parent].children;
  if (position < siblings.size()) {
    const OpNode& guess = out_->ops[siblings[position]];
    if (guess.name == name && guess.occurrence == occurrence) return siblings[position];
  }
  const ChildKey key{parent, name, occurrence};
  if (auto it = children_.find(key); it != children_.end()) return it->second;
  if (out_->ops.size() >= max_nodes_) return kNoIndex;
  const auto id = static_cast<uint32_t>(out_->ops.size());
  OpNode node;
  node.name = name;
  node.occurrence = occurrence;
  node.parent = parent;
  node.depth = depth;
  out_->ops.push_back(std::move(node));
  out_->ops[parent].children.push_back(id);
  children_.emplace(key, id);
  *created = true;
  return id;
}

uint32_t OpTreeBuilder::ThreadRoot(uint32_t track, uint32_t step_track, uint32_t first_slice) {
  if (track == step_track) return 1;
  if (auto it = thread_roots_.find(track); it != thread_roots_.end()) return it->second;
  std::string_view role = ShortThreadName(m_.Str(m_.tracks[track].thread_name));
  if (role.empty()) role = m_.Str(m_.slices.name[first_slice]);
  const uint32_t name = out_->names.Intern("[thread] " + std::string(role));
  const uint32_t occurrence = role_count_[name]++;
  bool created;
  uint32_t node = NodeFor(0, name, occurrence, UINT32_MAX, 1, &created);
  if (node == kNoIndex) node = 1;  // over the cap: the thread's operators join the step thread's
  if (created) out_->ops[node].kind = OpKind::kThread;
  thread_roots_.emplace(track, node);
  return node;
}

// JSON text without the whitespace outside strings, so that "[[64, 256]]" and "[[64,256]]" agree
// (traces of different Kineto versions space them differently).
static void AppendCompactJson(std::string_view json, std::string* out) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out->push_back(c);
      if (c == '\\' && i + 1 < json.size()) {
        out->push_back(json[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
      out->push_back(c);
      in_string = c == '"';
    }
  }
}

uint32_t OpTreeBuilder::ShapesOf(uint32_t slice) {
  if (op_shape_of_slice_.empty() || op_shape_of_slice_[slice] == 0) return 0;
  const OpShape* it = &m_.op_shapes[op_shape_of_slice_[slice] - 1];
  out_->has_shapes = true;
  const uint64_t key = (static_cast<uint64_t>(it->dims) << 32) | it->types;
  auto [found, inserted] = shapes_of_texts_.try_emplace(key, 0);
  if (inserted) {  // once per distinct (dims, types): "dims|types" without whitespace
    std::string text;
    AppendCompactJson(m_.Str(it->dims), &text);
    text.push_back('|');
    AppendCompactJson(m_.Str(it->types), &text);
    found->second = out_->names.Intern(text);
  }
  return found->second;
}

void OpTreeBuilder::AddStep(uint32_t step, int64_t start, int64_t end, uint32_t step_track,
                            const std::vector<uint32_t>& order, const std::vector<PhasePiece>& phases) {
  const SliceTable& s = m_.slices;
  auto first = std::lower_bound(order.begin(), order.end(), start, [&](uint32_t i, int64_t t) { return s.ts[i] < t; });
  std::unordered_map<uint32_t, std::vector<uint32_t>> per_track;
  for (auto it = first; it != order.end() && s.ts[*it] < end; ++it) {
    const uint32_t i = *it;
    const ActivityKind c = s.kind[i];
    if (c != ActivityKind::kHostOp && c != ActivityKind::kAnnotation) continue;
    if (c == ActivityKind::kAnnotation && IsStepAnnotation(m_.Str(s.name[i]))) continue;
    per_track[s.track[i]].push_back(i);
  }
  // The step thread first, then the others in the order of their first operator.
  std::vector<std::pair<uint32_t, std::vector<uint32_t>*>> tracks;
  for (auto& [track, slices] : per_track) tracks.emplace_back(track, &slices);
  std::sort(tracks.begin(), tracks.end(), [&](const auto& a, const auto& b) {
    if ((a.first == step_track) != (b.first == step_track)) return a.first == step_track;
    return s.ts[a.second->front()] != s.ts[b.second->front()] ? s.ts[a.second->front()] < s.ts[b.second->front()]
                                                              : a.first < b.first;
  });
  for (auto& [track, slices] : tracks) {
    // Already in start order (`order`); parents must come before children: at equal starts the
    // longer one encloses the shorter, so only runs of equal starts need sorting.
    for (size_t i = 0; i < slices->size();) {
      size_t j = i + 1;
      while (j < slices->size() && s.ts[(*slices)[j]] == s.ts[(*slices)[i]]) ++j;
      if (j - i > 1) {
        std::stable_sort(slices->begin() + static_cast<std::ptrdiff_t>(i), slices->begin() + static_cast<std::ptrdiff_t>(j),
                         [&](uint32_t a, uint32_t b) { return s.dur[a] > s.dur[b]; });
      }
      i = j;
    }
    AddTrack(step, track, ThreadRoot(track, step_track, slices->front()), *slices, phases);
  }
}

uint32_t OpTreeBuilder::NameOfSlice(StringId sid) {
  if (name_of_slice_name_[sid] == 0) name_of_slice_name_[sid] = out_->names.Intern(m_.Str(sid)) + 1;
  return name_of_slice_name_[sid] - 1;
}

uint32_t OpTreeBuilder::Occurrence(uint32_t name, const std::vector<Frame>& stack) {
  if (name >= seen_.size()) seen_.resize(out_->names.size() + 64);
  Seen& seen = seen_[name];
  const Frame& parent = stack.back();
  if (seen.frame != parent.uid) {
    const auto depth = static_cast<uint32_t>(stack.size() - 1);
    if (seen.count > 0 && seen.depth < depth && stack[seen.depth].uid == seen.frame) {
      shadowed_.push_back({depth, name, seen});  // an open ancestor's count
    }
    seen = {parent.uid, 0, depth};
  }
  return seen.count++;
}

void OpTreeBuilder::OpenInstance(uint32_t step, uint32_t track, uint32_t slice, const std::vector<PhasePiece>& phases,
                                 std::vector<Frame>& stack, Frame* frame) {
  const SliceTable& s = m_.slices;
  const uint32_t name = NameOfSlice(s.name[slice]);
  const uint32_t occurrence = Occurrence(name, stack);
  Frame& parent = stack.back();
  const auto depth = static_cast<uint16_t>(stack.size() + 1);
  bool created;
  const uint32_t node = NodeFor(parent.node, name, occurrence, parent.children++, depth, &created);
  if (node == kNoIndex) {
    frame->folded = true;
    return;
  }
  const bool cpu_op = s.kind[slice] == ActivityKind::kHostOp;
  OpNode& n = out_->ops[node];
  const uint32_t shapes = ShapesOf(slice);
  if (n.count == 0) {
    n.kind = cpu_op ? OpKind::kCpuOp : OpKind::kAnnotation;
    n.phase = PhaseAt(phases, frame->start);
    n.shapes = shapes;
  } else if (shapes != n.shapes) {
    n.shapes_vary = true;
  }
  ++n.count;
  n.host_ns += frame->end - frame->start;
  frame->node = node;
  frame->in_cpu_op = cpu_op || parent.in_cpu_op;
  frame->instance = static_cast<uint32_t>(instances_.size());
  instances_.push_back({frame->start, frame->end, node, parent.instance, track, step, cpu_op, frame->in_cpu_op});
  slices_.push_back(slice);
}

// Self time = duration - children (clipped); a folded child's time stays in its parent's self time.
void OpTreeBuilder::CloseFrame(std::vector<Frame>& stack) {
  const auto depth = static_cast<uint32_t>(stack.size() - 1);
  while (!shadowed_.empty() && shadowed_.back().depth == depth) {
    seen_[shadowed_.back().name] = shadowed_.back().seen;
    shadowed_.pop_back();
  }
  Frame f = std::move(stack.back());
  stack.pop_back();
  const int64_t dur = f.end - f.start;
  if (!f.folded) out_->ops[f.node].self_ns += dur - std::min(f.children_ns, dur);
  Frame& parent = stack.back();
  if (stack.size() > 1 && !f.folded) {
    parent.children_ns += std::max<int64_t>(0, std::min(f.end, parent.end) - std::max(f.start, parent.start));
  }
}

void OpTreeBuilder::AddTrack(uint32_t step, uint32_t track, uint32_t root, std::vector<uint32_t>& slices,
                             const std::vector<PhasePiece>& phases) {
  const SliceTable& s = m_.slices;
  std::vector<Frame> stack;
  stack.push_back({kNoIndex, root, INT64_MIN, INT64_MAX});
  stack.back().uid = next_frame_++;
  std::vector<uint32_t>& index = by_track_[track];
  if (index.empty()) tracks_.push_back(track);
  for (const uint32_t i : slices) {
    const int64_t ts = s.ts[i], te = ts + s.dur[i];
    while (stack.size() > 1 && stack.back().end <= ts) CloseFrame(stack);
    Frame& parent = stack.back();
    Frame frame{kNoIndex, parent.node, ts, te};
    frame.folded = parent.folded;
    if (!frame.folded) OpenInstance(step, track, i, phases, stack, &frame);
    if (frame.instance != kNoIndex) index.push_back(frame.instance);
    if (frame.folded) ++folded_;
    frame.uid = next_frame_++;
    stack.push_back(std::move(frame));
  }
  while (stack.size() > 1) CloseFrame(stack);
  shadowed_.clear();  // the root's
}

const std::vector<uint32_t>& OpTreeBuilder::TrackInstances(uint32_t track) const {
  static const std::vector<uint32_t> kEmpty;
  auto it = by_track_.find(track);
  return it == by_track_.end() ? kEmpty : it->second;
}

uint32_t OpTreeBuilder::InstanceAt(uint32_t track, int64_t t) const {
  const std::vector<uint32_t>& list = TrackInstances(track);
  auto it = std::upper_bound(list.begin(), list.end(), t, [&](int64_t x, uint32_t i) { return x < instances_[i].start; });
  if (it == list.begin()) return kNoIndex;
  uint32_t i = *(it - 1);
  while (i != kNoIndex && instances_[i].end <= t) i = instances_[i].parent;
  return i;
}

uint32_t OpTreeBuilder::OutermostStartingAt(uint32_t track, int64_t t) const {
  uint32_t i = InstanceAt(track, t);
  while (i != kNoIndex && instances_[i].parent != kNoIndex && instances_[instances_[i].parent].start == instances_[i].start) {
    i = instances_[i].parent;
  }
  return i;
}

}  // namespace rankscope::compare
