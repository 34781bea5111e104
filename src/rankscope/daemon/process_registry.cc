#include "rankscope/daemon/process_registry.h"

#include <algorithm>

namespace rankscope::daemon {
namespace {

constexpr size_t kMaxJobName = 100;  // leaves room for ".uid<U>" within a safe name's 128

}  // namespace

void ProcessRegistry::PruneLocked(Clock::time_point now) {
  for (auto it = procs_.begin(); it != procs_.end();) {
    const ProcessInfo& p = it->second;
    if (!ProcessAlive(p.pid, p.identity.start_ticks, proc_root_)) {
      ++exited_total_;
      it = procs_.erase(it);
    } else if (now - p.last_seen > expiry_ && !(p.kinds & kTrackerClient)) {
      ++expired_total_;
      it = procs_.erase(it);
    } else {
      ++it;
    }
  }
}

Status ProcessRegistry::AdmitLocked(const ProcIdentity& identity) {
  // Entries of processes that exited since the last List() must not hold a quota.
  if (procs_.size() >= limits_.max_processes || procs_.size() >= limits_.max_per_uid) PruneLocked(Clock::now());
  if (procs_.size() >= limits_.max_processes) {
    ++refused_total_;
    return OutOfRange("{} processes are registered, the daemon's limit", procs_.size());
  }
  const size_t mine = std::count_if(procs_.begin(), procs_.end(),
                                    [&](const auto& kv) { return kv.second.identity.uid == identity.uid; });
  if (mine >= limits_.max_per_uid) {
    ++refused_total_;
    return OutOfRange("uid {} already has {} processes registered, the per-user limit", identity.uid, mine);
  }
  return OkStatus();
}

std::string ProcessRegistry::JobForLocked(const std::string& job, uid_t uid, int32_t pid) const {
  std::string name = job.substr(0, kMaxJobName);
  for (const auto& [other_pid, p] : procs_) {
    if (other_pid != pid && p.identity.job == name && p.identity.uid != uid) return fmt::format("{}.uid{}", name, uid);
  }
  return name;
}

ProcessInfo* ProcessRegistry::FindLiveLocked(int32_t pid, uint64_t start_ticks) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return nullptr;
  if (start_ticks != 0 && it->second.identity.start_ticks != 0 && it->second.identity.start_ticks != start_ticks) {
    procs_.erase(it);  // the pid now names another process
    ++exited_total_;
    return nullptr;
  }
  return &it->second;
}

StatusOr<bool> ProcessRegistry::SeenKineto(int32_t pid, int32_t type, int64_t job_id, const std::vector<int32_t>& pids,
                                           const ProcIdentity& identity) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  ProcessInfo* p = FindLiveLocked(pid, identity.start_ticks);
  const bool inserted = p == nullptr;
  if (inserted) {
    RANKSCOPE_RETURN_IF_ERROR(AdmitLocked(identity));
    p = &procs_[pid];
    p->pid = pid;
    p->first_seen = now;
    p->identity = identity;
    p->identity.job = JobForLocked(identity.job, identity.uid, pid);
  }
  p->kinds |= kKinetoClient;
  p->kineto_type = type;
  p->slurm_job_id = job_id;
  p->ancestors.assign(pids.size() > 1 ? pids.begin() + 1 : pids.end(), pids.end());
  p->last_seen = now;
  return inserted;
}

StatusOr<bool> ProcessRegistry::SeenCollector(const ProcessInfo& info) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  ProcessInfo* p = FindLiveLocked(info.pid, info.identity.start_ticks);
  const bool inserted = p == nullptr;
  if (inserted) {
    RANKSCOPE_RETURN_IF_ERROR(AdmitLocked(info.identity));
    p = &procs_[info.pid];
    p->pid = info.pid;
    p->first_seen = now;
  }
  if (!(p->kinds & kTrackerClient)) {
    // The collector's first word on who it is: it knows its rank and job better than /proc
    // (it can be given RANKSCOPE_JOB late). Fixed from then on, so that a process cannot
    // churn through job names (each would be a new telemetry series).
    const ProcIdentity kernel = inserted ? info.identity : p->identity;
    p->identity = info.identity;
    p->identity.uid = kernel.uid;
    p->identity.gid = kernel.gid;
    p->identity.start_ticks = info.identity.start_ticks ? info.identity.start_ticks : kernel.start_ticks;
    p->identity.job = JobForLocked(info.identity.job, p->identity.uid, info.pid);
  }
  p->kinds |= kTrackerClient;
  p->collector_address = info.collector_address;
  p->step = info.step;
  p->step_ms = info.step_ms;
  p->busy = info.busy;
  p->host = info.host;
  p->fr_pending_s = info.fr_pending_s;
  p->last_seen = now;
  return inserted;
}

bool ProcessRegistry::HasRoomFor(uid_t uid) {
  std::lock_guard lock(mu_);
  if (procs_.size() < limits_.max_per_uid && procs_.size() < limits_.max_processes) return true;
  PruneLocked(Clock::now());
  const size_t mine = std::count_if(procs_.begin(), procs_.end(), [&](const auto& kv) { return kv.second.identity.uid == uid; });
  return procs_.size() < limits_.max_processes && mine < limits_.max_per_uid;
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
  PruneLocked(Clock::now());
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
    j["host"] = p.host;
  }
  if (p.kinds & kKinetoClient) {
    j["kineto_profiler_busy"] = (p.kineto_type & 2) == 0;
    j["slurm_job_id"] = p.slurm_job_id;
  }
  return j;
}

}  // namespace rankscope::daemon
