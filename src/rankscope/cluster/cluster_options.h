// The knobs of cluster diagnosis, their defaults, and where each is used. Every value is printed
// in the report (`cluster.options`), so a finding can always be traced back to its thresholds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <optional>

#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/layout.h"

namespace rankscope {

// Robust outlier rule (robust_rule.h): a value is abnormal when it exceeds the median of its
// peers by more than k·1.4826·MAD *and* by more than `margin` × the median.
inline constexpr double kDefaultOutlierK = 3.0;
inline constexpr double kDefaultOutlierMargin = 0.10;

// A finding (a slow rank, a slow function, ...) is reported only when it is worth at least this
// share of the median step time: below it, the deviation is too small to act on and, on shared
// machines, within scheduling noise.
inline constexpr double kDefaultMinCostShare = 0.02;

// Instances of collectives kept in the report's per-instance arrival table; the rest are counted.
inline constexpr size_t kDefaultMaxReportedInstances = 2000;

struct ClusterOptions {
  double outlier_k = kDefaultOutlierK;
  double outlier_margin = kDefaultOutlierMargin;
  double min_cost_share = kDefaultMinCostShare;
  size_t max_reported_instances = kDefaultMaxReportedInstances;
  // rank -> host from `--hosts FILE`; overrides the host names in the traces when not empty.
  std::map<int64_t, std::string> hosts;
  std::string hosts_source;  // the file, for the report; "" when the traces' names are used
  // rank -> host found beside the traces (capture manifest, telemetry sidecar): used for the
  // ranks whose trace names no host (engine/capture_hosts.h).
  std::map<int64_t, RankHost> capture_hosts;
  // `--layout`: the job's parallel layout when the traces do not say it (cluster/layout.h).
  std::optional<LayoutSpec> layout;
};

}  // namespace rankscope
