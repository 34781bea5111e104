#include "rankscope/cli/capture_report.h"

#include <chrono>
#include <set>
#include <thread>

namespace rankscope::cli {

CaptureOutcome Summarize(std::vector<HostReply> replies) {
  CaptureOutcome o;
  o.all_finished = true;
  std::set<std::string> dirs;
  for (const auto& r : replies) {
    if (!r.status.ok()) continue;
    // "saved": the daemon has also written the telemetry sidecar and the manifest (daemons
    // older than the field do not say; then finished is all there is). A daemon that stopped
    // answering will not finish anything: waiting for it is over.
    const bool lost = r.body.contains("daemon_lost");
    o.all_finished &= lost || (r.body.value("finished", false) && r.body.value("saved", true));
    for (const auto& t : r.body["targets"]) {
      ++o.expected;
      if (t.value("state", "") == "done") {
        ++o.produced;
        dirs.insert(r.body.value("dir", ""));
      }
    }
  }
  o.dirs.assign(dirs.begin(), dirs.end());
  o.hosts = std::move(replies);
  return o;
}

CaptureOutcome WaitForCapture(const DaemonClient& client, const std::string& id, std::vector<HostReply> started,
                              int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::vector<HostReply> latest = std::move(started);
  for (;;) {
    CaptureOutcome o = Summarize(latest);
    if (o.all_finished || std::chrono::steady_clock::now() >= deadline) return o;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // Only hosts that accepted the capture are asked again; a host that refused keeps its error.
    // A host that accepted and then stops answering (its daemon was killed) keeps the last state
    // it reported, marked as lost.
    auto polled = client.CallEach([&](size_t) { return "/v1/captures/" + id; });
    for (size_t i = 0; i < latest.size(); ++i) {
      if (!latest[i].status.ok() || latest[i].body.contains("daemon_lost")) continue;
      if (polled[i].status.ok()) {
        latest[i] = std::move(polled[i]);
      } else {
        latest[i].body["daemon_lost"] = polled[i].status.message();
      }
    }
  }
}

void PrintCaptureReport(const CaptureOutcome& o, const std::string& what, bool waited) {
  for (const auto& r : o.hosts) {
    if (!r.status.ok()) {
      fmt::print("{}: nothing to {}: {}\n", r.host.Label(), what, r.status.message());
      continue;
    }
    const auto& c = r.body;
    if (c.contains("daemon_lost")) {
      fmt::print("{}: the daemon stopped answering while the {} ran ({}); its last known state:\n", r.host.Label(),
                 what, c["daemon_lost"].get<std::string>());
    }
    fmt::print("{}: {} {} of job {} -> {}\n", r.host.Label(), what, c.value("id", ""), c.value("job", ""),
               c.value("dir", ""));
    for (const auto& t : c["targets"]) {
      const int rank = t.value("rank", -1);
      const std::string who = rank >= 0 ? fmt::format("rank {:>3}", rank) : fmt::format("pid {}", t.value("pid", 0));
      const std::string state = t.value("state", "");
      std::string line = fmt::format("  {} (pid {}, {}): {}", who, t.value("pid", 0), t.value("via", ""), state);
      if (state == "done") line += "  " + t.value("file", "");
      if (t.contains("first_step")) line += fmt::format("  steps {}..{}", t.value("first_step", -1), t.value("last_step", -1));
      else if (t.contains("start_step") && state != "done") line += fmt::format("  (starts at step {})", t.value("start_step", -1));
      if (!t.value("detail", "").empty()) line += "  — " + t.value("detail", "");
      fmt::print("{}\n", line);
    }
    for (const auto& n : c["notes"]) fmt::print("  note: {}\n", n.get<std::string>());
  }
  if (waited) {
    fmt::print("{} of {} file{} produced{}\n", o.produced, o.expected, o.expected == 1 ? "" : "s",
               o.all_finished ? "" : " (timed out waiting; the daemons keep watching)");
  }
}

nlohmann::json CaptureOutcomeToJson(const CaptureOutcome& o) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& r : o.hosts) {
    if (r.status.ok()) {
      hosts.push_back(r.body);
    } else {
      hosts.push_back({{"host", r.host.Label()}, {"error", r.status.message()}});
    }
  }
  return {{"expected", o.expected}, {"produced", o.produced}, {"finished", o.all_finished}, {"dirs", o.dirs},
          {"hosts", hosts}};
}

}  // namespace rankscope::cli
