// HangWatch's part with the other hosts (--peers): asking each peer's daemon to snapshot its
// ranks of the hung job under the same id, and gathering their files into the local snapshot
// directory once their part is saved (snapshot_gather.h), through the capture directory's
// descriptor, as the capture's user, never replacing a file that is there.
#include "rankscope/base/parallel_for.h"
#include "rankscope/daemon/hang_watch.h"
#include "rankscope/daemon/snapshot_gather.h"

namespace rankscope::daemon {
namespace {

// Requests to peers run in parallel, a few at a time: a dead host costs its timeout once.
constexpr unsigned kPeerThreads = 16;

}  // namespace

std::vector<HangWatch::PeerPart> HangWatch::AskPeers(const SnapshotSpec& spec) {
  std::vector<PeerPart> parts(options_.peers.size());
  const nlohmann::json body = ToJson(spec);
  ParallelFor(parts.size(), kPeerThreads, [&](size_t i) {
    const Peer& peer = options_.peers[i];
    PeerPart& part = parts[i];
    part.peer = peer.Label();
    auto reply = peer_client_.Call(peer, "/v1/snapshot", body);
    if (reply.ok()) return;  // "requested"
    // No rank of the job there (404) is an answer, not a failure.
    part.state = reply.status().code() == StatusCode::kNotFound ? "no ranks" : "failed";
    part.error = reply.status().message();
  });
  return parts;
}

bool HangWatch::GatherFromPeers(const std::string& capture_id, SteadyClock::time_point started,
                                std::vector<PeerPart>* parts) {
  const auto deadline = started + std::chrono::seconds(options_.snapshot_timeout_s) + options_.gather_after;
  const bool late = SteadyClock::now() >= deadline;
  bool all_in = true;
  for (PeerPart& part : *parts) {
    if (part.state != "requested") continue;
    const Peer* peer = nullptr;
    for (const Peer& p : options_.peers) {
      if (p.Label() == part.peer) peer = &p;
    }
    if (!peer) continue;
    auto capture = peer_client_.Call(*peer, "/v1/captures/" + capture_id);
    const bool saved = capture.ok() && capture->is_object() && capture->contains("saved") &&
                       (*capture)["saved"].is_boolean() && (*capture)["saved"].get<bool>();
    if (!saved) {
      if (!late) {
        all_in = false;  // not finished there yet (or not reachable right now): later
        continue;
      }
      part.state = "failed";
      part.error = capture.ok() ? "its part of the snapshot did not finish in time"
                                : std::string(capture.status().message());
      continue;
    }
    const FetchFile fetch = [&](const std::string& path, size_t max_bytes,
                                const std::function<Status(std::string_view)>& sink) {
      return peer_client_.Download(*peer, path, max_bytes, sink);
    };
    const StoreFile store = [&](const std::string& name, const std::function<Status(int)>& write) {
      return captures_->WriteCaptureFile(capture_id, name, write, /*replace=*/false);
    };
    const GatherResult got = GatherSnapshot(*capture, peer->Label(), fetch, store);
    part.state = "gathered";
    part.ranks = got.ranks;
    part.files = got.stored.size();
    for (const std::string& e : got.errors) part.error += (part.error.empty() ? "" : "; ") + e;
    fmt::print(stderr, "rankscoped: snapshot {}: {} files of ranks {} gathered from {}{}\n", capture_id,
               got.stored.size(), fmt::join(got.ranks, ","), peer->Label(), got.errors.empty() ? "" : " (" + part.error + ")");
  }
  return all_in;
}

}  // namespace rankscope::daemon
