#include "rankscope/cluster/host_map.h"

#include <fstream>
#include <sstream>

#include "rankscope/base/parse_int.h"

namespace rankscope {
namespace {

// A rank: an integer >= 0.
bool ParseRank(std::string_view s, int64_t* out) {
  const std::optional<int64_t> rank = ParseInt(s);
  if (!rank || *rank < 0) return false;
  *out = *rank;
  return true;
}

// "7" or "0-7" -> [first, last].
bool ParseRankRange(std::string_view s, int64_t* first, int64_t* last) {
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) return ParseRank(s, first) && (*last = *first, true);
  return ParseRank(s.substr(0, dash), first) && ParseRank(s.substr(dash + 1), last) && *first <= *last;
}

}  // namespace

StatusOr<std::map<int64_t, std::string>> ParseHostMap(std::string_view text) {
  std::map<int64_t, std::string> map;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string ranks, host, extra;
    if (!(fields >> ranks)) continue;  // blank or comment
    int64_t first = 0, last = 0;
    if (!(fields >> host) || (fields >> extra) || !ParseRankRange(ranks, &first, &last)) {
      return InvalidArgument("hosts file line {}: expected \"RANK HOST\" or \"FIRST-LAST HOST\", got \"{}\"", number, line);
    }
    if (last - first > 1'000'000) return InvalidArgument("hosts file line {}: range {} is too large", number, ranks);
    for (int64_t r = first; r <= last; ++r) {
      auto [it, inserted] = map.emplace(r, host);
      if (!inserted && it->second != host) {
        return InvalidArgument("hosts file line {}: rank {} is already on host {}", number, r, it->second);
      }
    }
  }
  if (map.empty()) return InvalidArgument("the hosts file names no rank");
  return map;
}

StatusOr<std::map<int64_t, std::string>> ReadHostMap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the hosts file {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  auto map = ParseHostMap(text.str());
  if (!map.ok()) return map.status().WithContext(path);
  return map;
}

std::string_view HostSourceName(HostSource s) {
  switch (s) {
    case HostSource::kHostMap: return "hosts file";
    case HostSource::kTrace: return "trace";
    case HostSource::kManifest: return "capture manifest";
    case HostSource::kTelemetry: return "telemetry sidecar";
    case HostSource::kNone: return "none";
  }
  return "none";
}

StatusOr<std::vector<RankHost>> AssignHosts(const std::vector<RankSummary>& ranks,
                                            const std::map<int64_t, std::string>& host_map,
                                            const std::map<int64_t, RankHost>& capture_hosts) {
  std::vector<RankHost> hosts;
  hosts.reserve(ranks.size());
  for (const RankSummary& r : ranks) {
    if (!host_map.empty()) {
      auto it = host_map.find(r.rank.rank);
      if (it == host_map.end()) return InvalidArgument("the hosts file does not say where rank {} runs", r.rank.rank);
      hosts.push_back({it->second, HostSource::kHostMap});
    } else if (!r.host_name.empty()) {
      hosts.push_back({r.host_name, HostSource::kTrace});
    } else if (auto it = capture_hosts.find(r.rank.rank); it != capture_hosts.end()) {
      hosts.push_back(it->second);
    } else {
      hosts.push_back({"rank " + std::to_string(r.rank.rank), HostSource::kNone});
    }
  }
  return hosts;
}

}  // namespace rankscope
