#include "rankscope/analysis/gpu_timeline.h"

#include <algorithm>

namespace rankscope {
namespace {

struct Edge {
  int64_t time;
  uint32_t activity;
  bool is_start;
};
static_assert(sizeof(Edge) == 16, "Edge is a hot struct: keep it small");

// Edges of every activity clipped to W; at one instant ends come before starts, so that
// activities that merely touch never count as running together.
std::vector<Edge> ClippedEdges(const std::vector<GpuActivity>& acts, const Window& w) {
  std::vector<Edge> edges;
  edges.reserve(acts.size() * 2);
  for (uint32_t i = 0; i < acts.size(); ++i) {
    const int64_t a = std::max(acts[i].start, w.start);
    const int64_t b = std::min(acts[i].end, w.end);
    if (b <= a) continue;
    edges.push_back({a, i, true});
    edges.push_back({b, i, false});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
    return x.time != y.time ? x.time < y.time : (!x.is_start && y.is_start);
  });
  return edges;
}

// Activities running now, per class. A handful at a time, so small vectors and linear removal.
class ActiveSets {
 public:
  void Add(uint32_t id, ActivityClass c) { sets_[static_cast<int>(c)].push_back(id); }
  void Remove(uint32_t id, ActivityClass c) {
    auto& v = sets_[static_cast<int>(c)];
    auto it = std::find(v.begin(), v.end(), id);
    *it = v.back();
    v.pop_back();
  }
  const std::vector<uint32_t>& Of(int c) const { return sets_[c]; }
  int TopClass() const {
    for (int c = 0; c < kNumActivityClasses; ++c) {
      if (!sets_[c].empty()) return c;
    }
    return -1;
  }

 private:
  std::array<std::vector<uint32_t>, kNumActivityClasses> sets_;
};

}  // namespace

GpuTimeline SweepGpuTimeline(const std::vector<GpuActivity>& acts, const Window& w) {
  GpuTimeline t;
  t.owned_ns.assign(acts.size(), 0.0);
  const std::vector<Edge> edges = ClippedEdges(acts, w);
  constexpr int kCompute = static_cast<int>(ActivityClass::kCompute);
  constexpr int kComm = static_cast<int>(ActivityClass::kCommunication);
  ActiveSets active;
  int64_t prev = w.start;
  for (const Edge& e : edges) {
    const int64_t len = e.time - prev;
    const int top = active.TopClass();
    if (len > 0 && top >= 0) {
      t.busy.Append(prev, e.time);
      t.exposed_ns[top] += len;
      const auto& owners = active.Of(top);
      const double share = static_cast<double>(len) / static_cast<double>(owners.size());
      for (uint32_t id : owners) t.owned_ns[id] += share;
      for (int c = 0; c < kNumActivityClasses; ++c) {
        if (!active.Of(c).empty()) t.class_busy_ns[c] += len;
      }
      if (top == kCompute) t.compute.Append(prev, e.time);
      if (top == kCompute && !active.Of(kComm).empty()) t.comm_compute_overlap_ns += len;
    }
    prev = e.time;
    if (e.is_start) {
      active.Add(e.activity, acts[e.activity].cls);
    } else {
      active.Remove(e.activity, acts[e.activity].cls);
    }
  }
  t.idle_ns = w.length() - t.busy.Length();
  return t;
}

}  // namespace rankscope
