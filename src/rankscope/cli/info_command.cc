// `rankscope info <files|dir> [--json]`: what each trace file holds.
#include <fmt/format.h>

#include <iostream>
#include <mutex>

#include "rankscope/base/cpu_target.h"
#include "rankscope/base/parallel_for.h"
#include "rankscope/cli/commands.h"
#include "rankscope/ingest/trace_set.h"
#include "rankscope/report/trace_file_info.h"

namespace rankscope::cli {
namespace {

struct InfoOptions {
  std::vector<std::string> inputs;
  bool json = false;
  unsigned threads = DefaultThreadCount();
};

int RunInfo(const InfoOptions& opt) {
  auto files = DiscoverTraceFiles(opt.inputs);
  if (!files.ok()) {
    fmt::print(stderr, "rankscope: error: {}\n", files.status().message());
    return 1;
  }
  const size_t n = files->size();
  std::vector<std::optional<TraceFileInfo>> infos(n);
  std::vector<std::string> errors(n);
  std::vector<bool> not_a_trace(n, false);
  ForEachTrace(*files, ReaderOptions{}, opt.threads, [&](size_t i, StatusOr<TraceModel> model) {
    if (model.ok()) {
      infos[i] = BuildTraceFileInfo(*model);
    } else {
      errors[i] = model.status().message();
      not_a_trace[i] = model.status().code() == StatusCode::kNotATrace;
    }
  });

  // Valid JSON that is not a trace (a config, a reference file) is skipped, not an error.
  std::vector<std::string> warnings;
  for (size_t i = 0; i < n; ++i) {
    if (not_a_trace[i]) warnings.push_back(errors[i] + "; skipped");
  }
  std::vector<RankEvidence> evidence;
  std::vector<size_t> readable;
  for (size_t i = 0; i < n; ++i) {
    if (!infos[i]) continue;
    evidence.push_back({infos[i]->path, infos[i]->distributed_rank});
    readable.push_back(i);
  }
  std::string rank_error;
  if (auto ranks = ResolveRanks(evidence, &warnings); ranks.ok()) {
    for (size_t k = 0; k < readable.size(); ++k) {
      infos[readable[k]]->rank = (*ranks)[k];
      infos[readable[k]]->rank_resolved = true;
    }
  } else {
    rank_error = ranks.status().message();
  }

  int failures = 0;
  if (opt.json) {
    nlohmann::json out;
    out["schema"] = "rankscope.info/1";
    out["reader"] = CpuTargetName();
    out["files"] = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) {
      if (infos[i]) {
        out["files"].push_back(TraceFileInfoToJson(*infos[i]));
      } else if (!not_a_trace[i]) {
        out["files"].push_back({{"path", (*files)[i]}, {"error", errors[i]}});
        ++failures;
      }
    }
    out["warnings"] = warnings;
    out["rank_error"] = rank_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(rank_error);
    std::cout << out.dump(2) << "\n";
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (infos[i]) {
        std::cout << RenderTraceFileInfo(*infos[i]) << "\n";
      } else if (!not_a_trace[i]) {
        fmt::print(stderr, "rankscope: error: {}\n", errors[i]);
        ++failures;
      }
    }
    for (const std::string& w : warnings) fmt::print(stderr, "rankscope: warning: {}\n", w);
  }
  if (!rank_error.empty()) fmt::print(stderr, "rankscope: error: {}\n", rank_error);
  if (readable.empty() && failures == 0) {
    fmt::print(stderr, "rankscope: error: none of the {} file(s) is a trace\n", n);
    return 1;
  }
  return failures > 0 || !rank_error.empty() ? 1 : 0;
}

}  // namespace

void RegisterInfoCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Show what trace files hold: rank, devices, span, steps, events, skips");
  cmd->add_option("paths", opt->inputs, "Trace files or directories of them (.json, .json.gz)")->required();
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->add_option("--threads", opt->threads, "Files read in parallel (default: all cores)")->check(CLI::Range(1u, 1024u));
  cmd->callback([opt, exit_code] { *exit_code = RunInfo(*opt); });
}

}  // namespace rankscope::cli
