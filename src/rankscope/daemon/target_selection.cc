#include "rankscope/daemon/target_selection.h"

#include <algorithm>
#include <map>
#include <set>

#include "rankscope/base/utf8.h"

namespace rankscope::daemon {
namespace {

std::string DescribeJobs(const std::vector<ProcessInfo>& procs) {
  std::map<std::string, int> per_job;
  for (const auto& p : procs) per_job[p.identity.job]++;
  std::string out;
  for (const auto& [job, n] : per_job) out += fmt::format("{}{} ({} process{})", out.empty() ? "" : ", ", job, n, n == 1 ? "" : "es");
  return out;
}

std::string Who(const ProcessInfo& p) {
  return fmt::format("pid {} ({})", p.pid, p.identity.command.empty() ? "?" : ClipUtf8(p.identity.command, 60));
}

}  // namespace

StatusOr<SelectedTargets> SelectTargets(const std::vector<ProcessInfo>& all, const Selection& selection,
                                        bool need_collector, const Requester& who) {
  if (all.empty()) {
    return NotFound("no training process is registered with this daemon (start the job with the rankscope "
                    "collector, `rankscope run -- ...`, or KINETO_USE_DAEMON=1)");
  }
  std::vector<ProcessInfo> registered;
  for (const auto& p : all) {
    if (who.may_capture(p.identity.uid)) registered.push_back(p);
  }
  if (registered.empty()) {
    return NotFound("none of the {} registered processes belongs to you (uid {}): a local user can trace or "
                    "snapshot only their own processes (root can capture any)", all.size(), *who.local_uid);
  }
  SelectedTargets out;
  std::vector<ProcessInfo> in_job;
  for (const auto& p : registered) {
    if (selection.job.empty() || p.identity.job == selection.job) in_job.push_back(p);
  }
  if (in_job.empty()) {
    return NotFound("no process of job '{}' is registered here; jobs here: {}", selection.job, DescribeJobs(registered));
  }
  // Launchers (no RANK) only count when the job has no ranked process at all (a plain
  // single-process job).
  const bool any_ranked = std::any_of(in_job.begin(), in_job.end(), [](const ProcessInfo& p) { return p.is_rank(); });
  std::vector<ProcessInfo> candidates;
  for (const auto& p : in_job) {
    if (any_ranked && !p.is_rank()) {
      out.notes.push_back(fmt::format("{} has no RANK in its environment (a launcher?): left out", Who(p)));
    } else if (need_collector && !(p.kinds & kTrackerClient)) {
      out.notes.push_back(fmt::format("{} runs plain PyTorch (Kineto mode) without the rankscope collector: "
                                      "no stack snapshot possible; start it with `rankscope run` or a Tracker", Who(p)));
    } else {
      candidates.push_back(p);
    }
  }
  std::set<std::string> jobs;
  for (const auto& p : candidates) jobs.insert(p.identity.job);
  if (jobs.size() > 1) {
    return FailedPrecondition("several jobs are registered here: {}; choose one with --job", DescribeJobs(candidates));
  }
  if (!selection.ranks.empty()) {
    const std::set<int32_t> wanted(selection.ranks.begin(), selection.ranks.end());
    std::vector<ProcessInfo> kept;
    for (const auto& p : candidates) {
      if (wanted.count(p.identity.rank)) kept.push_back(p);
    }
    if (kept.empty() && !candidates.empty()) {
      std::string here;
      for (const auto& p : candidates) here += fmt::format("{}{}", here.empty() ? "" : ",", p.identity.rank);
      return NotFound("none of the requested ranks runs on this host (ranks here: {})", here);
    }
    candidates = std::move(kept);
  }
  if (candidates.empty()) {
    std::string why;
    for (const auto& n : out.notes) why += "; " + n;
    return NotFound("no process on this host can take this request{}", why);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.identity.rank < b.identity.rank; });
  out.job = candidates.front().identity.job;
  out.processes = std::move(candidates);
  return out;
}

}  // namespace rankscope::daemon
