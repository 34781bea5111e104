// Series: one metric name plus its labels (e.g. rankscope_cpu_core_busy_ratio{cpu="3"}), and the
// table that interns them to small ids so that samples in the ring buffer are 16 bytes each.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
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

// Append-only: ids stay valid for the life of the daemon (about 100 bytes per series; a new
// worker process adds about ten).
class SeriesTable {
 public:
  SeriesId Intern(std::string_view metric, const Labels& labels);
  // The returned reference stays valid (entries are never moved or removed).
  const SeriesKey& Get(SeriesId id) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, SeriesId> ids_;
  std::deque<SeriesKey> keys_;
};

}  // namespace rankscope::telemetry
