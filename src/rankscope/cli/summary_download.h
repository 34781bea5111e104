// Gathering a trace capture's rank summaries over HTTP (GET /v1/captures/<id>/summaries and
// /files/<name>.rsum, docs/scale.md): `rankscope trace --analyze` does this for the capture
// directories that are not on this machine, so that only summaries travel and the raw traces
// stay on the nodes. Waits (up to the client's timeout) for the daemons still making them.
#pragma once

#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/cli/daemon_client.h"

namespace rankscope::cli {

struct SummaryDownload {
  std::string dir;                 // where the summaries are
  size_t files = 0;
  std::vector<std::string> lines;  // per host: what came, or why nothing did
};

// Copies the summaries of capture `id` from every host into `dest` (created if missing; a file
// already there is kept). Fails when no host had one.
StatusOr<SummaryDownload> DownloadSummaries(const DaemonClient& client, const std::string& id, const std::string& dest);

}  // namespace rankscope::cli
