// `rankscope status` (the daemons) and `rankscope ps` (their registered training processes).
#include <iostream>

#include "rankscope/cli/commands.h"
#include "rankscope/cli/daemon_client.h"
#include "rankscope/report/text_format.h"

namespace rankscope::cli {
namespace {

struct ListOptions {
  HostOptions hosts;
  bool json = false;
};

std::string Bytes(uint64_t b) { return FormatByteCount(static_cast<int64_t>(b)); }

int Finish(const std::vector<HostReply>& replies, bool json, const std::function<void(const HostReply&)>& print) {
  int failures = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : replies) {
    if (!r.status.ok()) {
      ++failures;
      if (json) all.push_back({{"host", r.host.Label()}, {"error", r.status.message()}});
      else fmt::print("{}: {}\n", r.host.Label(), r.status.message());
      continue;
    }
    if (json) all.push_back(r.body);
    else print(r);
  }
  if (json) std::cout << all.dump(2) << "\n";
  return failures ? 1 : 0;
}

int RunStatus(const ListOptions& opt) {
  auto client = DaemonClient::FromOptions(opt.hosts);
  if (!client.ok()) {
    fmt::print(stderr, "rankscope status: {}\n", client.status().message());
    return 2;
  }
  return Finish(client->Call("/v1/status"), opt.json, [](const HostReply& r) {
    const auto& s = r.body;
    fmt::print("{}: rankscoped {} on {} (pid {}, up {} s)\n", r.host.Label(), s.value("version", ""), s.value("host", ""),
               s.value("pid", 0), s.value("uptime_s", 0));
    fmt::print("  output     {}  ({} used, budget {})\n", s.value("out_dir", ""), Bytes(s.value("disk_used_bytes", 0ull)),
               s.value("disk_budget_bytes", 0ull) ? Bytes(s.value("disk_budget_bytes", 0ull)) : "none");
    const auto& p = s["processes"];
    fmt::print("  processes  {} registered ({} with the collector, {} Kineto clients)\n", p.value("total", 0),
               p.value("collector", 0), p.value("kineto", 0));
    fmt::print("  endpoints  collector {}, kineto {}\n", s["collector_endpoint"].value("address", ""),
               s["kineto_endpoint"].value("address", "").empty() ? "off" : s["kineto_endpoint"].value("address", ""));
    fmt::print("  captures   {} running\n", s.value("active_captures", 0));
    // Hangs the daemon detected by itself (docs/hang.md), newest last.
    for (const auto& h : s.value("hangs", nlohmann::json::array())) {
      fmt::print("  HANG       job {} ({}{}): {}\n", h.value("job", ""), h.value("state", ""),
                 h.value("still_hung", false) ? ", still hung" : ", moving again", h.value("reason", ""));
      for (const auto& f : h.value("findings", nlohmann::json::array())) {
        fmt::print("             {}: {}\n", f.value("kind", ""), f.value("sentence", ""));
      }
      if (!h.value("dir", "").empty()) fmt::print("             snapshot {}  (rankscope hang DIR)\n", h.value("dir", ""));
      if (h.contains("error")) fmt::print("             {}\n", h.value("error", ""));
    }
  });
}

int RunPs(const ListOptions& opt) {
  auto client = DaemonClient::FromOptions(opt.hosts);
  if (!client.ok()) {
    fmt::print(stderr, "rankscope ps: {}\n", client.status().message());
    return 2;
  }
  bool header = false;
  return Finish(client->Call("/v1/processes"), opt.json, [&header](const HostReply& r) {
    if (!header) {
      fmt::print("{:<16} {:>8} {:>5} {:>5} {:<24} {:<17} {:>8} {:>9} {:>6}  {}\n", "HOST", "PID", "RANK", "LOCAL", "JOB",
                 "CLIENT", "STEP", "STEP_MS", "SEEN", "COMMAND");
      header = true;
    }
    for (const auto& p : r.body["processes"]) {
      std::string clients;
      for (const auto& c : p["clients"]) {
        if (!clients.empty()) clients += '+';
        clients += c.get<std::string>();
      }
      const std::string step = p.contains("step") ? std::to_string(p.value("step", 0)) : "-";
      const std::string step_ms = p.contains("step_ms") ? fmt::format("{:.1f}", p.value("step_ms", 0.0)) : "-";
      fmt::print("{:<16} {:>8} {:>5} {:>5} {:<24} {:<17} {:>8} {:>9} {:>5}s  {}\n", r.host.Label(), p.value("pid", 0),
                 p.value("rank", -1), p.value("local_rank", -1), p.value("job", "").substr(0, 24), clients, step, step_ms,
                 p.value("last_seen_ms_ago", 0) / 1000, p.value("command", "").substr(0, 60));
    }
  });
}

}  // namespace

void RegisterStatusCommands(CLI::App& app, int* exit_code) {
  auto status = std::make_shared<ListOptions>();
  CLI::App* s = app.add_subcommand("status", "Show the node daemons: endpoints, output directory, disk use");
  status->hosts.AddTo(s);
  s->add_flag("--json", status->json, "Print JSON");
  s->callback([status, exit_code] { *exit_code = RunStatus(*status); });

  auto ps = std::make_shared<ListOptions>();
  CLI::App* p = app.add_subcommand("ps", "List the training processes registered with the daemons");
  ps->hosts.AddTo(p);
  p->add_flag("--json", ps->json, "Print JSON");
  p->callback([ps, exit_code] { *exit_code = RunPs(*ps); });
}

}  // namespace rankscope::cli
