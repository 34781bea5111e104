// The operator template of a run (CompareSummary::ops) and the index of its instances.
//
// Built step by step: each thread's CPU ops and annotations of a step are nested by time (a
// parent starts no later and ends no earlier than its children; at equal starts the longer one
// is the parent) and each instance is keyed by its parent's node, its name and its occurrence
// among its siblings of that name. The index answers "which instance is innermost at time t on
// this thread", for GPU launches, memory events and fwdbwd flows.
#pragma once

#include <unordered_map>
#include <vector>

#include "rankscope/analysis/step_phases.h"
#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

struct OpInstance {
  int64_t start = 0, end = 0;  // trace clock
  uint32_t node = kNoIndex;
  uint32_t parent = kNoIndex;  // instance index
  uint32_t track = 0;
  uint32_t step = 0;           // index among the kept steps
  bool cpu_op = false;         // a cpu_op (not an annotation)
  bool in_cpu_op = false;      // it or an enclosing instance is a cpu_op
};

class OpTreeBuilder {
 public:
  // `out` receives the nodes and names; nodes 0 and 1 are created here.
  OpTreeBuilder(const TraceModel& model, CompareSummary* out, size_t max_nodes);

  // Adds one kept step (index `step`): every op and annotation starting in [start, end) on any
  // thread, the step thread being `step_track`. `order` is SlicesByStart(model); `phases` the
  // step's phase pieces.
  void AddStep(uint32_t step, int64_t start, int64_t end, uint32_t step_track, const std::vector<uint32_t>& order,
               const std::vector<PhasePiece>& phases);

  // Innermost instance containing t on `track`, or kNoIndex.
  uint32_t InstanceAt(uint32_t track, int64_t t) const;
  // Outermost instance starting exactly at t that contains the innermost one (a flow's op).
  uint32_t OutermostStartingAt(uint32_t track, int64_t t) const;
  const OpInstance& instance(uint32_t i) const { return instances_[i]; }
  // Instances of one track in start order (parents before their children).
  const std::vector<uint32_t>& TrackInstances(uint32_t track) const;
  // Tracks that have instances, and the step thread's.
  const std::vector<uint32_t>& tracks() const { return tracks_; }
  uint64_t folded() const { return folded_; }

  // The slice of an instance, to let other builders (modules) annotate nodes.
  uint32_t slice_of(uint32_t instance) const { return slices_[instance]; }

 private:
  struct ChildKey {
    uint32_t parent, name, occurrence;
    bool operator==(const ChildKey&) const = default;
  };
  struct ChildKeyHash {
    size_t operator()(const ChildKey& k) const {
      return (static_cast<size_t>(k.parent) * 0x9E3779B97F4A7C15ull) ^ (static_cast<size_t>(k.name) << 20) ^ k.occurrence;
    }
  };
  uint32_t ThreadRoot(uint32_t track, uint32_t step_track, uint32_t first_slice);
  // `position` is the instance's index among its parent instance's children: steps repeat, so
  // the parent node's child at that position is usually the one (checked before any hashing).
  uint32_t NodeFor(uint32_t parent_node, uint32_t name, uint32_t occurrence, uint32_t position, uint16_t depth,
                   bool* created);
  void AddTrack(uint32_t step, uint32_t track, uint32_t root, std::vector<uint32_t>& slices,
                const std::vector<PhasePiece>& phases);
  // An open instance while a thread's slices are walked.
  struct Frame {
    uint32_t instance;  // kNoIndex for the root and for folded instances
    uint32_t node;
    int64_t start, end;
    int64_t children_ns = 0;  // sum of its children's durations clipped to it
    bool folded = false;
    bool in_cpu_op = false;
    uint64_t uid = 0;       // for seen_
    uint32_t children = 0;  // child instances so far
  };
  uint32_t NameOfSlice(StringId name);
  // Makes `frame` (slice `slice` under `parent`, at `depth`) an instance of its template node;
  // leaves it folded when the template is full.
  void OpenInstance(uint32_t step, uint32_t track, uint32_t slice, const std::vector<PhasePiece>& phases,
                    std::vector<Frame>& stack, Frame* frame);
  uint32_t Occurrence(uint32_t name, const std::vector<Frame>& stack);
  void CloseFrame(std::vector<Frame>& stack);
  uint32_t ShapesOf(uint32_t slice);

  const TraceModel& m_;
  CompareSummary* out_;
  size_t max_nodes_;
  std::unordered_map<ChildKey, uint32_t, ChildKeyHash> children_;
  std::unordered_map<uint32_t, uint32_t> thread_roots_;   // track -> root node
  std::unordered_map<uint32_t, uint32_t> role_count_;     // role name -> threads with it so far
  std::vector<uint32_t> name_of_slice_name_;              // StringId -> NameTable id (+1; 0 = unknown)
  std::unordered_map<uint64_t, uint32_t> shapes_of_texts_; // (dims, types) StringIds -> NameTable id
  std::vector<uint32_t> op_shape_of_slice_;               // slice -> index in model.op_shapes + 1 (0: none)
  // Occurrences of a name among the children of one parent instance: per NameTable id, the
  // parent frame it was last seen under and how often (so no per-frame map is needed). A name
  // can occur inside itself (aten::linear > aten::linear under autocast): the inner count then
  // replaces that of a frame still open, which is kept in shadowed_ and put back when the
  // parent that replaced it closes.
  struct Seen {
    uint64_t frame = 0;
    uint32_t count = 0;
    uint32_t depth = 0;  // the frame's index in the stack
  };
  struct Shadowed {
    uint32_t depth;  // of the parent frame whose child replaced it
    uint32_t name;
    Seen seen;
  };
  std::vector<Seen> seen_;
  std::vector<Shadowed> shadowed_;
  uint64_t next_frame_ = 1;
  std::vector<OpInstance> instances_;
  std::vector<uint32_t> slices_;                          // per instance
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track_;
  std::vector<uint32_t> tracks_;
  uint64_t folded_ = 0;
};

}  // namespace rankscope::compare
