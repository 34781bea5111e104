// Which registered processes a request applies to, and a sentence for each one left out.
//
// Real ranks are chosen by RANK in the process environment (or the collector's report), so
// launchers that import torch (torchrun's agent polls Kineto too) never take a slot.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "rankscope/daemon/capture_spec.h"
#include "rankscope/daemon/process_registry.h"

namespace rankscope::daemon {

struct SelectedTargets {
  std::string job;
  std::vector<ProcessInfo> processes;
  std::vector<std::string> notes;  // left out, and why
};

// Who asks for a capture. A local user may capture only their own processes (their traces and
// stacks land in a directory they own, and profiling slows a job); root, a holder of the API
// token from elsewhere, and the daemon itself (auto-trigger) may capture any.
struct Requester {
  std::optional<uid_t> local_uid;  // the kernel's uid of the local peer; nullopt: unrestricted

  bool may_capture(uid_t owner) const { return !local_uid || *local_uid == 0 || *local_uid == owner; }
};

// `need_collector`: snapshots need the rankscope collector (Kineto clients cannot do them).
// Fails with a user-facing reason when nothing matches.
StatusOr<SelectedTargets> SelectTargets(const std::vector<ProcessInfo>& registered, const Selection& selection,
                                        bool need_collector, const Requester& who = {});

}  // namespace rankscope::daemon
