// Gathering one snapshot from another host's daemon: the files it lists for the capture
// (GET /v1/captures/<id>: "files") fetched over its HTTP API (GET /v1/captures/<id>/files/<name>)
// and stored beside the local ones, so that every rank of a multi-host job is analysed together
// (docs/hang.md). The daemon gathers into its own capture directory (hang_watch.cc), the CLI
// into a directory of the user's (`rankscope hang --host ...`).
//
// Only the names a snapshot has are taken — rank<R>.stacks.txt, rank<R>.worker<K>.stacks.txt,
// rank<R>.flightrecorder, and the host's capture.manifest, stored as capture.<host>.manifest —
// each within its size limit, and never one whose name is already stored (two hosts claiming a
// rank); anything else the host lists is skipped and said so.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

// GET `path` from the host, bytes to `sink`, at most `max_bytes`.
using FetchFile = std::function<Status(const std::string& path, size_t max_bytes,
                                       const std::function<Status(std::string_view)>& sink)>;
// Creates `name` (refusing an existing one) and fills it through `write`.
using StoreFile = std::function<Status(const std::string& name, const std::function<Status(int fd)>& write)>;

struct GatherResult {
  std::vector<std::string> stored;  // names as stored here
  std::vector<int64_t> ranks;       // ranks whose stacks were stored
  std::vector<std::string> errors;  // files not gathered, and why
  uint64_t bytes = 0;
};

// The size limit of a snapshot file of this name, or nullopt for a name a snapshot does not have.
std::optional<size_t> SnapshotFileLimit(std::string_view name);
// capture.<label>.manifest, the label made a safe name ("node7:8383" -> "node7-8383").
std::string HostManifestName(std::string_view host_label);

// `capture`: the host's description of the capture (its "id" and "files"); `host_label` names
// the host in messages and in its manifest's name.
GatherResult GatherSnapshot(const nlohmann::json& capture, const std::string& host_label, const FetchFile& fetch,
                            const StoreFile& store, uint64_t max_total_bytes = uint64_t{4} << 30);

}  // namespace rankscope::daemon
