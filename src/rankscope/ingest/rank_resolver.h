// Which rank a trace file belongs to: distributedInfo.rank, else a rank number in the file
// name (rank3, rank-3, rank_3). A set of files must map one-to-one onto ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope {

enum class RankSource { kDistributedInfo, kFileName, kDefault };
std::string_view RankSourceName(RankSource s);  // "distributedInfo", "file name", "default"

struct RankAssignment {
  int64_t rank = 0;
  RankSource source = RankSource::kDefault;
};

// "rank3", "rank-3", "rank_3" (any case) in the file's base name.
std::optional<int64_t> RankFromFileName(std::string_view path);

struct RankEvidence {
  std::string path;
  std::optional<int64_t> distributed_rank;  // distributedInfo.rank
};

// One assignment per file, in order. A lone file without a rank is rank 0 (with a warning);
// in a set, a file without a rank or two files with one rank is an error saying how to fix it.
StatusOr<std::vector<RankAssignment>> ResolveRanks(const std::vector<RankEvidence>& files,
                                                   std::vector<std::string>* warnings);

}  // namespace rankscope
