// Series: one metric name plus its labels (e.g. rankscope_cpu_core_busy_ratio{cpu="3"}), and the
// table that interns them to small ids so that samples in the ring buffer are 16 bytes each.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rankscope::telemetry {

struct Label {
  std::string key, value;
  bool operator==(const Label&) const = default;
};
// In the order the monitor logs them; the host label is added on output, never stored.
using Labels = std::vector<Label>;

// The value of `key` in `labels`, or "" when absent.
std::string_view LabelValue(const Labels& labels, std::string_view key);

struct SeriesKey {
  std::string metric;
  Labels labels;
  bool counter = false;  // a cumulative counter (kept for /metrics, not in the ring buffer)
};

using SeriesId = uint32_t;
// What Intern returns when the table is full: the value is dropped, never stored.
inline constexpr SeriesId kNoSeries = UINT32_MAX;

// Bounded, and series expire: a process that has gone (and its labels with it) stops being
// sampled, and once no sample of a series is left in the ring buffer the store forgets it
// (ExpireUnused). Ids are not reused while the daemon runs (about 100 bytes per live series; a
// worker process adds about ten).
class SeriesTable {
 public:
  explicit SeriesTable(size_t max_series = 100'000) : max_series_(max_series) {}

  // kNoSeries when `max_series` series are live and this would be a new one.
  SeriesId Intern(std::string_view metric, const Labels& labels);
  // The key of a live series, or null once it has expired. The pointer keeps it alive.
  std::shared_ptr<const SeriesKey> Get(SeriesId id) const;
  bool IsCounter(SeriesId id) const;
  size_t size() const;
  size_t dropped() const;  // values not stored because the table was full

  // Records that these series have a sample at `unix_ns`.
  void MarkUsed(const std::vector<SeriesId>& ids, int64_t unix_ns);
  // Forgets every series whose last sample is older than `before_ns`, except those in `keep`.
  // Returns how many were forgotten.
  size_t ExpireUnused(int64_t before_ns, const std::unordered_set<SeriesId>& keep);

 private:
  struct Entry {
    std::shared_ptr<const SeriesKey> key;
    std::string text;   // the interned form, to erase it from ids_
    int64_t last_used_ns = 0;
  };
  const size_t max_series_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, SeriesId> ids_;
  std::unordered_map<SeriesId, Entry> entries_;
  SeriesId next_id_ = 0;
  size_t dropped_ = 0;
};

}  // namespace rankscope::telemetry
