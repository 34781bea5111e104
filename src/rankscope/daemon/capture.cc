#include "rankscope/daemon/capture.h"

namespace rankscope::daemon {

const char* TargetStateName(TargetState s) {
  switch (s) {
    case TargetState::kWaiting: return "waiting";
    case TargetState::kRunning: return "running";
    case TargetState::kDone: return "done";
    case TargetState::kFailed: return "failed";
  }
  return "?";
}

std::string CaptureTarget::BaseName() const {
  return rank >= 0 ? fmt::format("rank{}", rank) : fmt::format("pid{}", pid);
}

bool Capture::finished() const {
  for (const auto& t : targets) {
    if (!t.finished()) return false;
  }
  return true;
}

CaptureTarget* Capture::Find(int32_t pid) {
  for (auto& t : targets) {
    if (t.pid == pid) return &t;
  }
  return nullptr;
}

std::vector<std::string> CaptureFileNames(const Capture& c) {
  std::vector<std::string> names;
  auto add = [&](const std::string& path) {
    if (!path.empty()) names.push_back(std::filesystem::path(path).filename().string());
  };
  for (const auto& t : c.targets) {
    if (t.state != TargetState::kDone) continue;
    add(t.file);
    add(t.extra_file);
    for (const auto& w : t.worker_files) add(w);
  }
  if (c.saved) names.push_back("capture.manifest");
  return names;
}

nlohmann::json ToJson(const Capture& c, const std::string& host) {
  nlohmann::json targets = nlohmann::json::array();
  int done = 0;
  for (const auto& t : c.targets) {
    nlohmann::json j = {{"pid", t.pid}, {"rank", t.rank}, {"via", t.via == kKinetoClient ? "kineto" : "collector"},
                        {"state", TargetStateName(t.state)}, {"detail", t.detail}, {"file", t.file}};
    if (t.start_step >= 0) j["start_step"] = t.start_step;
    if (t.first_step >= 0) j["first_step"] = t.first_step;
    if (t.last_step >= 0) j["last_step"] = t.last_step;
    if (!t.kineto_expected.empty()) j["kineto_file"] = t.kineto_expected;
    if (!t.extra_file.empty()) j["flight_recorder_file"] = t.extra_file;
    if (!t.worker_files.empty()) j["worker_files"] = t.worker_files;
    targets.push_back(std::move(j));
    done += t.state == TargetState::kDone;
  }
  nlohmann::json j = {{"id", c.id}, {"kind", c.kind == Capture::Kind::kTrace ? "trace" : "snapshot"},
                      {"host", host}, {"job", c.job}, {"reason", c.reason}, {"dir", c.dir.string()},
                      {"created_unix_ms", c.created_unix_ms}, {"finished", c.finished()}, {"saved", c.saved},
                      {"produced", done}, {"targets", targets}, {"notes", c.notes}, {"save_errors", c.save_errors}};
  if (c.saved) j["disk_budget"] = ToJson(c.eviction);
  if (c.kind == Capture::Kind::kSnapshot) j["files"] = CaptureFileNames(c);
  j["spec"] = c.kind == Capture::Kind::kTrace ? ToJson(c.trace) : ToJson(c.snapshot);
  return j;
}

}  // namespace rankscope::daemon
