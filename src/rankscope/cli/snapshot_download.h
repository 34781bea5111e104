// Fetching a snapshot's files from the daemons of a multi-host job into one local directory, so
// that `rankscope hang` analyses every rank together: `rankscope hang --host A --host B [--id ID]`
// and `rankscope snapshot --analyze` for the directories that are not on this machine. Each
// daemon serves only the files of its part of the snapshot (GET /v1/captures/<id>/files/<name>)
// and only to their user, root or a token holder (docs/security.md); the names and sizes are
// checked here as the daemon checks them (daemon/snapshot_gather.h).
#pragma once

#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/cli/daemon_client.h"

namespace rankscope::cli {

struct SnapshotDownload {
  std::string dir;                 // where the files are
  size_t files = 0;
  std::vector<std::string> lines;  // per host: what came, or why nothing did
};

// Copies snapshot `id` from the hosts `which` (indices into client.hosts(); all when empty)
// into `dest` (created if missing; a file already there is kept, not replaced). Fails when no
// host had a part of it.
StatusOr<SnapshotDownload> DownloadSnapshot(const DaemonClient& client, const std::string& id, const std::string& dest,
                                            std::vector<size_t> which = {});

// The id of the newest hang the hosts detected (GET /v1/hangs), of `job` if given.
StatusOr<std::string> NewestHangSnapshot(const DaemonClient& client, const std::string& job);

}  // namespace rankscope::cli
