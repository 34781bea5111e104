// The communication matrix: who communicated with whom, from the matched instances (collectives
// and point-to-point transfers found on two or more ranks). Cell (a, b), a != b, adds for every
// matched instance and every pair of participants i in a, j in b (i != j): one to `count`, and
// i's bytes and i's duration to `bytes` and `time_ns` (row = the sender's view of its part). The
// traces do not say which pairs inside a collective exchanged data (that is the algorithm's
// choice), so a collective counts for every pair of its participants; a send/recv is one pair.
// Up to max_matrix_cells ranks it is per rank; beyond, per host, else per block of ranks.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "rankscope/report/view_data.h"

namespace rankscope {
namespace {

using nlohmann::json;

bool IsPointToPoint(const std::string& op) {
  return op == "send" || op == "recv" || op == "send_recv" || op == "sendrecv";
}

struct Cells {
  std::string level;
  std::vector<uint32_t> cell_of;  // per rank index
  std::vector<std::string> labels;
  std::vector<std::string> hosts;  // per cell ("" for a block spanning hosts)
};

Cells ChooseCells(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d, size_t max_cells) {
  Cells c;
  const size_t n = ranks.size();
  auto host = [&](size_t r) { return r < d.hosts.size() ? d.hosts[r].host : ranks[r].host_name; };
  c.cell_of.resize(n);
  if (n <= max_cells) {
    c.level = "rank";
    for (size_t r = 0; r < n; ++r) {
      c.cell_of[r] = static_cast<uint32_t>(r);
      c.labels.push_back(std::to_string(d.rank_numbers.empty() ? ranks[r].rank.rank : d.rank_numbers[r]));
      c.hosts.push_back(host(r));
    }
    return c;
  }
  std::map<std::string, uint32_t> by_host;  // hosts in the order of their lowest rank
  for (size_t r = 0; r < n; ++r) {
    if (by_host.emplace(host(r), static_cast<uint32_t>(by_host.size())).second) c.labels.push_back(host(r));
  }
  if (by_host.size() <= max_cells) {
    c.level = "host";
    c.hosts = c.labels;
    for (size_t r = 0; r < n; ++r) c.cell_of[r] = by_host[host(r)];
    return c;
  }
  c.labels.clear();
  c.level = "block";
  const size_t per = (n + max_cells - 1) / max_cells;
  for (size_t r = 0; r < n; ++r) c.cell_of[r] = static_cast<uint32_t>(r / per);
  for (size_t b = 0; b * per < n; ++b) {
    const size_t first = b * per, last = std::min(n, first + per) - 1;
    auto number = [&](size_t r) { return d.rank_numbers.empty() ? ranks[r].rank.rank : d.rank_numbers[r]; };
    c.labels.push_back(fmt::format("{}-{}", number(first), number(last)));
    c.hosts.push_back("");
  }
  return c;
}

struct Totals {
  uint64_t count = 0;
  double bytes = 0, time_ns = 0;
  json Json() const {
    return {{"count", count}, {"bytes", bytes}, {"time_ns", time_ns},
            {"bandwidth_gbps", time_ns > 0 ? json(bytes / time_ns) : json(nullptr)}};
  }
};

}  // namespace

json CommMatrixJson(const std::vector<RankSummary>& ranks, const ClusterDiagnosis& d, const ViewLimits& limits) {
  const Cells cells = ChooseCells(ranks, d, std::max<size_t>(1, limits.max_matrix_cells));
  const size_t k = cells.labels.size();
  std::vector<double> count(k * k, 0), bytes(k * k, 0), time(k * k, 0);
  Totals intra, inter, collective, p2p;
  uint64_t unknown_bytes = 0;
  struct Part {
    double n = 0, bytes = 0, time = 0;
  };
  std::map<uint32_t, Part> parts;  // per cell, for one instance
  for (const MatchedCollective& m : d.matching.instances) {
    parts.clear();
    for (const Participant& p : m.participants) {
      const CollectiveInstance& c = ranks[p.rank].collectives[p.instance];
      Part& part = parts[cells.cell_of[p.rank]];
      part.n += 1;
      if (c.bytes >= 0) part.bytes += static_cast<double>(c.bytes);
      else ++unknown_bytes;
      part.time += static_cast<double>(c.end_ns - c.start_ns);
    }
    Totals& kind = IsPointToPoint(m.op) ? p2p : collective;
    for (const auto& [a, pa] : parts) {
      for (const auto& [b, pb] : parts) {
        // Pairs i in a, j in b, i != j: pa.n * pb.n, less the n_a pairs (i, i) when a == b.
        const double pairs = pa.n * pb.n - (a == b ? pa.n : 0);
        if (pairs <= 0) continue;
        const double peers = pb.n - (a == b ? 1 : 0);  // each i of a has this many partners in b
        const size_t cell = a * k + b;
        count[cell] += pairs;
        bytes[cell] += pa.bytes * peers;
        time[cell] += pa.time * peers;
        const bool same_host = !cells.hosts[a].empty() && cells.hosts[a] == cells.hosts[b];
        for (Totals* t : {same_host ? &intra : &inter, &kind}) {
          t->count += static_cast<uint64_t>(pairs);
          t->bytes += pa.bytes * peers;
          t->time_ns += pa.time * peers;
        }
      }
    }
  }
  json count_rows = json::array(), bytes_rows = json::array(), time_rows = json::array(), bw_rows = json::array();
  for (size_t a = 0; a < k; ++a) {
    json c = json::array(), b = json::array(), t = json::array(), w = json::array();
    for (size_t j = 0; j < k; ++j) {
      const size_t cell = a * k + j;
      c.push_back(count[cell]);
      b.push_back(bytes[cell]);
      t.push_back(std::llround(time[cell]));
      w.push_back(time[cell] > 0 && bytes[cell] > 0 ? json(bytes[cell] / time[cell]) : json(nullptr));
    }
    count_rows.push_back(std::move(c));
    bytes_rows.push_back(std::move(b));
    time_rows.push_back(std::move(t));
    bw_rows.push_back(std::move(w));
  }
  return {{"schema", kViewsSchema},
          {"view", "matrix"},
          {"level", cells.level},
          {"labels", cells.labels},
          {"hosts", cells.hosts},
          {"count", std::move(count_rows)},
          {"bytes", std::move(bytes_rows)},
          {"time_ns", std::move(time_rows)},
          {"bandwidth_gbps", std::move(bw_rows)},
          {"intra_host", intra.Json()},
          {"inter_host", inter.Json()},
          {"collectives", collective.Json()},
          {"point_to_point", p2p.Json()},
          {"instances", d.matching.instances.size()},
          {"unknown_bytes", unknown_bytes}};
}

}  // namespace rankscope
