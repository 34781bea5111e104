#include "rankscope/engine/capture_hosts.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "rankscope/telemetry/sidecar.h"

namespace rankscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifestName = "capture.manifest";
constexpr uintmax_t kMaxManifestBytes = 16 << 20;  // a manifest lists targets: kilobytes, not megabytes

std::string DirOf(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? "." : dir.string();
}

// The host a capture.manifest names, or "" when the directory has none.
std::string ManifestHost(const std::string& dir, std::vector<std::string>* warnings) {
  const fs::path path = fs::path(dir) / kManifestName;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";
  if (fs::file_size(path, ec) > kMaxManifestBytes) {
    warnings->push_back(fmt::format("{}: larger than {} MiB, not read", path.string(), kMaxManifestBytes >> 20));
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  const nlohmann::json manifest = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object()) {
    warnings->push_back(fmt::format("{}: not a capture manifest (invalid JSON); its host is not used", path.string()));
    return "";
  }
  const auto host = manifest.find("host");
  return host != manifest.end() && host->is_string() ? host->get<std::string>() : "";
}

// rank -> host from the sidecars of one directory: a sidecar's process series name the ranks that
// ran on its host; a directory with a single sidecar is that host's capture.
std::map<int64_t, std::string> SidecarHosts(const std::string& dir, std::vector<std::string>* warnings) {
  std::map<int64_t, std::string> out;
  const std::vector<std::string> sidecars = telemetry::FindSidecars(dir);
  for (const std::string& path : sidecars) {
    auto table = telemetry::ReadSidecar(path);
    if (!table.ok()) {
      warnings->push_back(table.status().message());
      continue;
    }
    for (const auto& s : table->series) {
      const std::string_view rank = telemetry::LabelValue(s.key.labels, "rank");
      if (!rank.empty()) out.emplace(std::atoll(std::string(rank).c_str()), table->header.host);
    }
    if (sidecars.size() == 1) out.emplace(-1, table->header.host);  // -1: any rank of this directory
  }
  return out;
}

}  // namespace

std::map<int64_t, RankHost> FindCaptureHosts(const std::vector<TraceFileRank>& files, std::vector<std::string>* warnings) {
  std::map<std::string, std::vector<int64_t>> ranks_by_dir;
  for (const TraceFileRank& f : files) ranks_by_dir[DirOf(f.path)].push_back(f.rank);
  std::map<int64_t, RankHost> out;
  for (const auto& [dir, ranks] : ranks_by_dir) {
    if (const std::string host = ManifestHost(dir, warnings); !host.empty()) {
      for (int64_t r : ranks) out[r] = {host, HostSource::kManifest};
      continue;
    }
    const std::map<int64_t, std::string> sidecar = SidecarHosts(dir, warnings);
    for (int64_t r : ranks) {
      auto it = sidecar.find(r);
      if (it == sidecar.end()) it = sidecar.find(-1);
      if (it != sidecar.end() && !it->second.empty()) out[r] = {it->second, HostSource::kTelemetry};
    }
  }
  return out;
}

std::vector<std::string> FindTelemetrySidecars(const std::vector<std::string>& inputs,
                                               const std::vector<std::string>& files) {
  std::set<std::string> dirs;
  for (const std::string& input : inputs) {
    std::error_code ec;
    dirs.insert(fs::is_directory(input, ec) ? input : DirOf(input));
  }
  for (const std::string& f : files) dirs.insert(DirOf(f));
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const std::string& dir : dirs) {
    for (std::string& path : telemetry::FindSidecars(dir)) {
      const std::string key = fs::weakly_canonical(path).string();
      if (seen.insert(key).second) out.push_back(std::move(path));
    }
  }
  return out;
}

}  // namespace rankscope
