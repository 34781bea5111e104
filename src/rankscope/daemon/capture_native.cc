// CaptureManager's pass over snapshot targets whose collector has not answered: their stacks
// are taken from outside with py-spy (native_stacks.h). Runs on the watcher thread; py-spy
// runs without the lock held.
//
// py-spy ptraces the process as root: it is run only against the registered process itself —
// the same pid and start time, still running as the capture's user (real, effective, saved and
// file system uids) — checked right before and again after the dump, whose output is dropped
// if the process changed meanwhile (it exited and its pid was reused, or it exec'd a setuid
// program).
#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/native_stacks.h"

namespace rankscope::daemon {
namespace {

struct NativeJob {
  std::string capture_id;
  int32_t pid = 0;
  uint64_t start_ticks = 0;
  RunAs as;  // the capture's user
  std::string file;  // <base>.stacks.txt
  NativeStackHeader header;
  StatusOr<std::string> text = std::string();
};

}  // namespace

void CaptureManager::NativeStacksPass(std::unique_lock<std::mutex>& lock) {
  if (options_.py_spy.empty()) return;
  const auto now = Clock::now();
  std::vector<NativeJob> jobs;
  for (auto& c : captures_) {
    if (c.kind != Capture::Kind::kSnapshot) continue;
    for (auto& t : c.targets) {
      if (t.state != TargetState::kRunning || t.stacks_in || t.native_tried || now - t.delivered_at < options_.native_after) {
        continue;
      }
      t.native_tried = true;
      NativeJob j;
      j.capture_id = c.id;
      j.pid = t.pid;
      j.start_ticks = t.start_ticks;
      j.as = {c.owner.uid, c.owner.gid};
      j.file = t.BaseName() + ".stacks.txt";
      j.header.pid = t.pid;
      j.header.rank = t.rank;
      j.header.job = c.job;
      j.header.host = options_.host;
      j.header.capture = c.id;
      j.header.because = fmt::format("the collector did not answer within {} s", options_.native_after.count());
      jobs.push_back(std::move(j));
    }
  }
  if (jobs.empty()) return;
  lock.unlock();
  for (auto& j : jobs) {
    if (auto p = registry_->Get(j.pid)) {
      j.header.world_size = p->identity.world_size;
      j.header.steps_completed = p->step;
      j.header.step_ms = p->step_ms;
    }
    j.text = TakeStacksOf(options_.py_spy, j.header, j.start_ticks, j.as, options_.native_timeout);
  }
  lock.lock();
  for (auto& j : jobs) {
    Capture* c = FindLocked(j.capture_id);
    CaptureTarget* t = c ? c->Find(j.pid) : nullptr;
    if (!t || t->finished() || t->stacks_in) continue;  // the collector answered meanwhile
    if (!j.text.ok()) {
      t->state = TargetState::kFailed;
      t->detail = fmt::format("{}, and py-spy could not take its stack: {}", j.header.because, j.text.status().message());
      continue;
    }
    // Through the capture directory's descriptor, as every file the daemon writes there.
    auto dir = out_->OpenCaptureDir(c->job, c->id);
    if (Status s = dir.ok() ? dir->WriteFile(j.file, *j.text, c->owner) : dir.status(); !s.ok()) {
      t->state = TargetState::kFailed;
      t->detail = fmt::format("{}; its stack from py-spy could not be written: {}", j.header.because, s.message());
      continue;
    }
    t->stacks_in = true;  // done once its DataLoader is looked at
    t->file = (c->dir / j.file).string();
    t->detail = fmt::format("stack taken from outside with py-spy: {} (a thread holds the GIL?)", j.header.because);
  }
}

}  // namespace rankscope::daemon
