#include "rankscope/daemon/snapshot_gather.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rankscope/base/utf8.h"
#include "rankscope/daemon/capture_spec.h"
#include "rankscope/hang/flight_recorder.h"
#include "rankscope/hang/snapshot_files.h"
#include "rankscope/hang/stack_snapshot.h"

namespace rankscope::daemon {
namespace {

constexpr size_t kMaxManifestBytes = 16u << 20;
constexpr size_t kMaxFilesPerHost = 3 * 65536;
constexpr size_t kMaxErrors = 20;  // then only counted

bool RankPrefixed(std::string_view name) {
  if (name.rfind("rank", 0) != 0) return false;
  size_t i = 4;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  return i > 4 && i < name.size() && name[i] == '.';
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("write: {}", std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

}  // namespace

std::optional<size_t> SnapshotFileLimit(std::string_view name) {
  if (name == "capture.manifest") return kMaxManifestBytes;
  if (!IsSafeName(name) || !RankPrefixed(name)) return std::nullopt;
  switch (hang::ClassifySnapshotFile(name)) {
    case hang::SnapshotFileKind::kStacks:
    case hang::SnapshotFileKind::kWorkerStacks: return hang::kMaxStacksFileBytes;
    case hang::SnapshotFileKind::kFlightRecorder: return hang::kMaxFlightRecorderBytes;
    default: return std::nullopt;
  }
}

std::string HostManifestName(std::string_view host_label) {
  std::string label(host_label);
  for (char& c : label) c = c == ':' ? '-' : c;
  return "capture." + SanitizeName(label) + ".manifest";
}

GatherResult GatherSnapshot(const nlohmann::json& capture, const std::string& host_label, const FetchFile& fetch,
                            const StoreFile& store, uint64_t max_total_bytes) {
  GatherResult out;
  size_t more_errors = 0;
  auto error = [&](std::string message) {
    if (out.errors.size() < kMaxErrors) out.errors.push_back(std::move(message));
    else ++more_errors;
  };
  const auto id_field = capture.is_object() ? capture.find("id") : capture.end();
  const std::string id = id_field != capture.end() && id_field->is_string() ? id_field->get<std::string>() : "";
  auto files = capture.is_object() ? capture.find("files") : capture.end();
  if (!IsSafeName(id) || files == capture.end() || !files->is_array()) {
    error(fmt::format("{}: its description of the snapshot lists no files", host_label));
    return out;
  }
  size_t seen = 0;
  for (const auto& f : *files) {
    if (++seen > kMaxFilesPerHost) {
      error(fmt::format("{}: more than {} files listed; the rest is left", host_label, kMaxFilesPerHost));
      break;
    }
    const std::string name = f.is_string() ? f.get<std::string>() : "";
    const std::optional<size_t> limit = SnapshotFileLimit(name);
    if (!limit) {
      error(fmt::format("{}: '{}' is not a file of a snapshot; not taken", host_label, ClipUtf8(name, 80)));
      continue;
    }
    if (out.bytes >= max_total_bytes) {
      error(fmt::format("{}: {} not taken: {} GiB gathered already", host_label, name, max_total_bytes >> 30));
      continue;
    }
    const std::string stored = name == "capture.manifest" ? HostManifestName(host_label) : name;
    uint64_t bytes = 0;
    Status s = store(stored, [&](int fd) {
      return fetch(fmt::format("/v1/captures/{}/files/{}", id, name), *limit, [&](std::string_view data) {
        bytes += data.size();
        return WriteAll(fd, data);
      });
    });
    if (!s.ok()) {
      error(fmt::format("{}: {} not taken: {}", host_label, name, s.message()));
      continue;
    }
    out.bytes += bytes;
    out.stored.push_back(stored);
    if (hang::ClassifySnapshotFile(name) == hang::SnapshotFileKind::kStacks) {
      out.ranks.push_back(hang::RankFromFileName(name));
    }
  }
  if (more_errors) out.errors.push_back(fmt::format("{}: {} more files not taken", host_label, more_errors));
  return out;
}

}  // namespace rankscope::daemon
