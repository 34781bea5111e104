// CaptureManager's pass over snapshot targets whose stacks are in: when a rank's main thread
// waits on its DataLoader, the rank is stuck where its worker processes are, so their stacks are
// taken too, with py-spy, into rank<R>.worker<K>.stacks.txt (docs/hang.md). Runs on the watcher
// thread; files are read and py-spy runs without the lock held.
//
// Which processes: the children of the registered rank process (the kernel's parent pids), at
// most `max_dataloader_workers`, each running as the capture's user before and after its dump
// and still a child of the rank (TakeStacksOf); a dump is kept only if it is a DataLoader
// worker's (its loop is in torch/utils/data/_utils/worker.py). The rank's stacks file is read
// through the capture directory's descriptor, only if it is a regular file of the capture's user.
// A rank's workers get at most twice py-spy's timeout in all: children that make py-spy wait
// cannot hold the watcher thread (and every other capture's deadlines) for long.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/native_stacks.h"
#include "rankscope/hang/snapshot_files.h"
#include "rankscope/hang/thread_roles.h"

namespace rankscope::daemon {
namespace {

struct WorkerJob {
  std::string capture_id, job;
  int32_t pid = 0;
  int32_t rank = -1;
  FileOwner owner;
  std::string stacks_file;  // the rank's, in the capture directory
  // results
  std::vector<std::string> worker_files;
  std::string note;
};

StatusOr<std::string> ReadAll(int fd, size_t max_bytes) {
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("read: {}", std::strerror(errno));
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > max_bytes) return OutOfRange("more than {} MiB", max_bytes >> 20);
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

void CaptureManager::WorkerStacksPass(std::unique_lock<std::mutex>& lock) {
  std::vector<WorkerJob> jobs;
  for (const auto& c : captures_) {
    if (c.kind != Capture::Kind::kSnapshot) continue;
    for (const auto& t : c.targets) {
      if (t.state != TargetState::kRunning || !t.stacks_in) continue;
      jobs.push_back({c.id, c.job, t.pid, t.rank, c.owner, t.StacksFileName(), {}, ""});
    }
  }
  if (jobs.empty()) return;
  lock.unlock();
  for (auto& j : jobs) TakeWorkerStacks(j.capture_id, j.job, j.pid, j.rank, j.owner, j.stacks_file, &j.worker_files, &j.note);
  lock.lock();
  for (auto& j : jobs) {
    Capture* c = FindLocked(j.capture_id);
    CaptureTarget* t = c ? c->Find(j.pid) : nullptr;
    if (!t || t->finished()) continue;
    t->state = TargetState::kDone;
    t->worker_files = std::move(j.worker_files);
    if (!j.note.empty()) t->detail += (t->detail.empty() ? "" : "; ") + j.note;
  }
}

void CaptureManager::TakeWorkerStacks(const std::string& capture_id, const std::string& job, int32_t pid, int32_t rank,
                                      const FileOwner& owner, const std::string& stacks_file,
                                      std::vector<std::string>* worker_files, std::string* note) const {
  auto dir = out_->OpenCaptureDir(job, capture_id);
  if (!dir.ok()) return;
  auto fd = dir->OpenOwnedFile(stacks_file, owner.uid);
  if (!fd.ok()) return;  // the analysis says what is wrong with it
  auto text = ReadAll(fd->get(), hang::kMaxStacksFileBytes);
  if (!text.ok()) return;
  auto stacks = hang::ParseStacks(*text, stacks_file);
  if (!stacks.ok() || !hang::MainThreadInDataLoader(*stacks)) return;
  if (options_.py_spy.empty()) {
    *note = "its main thread waits on its DataLoader; without py-spy its workers' stacks were not taken";
    return;
  }
  const std::vector<int32_t> children = ChildProcesses(pid, 4 * options_.max_dataloader_workers);
  size_t others = 0, failed = 0, untried = 0;
  const auto deadline = std::chrono::steady_clock::now() + 2 * options_.native_timeout;
  for (int32_t child : children) {
    if (worker_files->size() >= options_.max_dataloader_workers) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ++untried;
      continue;
    }
    const uint64_t start_ticks = ProcessStartTicks(child);
    if (start_ticks == 0 || ParentPid(child) != pid) continue;
    NativeStackHeader h;
    h.pid = child;
    h.parent_pid = pid;
    h.rank = rank;
    h.job = job;
    h.host = options_.host;
    h.capture = capture_id;
    h.because = fmt::format("a DataLoader worker of rank {}, whose main thread waits on its DataLoader", rank);
    auto worker = TakeStacksOf(options_.py_spy, h, start_ticks, {owner.uid, owner.gid}, options_.native_timeout);
    if (worker.ok() && ParentPid(child) != pid) worker = FailedPrecondition("no longer a child of the rank");
    if (!worker.ok()) {
      ++failed;
      continue;
    }
    auto parsed = hang::ParseStacks(*worker, "py-spy");
    if (!parsed.ok() || !hang::IsDataLoaderWorker(*parsed)) {
      ++others;  // another child (a compile worker, a forkserver): not what the rank waits for
      continue;
    }
    const std::string name = hang::WorkerStacksFileName(rank, static_cast<int64_t>(worker_files->size()));
    if (dir->WriteFile(name, *worker, owner).ok()) worker_files->push_back(name);
  }
  *note = fmt::format("its main thread waits on its DataLoader: the stacks of {} worker process{} taken with py-spy{}{}{}",
                      worker_files->size(), worker_files->size() == 1 ? "" : "es",
                      failed ? fmt::format(" ({} could not be taken)", failed) : "",
                      others ? fmt::format(" ({} other child process{} left out)", others, others == 1 ? "" : "es") : "",
                      untried ? fmt::format(" ({} not tried: {} s spent)", untried, 2 * options_.native_timeout.count()) : "");
}

}  // namespace rankscope::daemon
