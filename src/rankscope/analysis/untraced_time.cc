#include "rankscope/analysis/untraced_time.h"

#include <algorithm>
#include <tuple>
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
        if (m.slices.kind[i] == ActivityKind::kAnnotation) {
          annotations_.push_back(i);
        } else {
          code_.Append(m.slices.ts[i], m.slices.ts[i] + m.slices.dur[i]);
        }
      }
    }
  }
  const std::vector<uint32_t>& slices() const { return slices_; }
  const std::vector<uint32_t>& annotations() const { return annotations_; }  // in start order
  const IntervalSet& code() const { return code_; }  // where a slice other than an annotation runs
  const IntervalSet& comm() const { return comm_; }  // the CPU collectives in flight

 private:
  bool Counts(uint32_t i) const {
    if (std::binary_search(skip_.begin(), skip_.end(), m_.slices.track[i])) return false;
    return !(m_.slices.kind[i] == ActivityKind::kAnnotation && m_.Str(m_.slices.name[i]).starts_with("ProfilerStep#"));
  }
  const TraceModel& m_;
  std::vector<uint32_t> skip_;
  std::vector<uint32_t> slices_;
  std::vector<uint32_t> annotations_;
  IntervalSet code_;
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

struct Piece {
  uint32_t annotation;  // the slice it lies inside
  int64_t start, end;
};

// The pieces of [a, b) minus `cover` (sorted, disjoint) at least `min_length` long, appended to `out`.
void AppendUncovered(const std::vector<Interval>& cover, int64_t a, int64_t b, std::vector<Interval>& out,
                     int64_t min_length = 1) {
  auto it = std::upper_bound(cover.begin(), cover.end(), a, [](int64_t t, const Interval& i) { return t < i.end; });
  for (int64_t at = a; at < b; ++it) {
    const int64_t next = it == cover.end() ? b : std::min(std::max(it->start, at), b);
    if (next - at >= min_length) out.push_back({at, next});
    if (it == cover.end()) break;
    at = std::max(at, it->end);
  }
}

// The ranges directly nested in each of one thread's ranges (in start order, a parent before the
// ranges that start with it), by a stack of the open ones: a range's parent is the innermost open
// range that contains it, looked for among the kMaxNestingDepth innermost (a malformed trace's
// overlapping ranges have none).
constexpr size_t kMaxNestingDepth = 64;

std::vector<std::vector<Interval>> NestedRanges(const SliceTable& s, const std::vector<uint32_t>& ranges) {
  std::vector<std::vector<Interval>> children(ranges.size());
  std::vector<size_t> open;  // indices into `ranges`
  for (size_t k = 0; k < ranges.size(); ++k) {
    const int64_t start = s.ts[ranges[k]], end = start + s.dur[ranges[k]];
    while (!open.empty() && s.ts[ranges[open.back()]] + s.dur[ranges[open.back()]] <= start) open.pop_back();
    for (size_t d = 0; d < open.size() && d < kMaxNestingDepth; ++d) {
      const size_t parent = open[open.size() - 1 - d];
      if (s.ts[ranges[parent]] + s.dur[ranges[parent]] >= end) {
        children[parent].push_back({start, end});
        break;
      }
    }
    open.push_back(k);
  }
  return children;
}

// Untraced time inside annotations: each instant of a record_function range in which no op,
// runtime call or Python frame runs on a training thread, and no range nested in it on its thread
// runs (that one's own), up to the first CPU collective in flight; pieces of at least
// kMinUntracedGapNs, in start order. The code that runs there (a sleep, pure Python, I/O in the
// user's `with record_function(...)` block) is named by the block. Cost: the window's gaps of at
// least kMinUntracedGapNs are found once; each range then visits the gaps in it and its children.
std::vector<Piece> UntracedInsideAnnotations(const TrainingSlices& t, const SliceTable& s, const Window& w) {
  std::vector<Interval> gaps;  // a shorter gap has no piece long enough
  AppendUncovered(t.code().intervals(), w.start, w.end, gaps, kMinUntracedGapNs);
  std::unordered_map<uint32_t, std::vector<uint32_t>> on_track;  // track -> its ranges
  for (const uint32_t x : t.annotations()) on_track[s.track[x]].push_back(x);
  std::vector<Piece> out;
  std::vector<Interval> in_range, free;
  for (auto& [track, ranges] : on_track) {
    // A parent before the ranges it holds that start with it (the trace writes a range when it ends).
    std::stable_sort(ranges.begin(), ranges.end(), [&](uint32_t l, uint32_t r) {
      return s.ts[l] != s.ts[r] ? s.ts[l] < s.ts[r] : s.dur[l] > s.dur[r];
    });
    std::vector<std::vector<Interval>> children = NestedRanges(s, ranges);
    for (size_t k = 0; k < ranges.size(); ++k) {
      const uint32_t x = ranges[k];
      const int64_t a = std::max(s.ts[x], w.start), b = std::min(s.ts[x] + s.dur[x], w.end);
      if (b - a < kMinUntracedGapNs) continue;
      in_range.clear();
      auto g = std::upper_bound(gaps.begin(), gaps.end(), a, [](int64_t v, const Interval& i) { return v < i.end; });
      for (; g != gaps.end() && g->start < b; ++g) in_range.push_back({std::max(g->start, a), std::min(g->end, b)});
      if (in_range.empty()) continue;
      const IntervalSet held = IntervalSet::Union(children[k]);  // what they hold is theirs
      for (const Interval& p : in_range) {
        free.clear();
        AppendUncovered(held.intervals(), p.start, p.end, free);
        for (const Interval& f : free) {
          const int64_t untraced_end = BeforeFirstCollective(t.comm(), f.start, f.end);
          if (untraced_end - f.start >= kMinUntracedGapNs) out.push_back({x, f.start, untraced_end});
        }
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Piece& l, const Piece& r) {
    return std::tie(l.start, l.annotation) < std::tie(r.start, r.annotation);
  });
  return out;
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
  // Per track, the outermost slice that ended last on it: a gap is named by the thread that resumes
  // after it (a helper thread's call that happens to end during one step's gap does not rename it).
  std::unordered_map<uint32_t, uint32_t> last_on_track;
  for (size_t k = 0; k < slices.size(); ++k) {
    const uint32_t i = slices[k];
    const int64_t start = s.ts[i], end = s.ts[i] + s.dur[i];
    const int64_t a = std::max(cover_end, w.start), b = std::min(start, w.end);
    if (cover_end != INT64_MIN && b - a >= kMinUntracedGapNs) {
      uint32_t next = i;  // the outermost of the slices that start the covered run
      for (size_t j = k + 1; j < slices.size() && s.ts[slices[j]] == start; ++j) {
        if (s.dur[slices[j]] > s.dur[next]) next = slices[j];
      }
      const auto on_track = last_on_track.find(s.track[next]);
      const uint32_t prev = on_track != last_on_track.end() ? on_track->second : last;
      const uint64_t before = prev == kNoNeighbour ? kNoNeighbour : s.name[prev];
      const uint64_t key = (before << 32) | s.name[next];
      auto [it, inserted] = row_of.try_emplace(key, static_cast<uint32_t>(keys.size()));
      if (inserted) keys.emplace_back(prev, next);
      const int64_t untraced_end = BeforeFirstCollective(training.comm(), a, b);
      if (untraced_end - a >= kMinUntracedGapNs) acc.Add(it->second, a, untraced_end);
    }
    if (end > cover_end) {
      cover_end = end;
      last = i;
    }
    auto [it, inserted] = last_on_track.try_emplace(s.track[i], i);
    if (!inserted && end > s.ts[it->second] + s.dur[it->second]) it->second = i;
  }
  // Rows "inside X" (keys: (kNoNeighbour, an X slice)), after the "between A and B" ones.
  const size_t first_inside = keys.size();
  std::unordered_map<uint32_t, uint32_t> inside_row;  // annotation name -> row
  for (const Piece& p : UntracedInsideAnnotations(training, s, w)) {
    auto [it, inserted] = inside_row.try_emplace(s.name[p.annotation], static_cast<uint32_t>(keys.size()));
    if (inserted) keys.emplace_back(kNoNeighbour, p.annotation);
    acc.Add(it->second, p.start, p.end);
  }
  std::vector<FunctionStat> rows(keys.size());
  acc.Finish(rows);
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto [before, after] = keys[r];
    const std::string name(m.Str(s.name[after]));
    if (r >= first_inside) {
      rows[r].name = "inside " + name;
    } else if (before == kNoNeighbour) {
      rows[r].name = "before " + name;
    } else {
      rows[r].name = "between " + std::string(m.Str(s.name[before])) + " and " + name;
    }
  }
  return FinishTable(std::move(rows), max_rows, w.length());
}

}  // namespace rankscope
