#include "rankscope/cli/snapshot_download.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rankscope/daemon/dir_handle.h"
#include "rankscope/daemon/peers.h"
#include "rankscope/daemon/snapshot_gather.h"

namespace rankscope::cli {
namespace {

std::string Text(const nlohmann::json& j, const char* key) {
  auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

StatusOr<SnapshotDownload> DownloadSnapshot(const DaemonClient& client, const std::string& id, const std::string& dest,
                                            std::vector<size_t> which) {
  if (which.empty()) {
    for (size_t i = 0; i < client.hosts().size(); ++i) which.push_back(i);
  }
  if (::mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) return IoError("cannot create {}: {}", dest, std::strerror(errno));
  RANKSCOPE_ASSIGN_OR_RETURN(daemon::DirHandle dir, daemon::DirHandle::OpenPath(dest));
  const daemon::FileOwner me{::getuid(), ::getgid(), 0644};
  const daemon::StoreFile store = [&](const std::string& name, const std::function<Status(int)>& write) -> Status {
    if (dir.StatEntry(name).ok()) return FailedPrecondition("{}/{} is there already; kept", dest, name);
    return dir.WriteFile(name, write, me);
  };
  const daemon::PeerClient http(client.token(), std::chrono::seconds(client.timeout_s()));
  SnapshotDownload out;
  out.dir = dest;
  bool any = false;
  for (size_t i : which) {
    const DaemonHost& h = client.hosts()[i];
    const daemon::Peer peer{h.host, h.port};
    auto capture = http.Call(peer, "/v1/captures/" + id);
    if (!capture.ok()) {
      out.lines.push_back(fmt::format("{}: {}", h.Label(), capture.status().message()));
      continue;
    }
    const daemon::FetchFile fetch = [&](const std::string& path, size_t max_bytes,
                                        const std::function<Status(std::string_view)>& sink) {
      return http.Download(peer, path, max_bytes, sink);
    };
    const daemon::GatherResult got = daemon::GatherSnapshot(*capture, h.Label(), fetch, store);
    any = any || !got.stored.empty();
    out.files += got.stored.size();
    out.lines.push_back(fmt::format("{}: {} file{} of rank{} {}{}", h.Label(), got.stored.size(),
                                    got.stored.size() == 1 ? "" : "s", got.ranks.size() == 1 ? "" : "s",
                                    got.ranks.empty() ? "-" : fmt::format("{}", fmt::join(got.ranks, ",")),
                                    got.errors.empty() ? "" : fmt::format(" ({})", fmt::join(got.errors, "; "))));
  }
  if (!any) {
    return NotFound("no host had files of snapshot {}:\n  {}", id, fmt::join(out.lines, "\n  "));
  }
  return out;
}

StatusOr<std::string> NewestHangSnapshot(const DaemonClient& client, const std::string& job) {
  std::string best;
  int64_t best_ms = -1;
  std::vector<std::string> why;
  for (const HostReply& r : client.Call("/v1/hangs")) {
    if (!r.status.ok()) {
      why.push_back(fmt::format("{}: {}", r.host.Label(), r.status.message()));
      continue;
    }
    auto hangs = r.body.find("hangs");
    if (hangs == r.body.end() || !hangs->is_array()) continue;
    for (const auto& h : *hangs) {
      if (!job.empty() && Text(h, "job") != job) continue;
      const auto ms = h.is_object() && h.contains("detected_unix_ms") && h["detected_unix_ms"].is_number_integer()
                          ? h["detected_unix_ms"].get<int64_t>() : 0;
      if (Text(h, "capture").empty() || Text(h, "state") == "failed" || ms <= best_ms) continue;
      best = Text(h, "capture");
      best_ms = ms;
    }
  }
  if (best.empty()) {
    return NotFound("no hang detected by the daemon{}{} (give the snapshot with --id){}", client.hosts().size() > 1 ? "s" : "",
                    job.empty() ? "" : " for job " + job, why.empty() ? "" : fmt::format(":\n  {}", fmt::join(why, "\n  ")));
  }
  return best;
}

}  // namespace rankscope::cli
