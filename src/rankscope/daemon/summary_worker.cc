#include "rankscope/daemon/summary_worker.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "rankscope/engine/summarize.h"
#include "rankscope/summary/summary_file.h"

namespace rankscope::daemon {

SummaryWorker::SummaryWorker(unsigned threads, Writer write) : write_(std::move(write)) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

SummaryWorker::~SummaryWorker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void SummaryWorker::OnSaved(const Capture& c) {
  if (threads_.empty() || c.kind != Capture::Kind::kTrace) return;
  std::lock_guard lock(mu_);
  for (const CaptureTarget& t : c.targets) {
    if (t.state != TargetState::kDone || t.file.empty()) continue;
    queue_.push_back({c.id, t.file, std::filesystem::path(t.file).filename().string()});
    ++progress_[c.id].pending;
  }
  cv_.notify_all();
}

nlohmann::json SummaryWorker::Progress(const std::string& capture_id) const {
  std::lock_guard lock(mu_);
  nlohmann::json failed = nlohmann::json::array();
  size_t pending = 0;
  if (auto it = progress_.find(capture_id); it != progress_.end()) {
    pending = it->second.pending;
    for (const auto& [file, error] : it->second.failed) failed.push_back({{"file", file}, {"error", error}});
  }
  return {{"pending", pending}, {"failed", failed}, {"threads", threads_.size()}};
}

void SummaryWorker::Run() {
  // Linux applies a nice value to one thread when given its thread id: the analysis yields to
  // every ordinary process (training, data loading) on the node.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Summarize(job);
    lock.lock();
  }
}

void SummaryWorker::Summarize(const Job& job) {
  AnalyzeOptions options;
  options.threads = 1;
  auto file = SummarizeTrace(job.trace_path, options);
  Status s = file.ok() ? write_(job.capture_id, job.trace_name + std::string(summary::kSummarySuffix),
                                summary::EncodeSummary(*file))
                       : file.status();
  std::lock_guard lock(mu_);
  CaptureProgress& p = progress_[job.capture_id];
  --p.pending;
  if (!s.ok()) {
    p.failed.emplace_back(job.trace_name, s.message());
    fmt::print(stderr, "rankscoped: capture {}: no summary of {}: {}\n", job.capture_id, job.trace_name, s.message());
  }
}

}  // namespace rankscope::daemon
