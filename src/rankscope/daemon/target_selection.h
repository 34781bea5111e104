// Which registered processes a request applies to, and a sentence for each one left out.
//
// Real ranks are chosen by RANK in the process environment (or the collector's report), so
// launchers that import torch (torchrun's agent polls Kineto too) never take a slot.
#pragma once

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

// `need_collector`: snapshots need the rankscope collector (Kineto clients cannot do them).
// Fails with a user-facing reason when nothing matches.
StatusOr<SelectedTargets> SelectTargets(const std::vector<ProcessInfo>& registered, const Selection& selection,
                                        bool need_collector);

}  // namespace rankscope::daemon
