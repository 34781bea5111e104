// `rankscope info <files|dir> [--json]`: what each trace file holds.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

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

// What reading each file gave: its info, or why there is none.
struct FileResults {
  std::vector<std::string> paths;
  std::vector<std::optional<TraceFileInfo>> infos;
  std::vector<std::string> errors;
  std::vector<bool> not_a_trace;  // valid data of another kind (a JSON config beside the traces)
  size_t size() const { return paths.size(); }
};

FileResults ReadFiles(std::vector<std::string> paths, unsigned threads) {
  FileResults r;
  const size_t n = paths.size();
  r.infos.resize(n);
  r.errors.resize(n);
  r.not_a_trace.assign(n, false);
  ForEachTrace(paths, ReaderOptions{}, threads, [&](size_t i, StatusOr<TraceModel> model) {
    if (model.ok()) {
      r.infos[i] = BuildTraceFileInfo(*model);
    } else {
      r.errors[i] = model.status().message();
      r.not_a_trace[i] = model.status().code() == StatusCode::kNotATrace;
    }
  });
  r.paths = std::move(paths);
  return r;
}

// Valid JSON that is not a trace (a config, a reference file) is skipped, not an error.
std::vector<std::string> NotATraceWarnings(const FileResults& r) {
  std::vector<std::string> warnings;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.not_a_trace[i]) warnings.push_back(r.errors[i] + "; skipped");
  }
  return warnings;
}

// Gives every readable file its rank; returns why the set's ranks cannot be resolved, or "".
std::string ResolveFileRanks(FileResults* r, std::vector<std::string>* warnings) {
  std::vector<RankEvidence> evidence;
  std::vector<size_t> readable;
  for (size_t i = 0; i < r->size(); ++i) {
    if (!r->infos[i]) continue;
    evidence.push_back({r->infos[i]->path, r->infos[i]->distributed_rank});
    readable.push_back(i);
  }
  auto ranks = ResolveRanks(evidence, warnings);
  if (!ranks.ok()) return ranks.status().message();
  for (size_t k = 0; k < readable.size(); ++k) {
    r->infos[readable[k]]->rank = (*ranks)[k];
    r->infos[readable[k]]->rank_resolved = true;
  }
  return "";
}

// Prints the report; returns how many files could not be read.
int PrintJson(const FileResults& r, const std::vector<std::string>& warnings, const std::string& rank_error) {
  int failures = 0;
  nlohmann::json out;
  out["schema"] = "rankscope.info/1";
  out["reader"] = CpuTargetName();
  out["files"] = nlohmann::json::array();
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.infos[i]) {
      out["files"].push_back(TraceFileInfoToJson(*r.infos[i]));
    } else if (!r.not_a_trace[i]) {
      out["files"].push_back({{"path", r.paths[i]}, {"error", r.errors[i]}});
      ++failures;
    }
  }
  out["warnings"] = warnings;
  out["rank_error"] = rank_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(rank_error);
  std::cout << out.dump(2) << "\n";
  return failures;
}

int PrintText(const FileResults& r, const std::vector<std::string>& warnings) {
  int failures = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.infos[i]) {
      std::cout << RenderTraceFileInfo(*r.infos[i]) << "\n";
    } else if (!r.not_a_trace[i]) {
      fmt::print(stderr, "rankscope: error: {}\n", r.errors[i]);
      ++failures;
    }
  }
  for (const std::string& w : warnings) fmt::print(stderr, "rankscope: warning: {}\n", w);
  return failures;
}

int RunInfo(const InfoOptions& opt) {
  auto files = DiscoverTraceFiles(opt.inputs);
  if (!files.ok()) {
    fmt::print(stderr, "rankscope: error: {}\n", files.status().message());
    return 1;
  }
  FileResults results = ReadFiles(std::move(files).value(), opt.threads);
  std::vector<std::string> warnings = NotATraceWarnings(results);
  const std::string rank_error = ResolveFileRanks(&results, &warnings);
  const int failures = opt.json ? PrintJson(results, warnings, rank_error) : PrintText(results, warnings);
  if (!rank_error.empty()) fmt::print(stderr, "rankscope: error: {}\n", rank_error);
  const bool none_readable = std::none_of(results.infos.begin(), results.infos.end(), [](const auto& i) { return i.has_value(); });
  if (none_readable && failures == 0) {
    fmt::print(stderr, "rankscope: error: none of the {} file(s) is a trace\n", results.size());
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
