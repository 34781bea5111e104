#include "rankscope/daemon/process_registry.h"

namespace rankscope::daemon {

void ProcessRegistry::ExpireLocked(Clock::time_point now) {
  for (auto it = procs_.begin(); it != procs_.end();) {
    // A collector that went silent while its process lives on is stuck (a thread holds the
    // GIL): it stays, so that a hang snapshot reaches it from outside (docs/hang.md).
    const ProcessInfo& p = it->second;
    const bool stuck_alive = (p.kinds & kTrackerClient) && p.start_ticks > 0 &&
                             ProcessStartTicks(p.pid) == p.start_ticks;
    if (now - it->second.last_seen > expiry_ && !stuck_alive) {
      it = procs_.erase(it);
      ++expired_total_;
    } else {
      ++it;
    }
  }
}

bool ProcessRegistry::SeenKineto(int32_t pid, int32_t type, int64_t job_id, const std::vector<int32_t>& pids,
                                 const ProcIdentity& identity) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  ExpireLocked(now);
  auto [it, inserted] = procs_.try_emplace(pid);
  ProcessInfo& p = it->second;
  if (inserted) {
    p.pid = pid;
    p.first_seen = now;
    p.identity = identity;
  }
  p.kinds |= kKinetoClient;
  p.kineto_type = type;
  p.slurm_job_id = job_id;
  p.ancestors.assign(pids.size() > 1 ? pids.begin() + 1 : pids.end(), pids.end());
  p.last_seen = now;
  return inserted;
}

bool ProcessRegistry::SeenCollector(const ProcessInfo& info) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  ExpireLocked(now);
  auto [it, inserted] = procs_.try_emplace(info.pid);
  ProcessInfo& p = it->second;
  if (inserted) p.first_seen = now;
  const int64_t start_ticks = inserted ? ProcessStartTicks(info.pid) : p.start_ticks;
  // The collector knows its rank and job better than /proc (it can be told RANKSCOPE_JOB late).
  const uint8_t kinds = p.kinds;
  const int32_t kineto_type = p.kineto_type;
  const auto first_seen = p.first_seen;
  const auto ancestors = p.ancestors;
  p = info;
  p.kinds = kinds | kTrackerClient;
  p.kineto_type = kineto_type;
  p.first_seen = first_seen;
  p.ancestors = ancestors;
  p.start_ticks = start_ticks;
  p.last_seen = now;
  return inserted;
}

bool ProcessRegistry::Contains(int32_t pid) {
  std::lock_guard lock(mu_);
  return procs_.count(pid) > 0;
}

std::optional<ProcessInfo> ProcessRegistry::Get(int32_t pid) {
  std::lock_guard lock(mu_);
  auto it = procs_.find(pid);
  if (it == procs_.end()) return std::nullopt;
  return it->second;
}

void ProcessRegistry::Remove(int32_t pid) {
  std::lock_guard lock(mu_);
  procs_.erase(pid);
}

std::vector<ProcessInfo> ProcessRegistry::List() {
  std::lock_guard lock(mu_);
  ExpireLocked(Clock::now());
  std::vector<ProcessInfo> out;
  out.reserve(procs_.size());
  for (const auto& [pid, p] : procs_) out.push_back(p);
  return out;
}

nlohmann::json ToJson(const ProcessInfo& p, Clock::time_point now) {
  nlohmann::json kinds = nlohmann::json::array();
  if (p.kinds & kTrackerClient) kinds.push_back("collector");
  if (p.kinds & kKinetoClient) kinds.push_back("kineto");
  const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_seen).count();
  nlohmann::json j = {{"pid", p.pid}, {"rank", p.identity.rank}, {"local_rank", p.identity.local_rank},
                      {"world_size", p.identity.world_size}, {"job", p.identity.job}, {"uid", p.identity.uid},
                      {"command", p.identity.command}, {"clients", kinds}, {"last_seen_ms_ago", age}};
  if (p.kinds & kTrackerClient) {
    if (p.fr_pending_s >= 0) j["fr_pending_s"] = p.fr_pending_s;
    j["step"] = p.step;
    j["step_ms"] = p.step_ms;
    j["busy"] = p.busy;
  }
  if (p.kinds & kKinetoClient) {
    j["kineto_profiler_busy"] = (p.kineto_type & 2) == 0;
    j["slurm_job_id"] = p.slurm_job_id;
  }
  return j;
}

}  // namespace rankscope::daemon
