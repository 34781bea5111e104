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
  auto [it, inserted] = ids_.try_emplace(std::move(key), static_cast<SeriesId>(keys_.size()));
  if (inserted) {
    const MetricDef* def = FindMetric(metric);
    keys_.push_back(SeriesKey{std::string(metric), labels, def && def->type == MetricType::kCounter});
  }
  return it->second;
}

const SeriesKey& SeriesTable::Get(SeriesId id) const {
  std::lock_guard lock(mu_);
  return keys_[id];
}

size_t SeriesTable::size() const {
  std::lock_guard lock(mu_);
  return keys_.size();
}

}  // namespace rankscope::telemetry
