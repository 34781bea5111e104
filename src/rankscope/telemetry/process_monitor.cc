#include "rankscope/telemetry/process_monitor.h"

#include <algorithm>
#include <set>

namespace rankscope::telemetry {

bool ParseProcStat(std::string_view text, ProcStat* out) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  // After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss ...
  const auto f = SplitFields(text.substr(close + 1));
  if (f.size() < 22) return false;
  out->ppid = static_cast<int32_t>(ParseU64(f[1]));
  out->cpu_ticks = ParseU64(f[11]) + ParseU64(f[12]);
  out->threads = ParseU64(f[17]);
  out->start_ticks = ParseU64(f[19]);
  out->rss_pages = ParseU64(f[21]);
  return true;
}

Labels WorkerLabels(const Worker& w) {
  return {{"rank", std::to_string(w.rank)}, {"job", w.job}, {"pid", std::to_string(w.pid)}};
}

void ProcessMonitor::RefreshDescendants(const std::vector<Worker>& workers) {
  std::map<int32_t, std::vector<int32_t>> children;
  for (const std::string& entry : ListDir(roots_.proc)) {
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcStat st;
    if (!ReadSmallFile(roots_.proc + "/" + entry + "/stat", &buffer_) || !ParseProcStat(buffer_, &st)) continue;
    children[st.ppid].push_back(static_cast<int32_t>(ParseU64(entry)));
  }
  descendants_.clear();
  for (const Worker& w : workers) {
    std::vector<int32_t>& out = descendants_[w.pid];
    std::vector<int32_t> todo = {w.pid};
    while (!todo.empty()) {
      const int32_t p = todo.back();
      todo.pop_back();
      auto it = children.find(p);
      if (it == children.end()) continue;
      for (int32_t c : it->second) {
        out.push_back(c);
        todo.push_back(c);
      }
    }
  }
}

bool ProcessMonitor::CoresSince(int32_t pid, const ProcStat& st, const std::map<int32_t, Reading>& previous,
                                std::map<int32_t, Reading>* next, double* cores) const {
  (*next)[pid] = Reading{st.start_ticks, st.cpu_ticks};
  auto it = previous.find(pid);
  if (it == previous.end() || it->second.start_ticks != st.start_ticks || st.cpu_ticks < it->second.cpu_ticks) {
    return false;  // first reading, or the pid now belongs to another process
  }
  const double seconds = static_cast<double>(st.cpu_ticks - it->second.cpu_ticks) / static_cast<double>(ClockTicksPerSecond());
  *cores = seconds * 1e9 / static_cast<double>(now_ns_ - before_ns_);
  return true;
}

Status ProcessMonitor::Sample(int64_t mono_ns) {
  before_ns_ = now_ns_;
  now_ns_ = mono_ns;
  const std::vector<Worker> workers = workers_ ? workers_() : std::vector<Worker>{};
  // Rescan for descendants every children_refresh_ns_, at once when a worker registers, and
  // every second while some worker has none yet (DataLoader workers start with the first epoch,
  // a moment after the rank registered).
  std::vector<int32_t> pids;
  bool some_without_children = false;
  for (const Worker& w : workers) {
    pids.push_back(w.pid);
    auto it = descendants_.find(w.pid);
    some_without_children |= it == descendants_.end() || it->second.empty();
  }
  const int64_t since = mono_ns - last_refresh_ns_;
  if (!refreshed_once_ || pids != refreshed_pids_ || since >= children_refresh_ns_ ||
      (some_without_children && since >= 1'000'000'000)) {
    refreshed_pids_ = pids;
    RefreshDescendants(workers);
    last_refresh_ns_ = mono_ns;
    refreshed_once_ = true;
  }
  std::map<int32_t, Reading> next;
  rows_.clear();
  const bool can_rate = now_ns_ > before_ns_ && before_ns_ != 0;
  for (const Worker& w : workers) {
    Row row;
    row.worker = w;
    if (!ReadSmallFile(roots_.proc + "/" + std::to_string(w.pid) + "/stat", &buffer_) ||
        !ParseProcStat(buffer_, &row.stat)) {
      continue;  // exited since the registry saw it
    }
    row.has_rate = CoresSince(w.pid, row.stat, readings_, &next, &row.cpu_cores) && can_rate;
    for (int32_t child : descendants_[w.pid]) {
      ProcStat st;
      if (!ReadSmallFile(roots_.proc + "/" + std::to_string(child) + "/stat", &buffer_) || !ParseProcStat(buffer_, &st)) {
        continue;
      }
      ++row.children;
      double cores = 0;
      if (CoresSince(child, st, readings_, &next, &cores) && can_rate) row.children_cores += cores;
    }
    rows_.push_back(std::move(row));
  }
  readings_ = std::move(next);
  return OkStatus();
}

void ProcessMonitor::Log(Logger& logger) const {
  // Divided, not multiplied by 1/ticks: 255 ticks read back as 2.55, not 2.5500000000000003.
  const double ticks_per_s = static_cast<double>(ClockTicksPerSecond());
  for (const Row& r : rows_) {
    const Labels l = WorkerLabels(r.worker);
    logger.Log("rankscope_process_cpu_seconds_total", l, static_cast<double>(r.stat.cpu_ticks) / ticks_per_s);
    logger.Log("rankscope_process_resident_bytes", l, static_cast<double>(r.stat.rss_pages * PageSize()));
    logger.Log("rankscope_process_threads", l, static_cast<double>(r.stat.threads));
    logger.Log("rankscope_process_children", l, static_cast<double>(r.children));
    if (r.has_rate) {
      logger.Log("rankscope_process_cpu_cores", l, r.cpu_cores);
      logger.Log("rankscope_process_children_cpu_cores", l, r.children_cores);
    }
  }
}

}  // namespace rankscope::telemetry
