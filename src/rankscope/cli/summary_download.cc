#include "rankscope/cli/summary_download.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "rankscope/daemon/dir_handle.h"
#include "rankscope/daemon/peers.h"
#include "rankscope/summary/summary_file.h"

namespace rankscope::cli {
namespace {

constexpr size_t kMaxSummaryBytes = 64ull << 20;  // far above the ~1 MiB a rank's summary takes

// The daemon queues a capture's summaries when it saves the capture: until then, and while some
// are still being made, there is more to come.
bool Pending(const nlohmann::json& reply) {
  if (!reply.value("saved", false)) return true;
  const auto& p = reply.value("progress", nlohmann::json());
  return p.is_object() && p.value("pending", 0) > 0;
}

// A name the daemon lists must be a plain file name of a summary, the manifest or a telemetry
// sidecar: nothing else is written here.
bool SafeName(const std::string& name) {
  if (name.empty() || name.size() >= 256 || name.find('/') != std::string::npos || name[0] == '.') return false;
  return summary::IsSummaryPath(name) || name == "capture.manifest" ||
         (name.starts_with("telemetry.") && name.ends_with(".tsv"));
}

// One directory per host: every host has its capture.manifest.
std::string HostDirName(const std::string& label) {
  std::string out;
  for (char c : label) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

}  // namespace

StatusOr<SummaryDownload> DownloadSummaries(const DaemonClient& client, const std::string& id, const std::string& dest) {
  if (::mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) return IoError("cannot create {}: {}", dest, std::strerror(errno));
  const daemon::FileOwner me{::getuid(), ::getgid(), 0644};
  const daemon::PeerClient http(client.token(), std::chrono::seconds(client.timeout_s()));
  SummaryDownload out;
  out.dir = dest;
  for (const DaemonHost& h : client.hosts()) {
    const daemon::Peer peer{h.host, h.port};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(client.timeout_s());
    auto listing = http.Call(peer, fmt::format("/v1/captures/{}/summaries", id));
    while (listing.ok() && Pending(*listing) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      listing = http.Call(peer, fmt::format("/v1/captures/{}/summaries", id));
    }
    if (!listing.ok()) {
      out.lines.push_back(fmt::format("{}: {}", h.Label(), listing.status().message()));
      continue;
    }
    const std::string host_dir = dest + "/" + HostDirName(h.Label());
    if (::mkdir(host_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return IoError("cannot create {}: {}", host_dir, std::strerror(errno));
    }
    RANKSCOPE_ASSIGN_OR_RETURN(daemon::DirHandle dir, daemon::DirHandle::OpenPath(host_dir));
    std::vector<std::string> names;
    for (const auto& s : listing->value("summaries", nlohmann::json::array())) names.push_back(s.value("summary", ""));
    const size_t summaries = names.size();
    for (const auto& b : listing->value("beside", nlohmann::json::array())) {
      if (b.is_string()) names.push_back(b.get<std::string>());
    }
    size_t stored = 0;
    std::vector<std::string> errors;
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string& name = names[k];
      if (!SafeName(name)) {
        errors.push_back(fmt::format("refused the name {:?}", name));
        continue;
      }
      if (dir.StatEntry(name).ok()) {
        errors.push_back(fmt::format("{} is there already; kept", name));
        continue;
      }
      std::string bytes;
      Status got = http.Download(peer, fmt::format("/v1/captures/{}/files/{}", id, name), kMaxSummaryBytes,
                                 [&](std::string_view data) {
                                   bytes.append(data);
                                   return OkStatus();
                                 });
      if (got.ok()) got = dir.WriteFile(name, bytes, me);
      if (got.ok() && k < summaries) ++stored;
      else errors.push_back(fmt::format("{}: {}", name, got.message()));
    }
    out.files += stored;
    out.lines.push_back(fmt::format("{}: {} summar{}{}", h.Label(), stored, stored == 1 ? "y" : "ies",
                                    errors.empty() ? "" : fmt::format(" ({})", fmt::join(errors, "; "))));
  }
  if (out.files == 0) return NotFound("no host had summaries of capture {}:\n  {}", id, fmt::join(out.lines, "\n  "));
  return out;
}

}  // namespace rankscope::cli
