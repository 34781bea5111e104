#include "rankscope/telemetry/series.h"

#include "rankscope/telemetry/metric_catalog.h"

namespace rankscope::telemetry {

std::string_view LabelValue(const Labels& labels, std::string_view key) {
  for (const auto& l : labels) {
    if (l.key == key) return l.value;
  }
  return {};
}

SeriesId SeriesTable::Intern(std::string_view metric, const Labels& labels) {
  // Separators that cannot occur in metric names or in the label values we log.
  std::string key(metric);
  for (const auto& l : labels) {
    key += '\x1f';
    key += l.key;
    key += '\x1e';
    key += l.value;
  }
  std::lock_guard lock(mu_);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  if (entries_.size() >= max_series_) {
    ++dropped_;
    return kNoSeries;
  }
  while (next_id_ == kNoSeries || entries_.count(next_id_)) ++next_id_;  // only after 4 billion series
  const SeriesId id = next_id_++;
  const MetricDef* def = FindMetric(metric);
  auto k = std::make_shared<const SeriesKey>(SeriesKey{std::string(metric), labels, def && def->type == MetricType::kCounter});
  ids_.emplace(key, id);
  // Not expired before its first publication.
  entries_.emplace(id, Entry{std::move(k), std::move(key), INT64_MAX});
  return id;
}

std::shared_ptr<const SeriesKey> SeriesTable::Get(SeriesId id) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.key;
}

bool SeriesTable::IsCounter(SeriesId id) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  return it != entries_.end() && it->second.key->counter;
}

size_t SeriesTable::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

size_t SeriesTable::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void SeriesTable::MarkUsed(const std::vector<SeriesId>& ids, int64_t unix_ns) {
  std::lock_guard lock(mu_);
  for (SeriesId id : ids) {
    if (auto it = entries_.find(id); it != entries_.end()) it->second.last_used_ns = unix_ns;
  }
}

size_t SeriesTable::ExpireUnused(int64_t before_ns, const std::unordered_set<SeriesId>& keep) {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.last_used_ns < before_ns && !keep.count(it->first)) {
      ids_.erase(it->second.text);
      it = entries_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

}  // namespace rankscope::telemetry
