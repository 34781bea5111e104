// The nn.Module tree of a run (CompareSummary::modules) from the Python stacks
// (with_stack=True): the profiler writes a python_function frame "nn.Module: Linear_1" around
// every module call. Frames nest by time on their thread; a module's key is its path of names
// from the outermost module, so the same module in every step is one node. A module's source is
// the first "file(line): forward" frame inside it (its forward()).
#pragma once

#include <unordered_map>
#include <vector>

#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

class ModuleTreeBuilder {
 public:
  ModuleTreeBuilder(const TraceModel& model, CompareSummary* out);

  // Every Python frame starting in [start, end); `order` is SlicesByStart(model).
  void AddStep(int64_t start, int64_t end, const std::vector<uint32_t>& order);

  // The innermost module running at t on `track`, or kNoIndex.
  uint32_t ModuleAt(uint32_t track, int64_t t) const;

 private:
  struct Instance {
    int64_t start, end;
    uint32_t module;
    uint32_t parent;  // instance index
  };
  uint32_t NodeFor(uint32_t parent, uint32_t name);
  void AddTrack(uint32_t track, std::vector<uint32_t>& frames);

  const TraceModel& m_;
  CompareSummary* out_;
  std::unordered_map<uint64_t, uint32_t> children_;  // (parent << 32 | name) -> module
  std::vector<Instance> instances_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track_;
  // Per StringId of a Python frame: 0 unknown, 1 not a module, 2 a module's forward(), else
  // 3 + the NameTable id of the module name.
  std::vector<uint32_t> frame_kind_;
};

}  // namespace rankscope::compare
