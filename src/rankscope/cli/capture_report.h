// Shared by `rankscope trace` and `rankscope snapshot`: start a capture on every host, wait for
// it, and say per host and per rank what was produced — or why not.
#pragma once

#include <string>
#include <vector>

#include "rankscope/cli/daemon_client.h"

namespace rankscope::cli {

struct CaptureOutcome {
  std::vector<HostReply> hosts;   // the latest capture JSON per host (or the host's error)
  int expected = 0;               // processes the capture went to
  int produced = 0;               // files produced
  bool all_finished = false;
  std::vector<std::string> dirs;  // capture directories that received files
};

// Polls GET /v1/captures/<id> on every host that accepted until all are finished or the
// timeout passes. `started` are the replies to the POST.
CaptureOutcome WaitForCapture(const DaemonClient& client, const std::string& id, std::vector<HostReply> started,
                              int timeout_s);
CaptureOutcome Summarize(std::vector<HostReply> replies);

// Human-readable report; `what` is "trace" or "snapshot".
void PrintCaptureReport(const CaptureOutcome& outcome, const std::string& what, bool waited);
nlohmann::json CaptureOutcomeToJson(const CaptureOutcome& outcome);

}  // namespace rankscope::cli
