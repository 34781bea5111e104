#include "rankscope/analysis/untraced_time.h"

#include <algorithm>
#include <unordered_map>

#include "rankscope/analysis/collectives.h"
#include "rankscope/analysis/cpu_functions.h"
#include "rankscope/analysis/function_table.h"

namespace rankscope {
namespace {

constexpr uint32_t kNoNeighbour = 0xFFFFFFFFu;

bool IsHostKind(ActivityKind k) {
  return k == ActivityKind::kHostOp || k == ActivityKind::kAnnotation || k == ActivityKind::kPythonFrame ||
         k == ActivityKind::kRuntimeCall || k == ActivityKind::kDriverCall;
}

// The slices whose presence says the process was running recorded code, in start order.
class TrainingSlices {
 public:
  TrainingSlices(const TraceModel& m, const std::vector<uint32_t>& order) : m_(m) {
    skip_ = CollectorThreadTracks(m);
    const std::vector<uint32_t> comm = CollectiveTracks(m);
    skip_.insert(skip_.end(), comm.begin(), comm.end());
    std::sort(skip_.begin(), skip_.end());
    for (const uint32_t i : order) {
      if (!IsHostKind(m.slices.kind[i])) continue;
      if (std::binary_search(comm.begin(), comm.end(), m.slices.track[i])) {
        comm_.Append(m.slices.ts[i], m.slices.ts[i] + m.slices.dur[i]);
      } else if (Counts(i)) {
        slices_.push_back(i);
      }
    }
  }
  const std::vector<uint32_t>& slices() const { return slices_; }
  const IntervalSet& comm() const { return comm_; }  // the CPU collectives in flight

 private:
  bool Counts(uint32_t i) const {
    if (std::binary_search(skip_.begin(), skip_.end(), m_.slices.track[i])) return false;
    return !(m_.slices.kind[i] == ActivityKind::kAnnotation && m_.Str(m_.slices.name[i]).starts_with("ProfilerStep#"));
  }
  const TraceModel& m_;
  std::vector<uint32_t> skip_;
  std::vector<uint32_t> slices_;
  IntervalSet comm_;
};

// The start of [a, b) up to the first CPU collective in flight in it for at least
// kMinUntracedGapNs (all of it without one). The thread waits for such a collective, and after it
// has ended the thread is waking from its wait: on a busy host it waits for a CPU there, for tens
// of milliseconds, and that is not code of its own. A collective that only ends within the first
// microseconds of the gap (a bucket's all-reduce finishing as a sleep begins) is not waited for.
int64_t BeforeFirstCollective(const IntervalSet& comm, int64_t a, int64_t b) {
  const std::vector<Interval>& v = comm.intervals();
  auto it = std::upper_bound(v.begin(), v.end(), a, [](int64_t t, const Interval& i) { return t < i.end; });
  for (; it != v.end() && it->start < b; ++it) {
    if (std::min(it->end, b) - std::max(it->start, a) >= kMinUntracedGapNs) return std::max(it->start, a);
  }
  return b;
}

}  // namespace

FunctionTable BuildUntracedTable(const TraceModel& m, const std::vector<uint32_t>& order, const Window& w,
                                 const IntervalSet& busy, size_t max_rows) {
  const TrainingSlices training(m, order);
  const std::vector<uint32_t>& slices = training.slices();
  const SliceTable& s = m.slices;
  std::unordered_map<uint64_t, uint32_t> row_of;  // (name before, name after) -> row
  std::vector<std::pair<uint32_t, uint32_t>> keys;  // row -> (slice before or kNoNeighbour, slice after)
  FunctionAccumulator acc(w, busy);  // gaps come in time order
  int64_t cover_end = INT64_MIN;
  uint32_t last = kNoNeighbour;  // the outermost slice that ended at cover_end
  for (size_t k = 0; k < slices.size(); ++k) {
    const uint32_t i = slices[k];
    const int64_t start = s.ts[i], end = s.ts[i] + s.dur[i];
    const int64_t a = std::max(cover_end, w.start), b = std::min(start, w.end);
    if (cover_end != INT64_MIN && b - a >= kMinUntracedGapNs) {
      uint32_t next = i;  // the outermost of the slices that start the covered run
      for (size_t j = k + 1; j < slices.size() && s.ts[slices[j]] == start; ++j) {
        if (s.dur[slices[j]] > s.dur[next]) next = slices[j];
      }
      const uint64_t before = last == kNoNeighbour ? kNoNeighbour : s.name[last];
      const uint64_t key = (before << 32) | s.name[next];
      auto [it, inserted] = row_of.try_emplace(key, static_cast<uint32_t>(keys.size()));
      if (inserted) keys.emplace_back(last, next);
      const int64_t untraced_end = BeforeFirstCollective(training.comm(), a, b);
      if (untraced_end - a >= kMinUntracedGapNs) acc.Add(it->second, a, untraced_end);
    }
    if (end > cover_end) {
      cover_end = end;
      last = i;
    }
  }
  std::vector<FunctionStat> rows(keys.size());
  acc.Finish(rows);
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto [before, after] = keys[r];
    rows[r].name = before == kNoNeighbour ? "before " + std::string(m.Str(s.name[after]))
                                      : "between " + std::string(m.Str(s.name[before])) + " and " +
                                            std::string(m.Str(s.name[after]));
  }
  return FinishTable(std::move(rows), max_rows, w.length());
}

}  // namespace rankscope
