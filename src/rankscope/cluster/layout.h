// The job's parallel layout: which process groups exist, what each is for (data, tensor,
// context, expert, pipeline parallelism), and so each rank's pipeline stage and the peers that
// do the same work. Cluster diagnosis compares a rank with its stage peers, not the whole job:
// in a pipeline the last stage's ranks wait for different things than the first stage's.
//
// Sources, in order:
//  1. `--layout dp=2,pp=2[,tp=..][,cp=..][,order=tp-cp-dp-pp]` (LayoutSpec): the groups follow
//     from the sizes; `order` lists the dimensions fastest-varying first (Megatron's default
//     tp-cp-dp-pp: rank = tp + TP·(cp + CP·(dp + DP·pp))).
//  2. The traces: distributedInfo.pg_config of every rank plus the process groups its
//     collectives name (record_param_comms). A group is classified by its description
//     ("pp", "dp", "mesh_tp", "data_parallel", ...), else by the collectives it carries
//     (only send/recv: pipeline; all_to_all: expert), else by elimination (a partition of the
//     ranks orthogonal to a known one in a job with two).
// A rank's stage is its position in its pipeline group (ranks ascending, as torch and Megatron
// number stages). Missing, contradictory or partial group information is analysed with what
// is there and listed in `notes`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/analysis/rank_summary.h"
#include "rankscope/base/status.h"

namespace rankscope {

enum class GroupRole : uint8_t { kUnknown = 0, kWorld, kData, kTensor, kContext, kExpert, kPipeline };
std::string_view GroupRoleName(GroupRole r);  // "unknown", "world", "data", "tensor", ...

struct LayoutSpec {
  int64_t dp = 1, pp = 1, tp = 1, cp = 1;
  std::vector<std::string> order = {"tp", "cp", "dp", "pp"};  // fastest-varying first
};

// "dp=2,pp=2,order=tp-dp-pp"; fails with a clear message on anything else.
StatusOr<LayoutSpec> ParseLayoutSpec(std::string_view text);

struct LayoutGroup {
  std::string name, desc;       // as the trace writes them ("" from --layout)
  std::vector<int64_t> ranks;   // member rank numbers, ascending
  GroupRole role = GroupRole::kUnknown;
  std::string classified_by;    // "description", "collectives", "elimination", "--layout"
  std::vector<int64_t> untraced;  // members without a trace
};

struct JobLayout {
  std::string source = "none";  // "traces", "--layout", "none"
  std::vector<LayoutGroup> groups;
  int64_t stages = 1;           // pipeline depth (1: no pipeline found)
  int64_t data_parallel = 1;    // size of the data groups (1: none found)
  std::vector<int64_t> stage;        // per rank index: pipeline stage (0 without a pipeline)
  std::vector<int64_t> data_index;   // per rank index: position in its data group (-1 unknown)
  std::vector<std::string> notes;    // what was missing or contradictory, and what was done
  bool has_pipeline() const { return stages > 1; }
};

// `ranks`: the analysed summaries; `spec` overrides the traces when given.
JobLayout InferLayout(const std::vector<RankSummary>& ranks, const LayoutSpec* spec);

// Rank indices of each stage (ascending), stages in order.
std::vector<std::vector<uint32_t>> RanksByStage(const JobLayout& layout);

}  // namespace rankscope
