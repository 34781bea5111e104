#include "rankscope/ingest/rank_resolver.h"

#include <cctype>
#include <map>

namespace rankscope {

std::string_view RankSourceName(RankSource s) {
  switch (s) {
    case RankSource::kDistributedInfo: return "distributedInfo";
    case RankSource::kFileName: return "file name";
    case RankSource::kDefault: return "default";
  }
  return "?";
}

std::optional<int64_t> RankFromFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 1)) {
    size_t i = at + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
    const size_t digits = i;
    int64_t value = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i - digits < 9) {
      value = value * 10 + (name[i] - '0');
      ++i;
    }
    // The number must end there: "rank12abc" is fine, "rank1234567890" is not a rank.
    if (i > digits && (i == name.size() || !std::isdigit(static_cast<unsigned char>(name[i])))) return value;
  }
  return std::nullopt;
}

StatusOr<std::vector<RankAssignment>> ResolveRanks(const std::vector<RankEvidence>& files,
                                                   std::vector<std::string>* warnings) {
  std::vector<RankAssignment> out;
  out.reserve(files.size());
  for (const RankEvidence& f : files) {
    if (f.distributed_rank) {
      out.push_back({*f.distributed_rank, RankSource::kDistributedInfo});
    } else if (auto r = RankFromFileName(f.path)) {
      out.push_back({*r, RankSource::kFileName});
    } else if (files.size() == 1) {
      warnings->push_back(f.path + ": no rank in distributedInfo or the file name; reading it as rank 0");
      out.push_back({0, RankSource::kDefault});
    } else {
      return FailedPrecondition(
          "{}: cannot tell which rank this file is: it has no distributedInfo.rank and its name "
          "has no rank number. Rename it to include one (e.g. rank3.pt.trace.json.gz) or analyse "
          "it on its own",
          f.path);
    }
  }
  std::map<int64_t, size_t> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    auto [it, inserted] = seen.emplace(out[i].rank, i);
    if (!inserted) {
      const size_t j = it->second;
      return FailedPrecondition(
          "two files claim rank {}: {} (from {}) and {} (from {}). Each rank must appear once: "
          "remove one, or point rankscope at a single capture directory",
          out[i].rank, files[j].path, RankSourceName(out[j].source), files[i].path,
          RankSourceName(out[i].source));
    }
  }
  return out;
}

}  // namespace rankscope
