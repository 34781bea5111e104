#include "rankscope/compare/job_compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "rankscope/base/parallel_for.h"
#include "rankscope/compare/compare_findings.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/overall_diff.h"
#include "rankscope/compare/peer_wait.h"
#include "rankscope/compare/rank_compare.h"
#include "rankscope/engine/analyze_job.h"
#include "rankscope/ingest/trace_set.h"

namespace rankscope::compare {
namespace {

struct Run {
  const char* label = "";  // "BASE" / "NEW"
  JobReport report;   // the engine's analysis of the run (ranks, cluster diagnosis)
  std::vector<CompareSummary> ranks;  // same order as report.ranks (by rank number)
};

// "0-3, 5" for a list of rank numbers.
std::string RankList(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : fmt::format("{}", ranks[i]);
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

// Progress of the engine's map, forwarded to the caller's callback.
class CallbackProgress : public Progress {
 public:
  explicit CallbackProgress(const std::function<void()>& fn) : fn_(fn) {}
  void Start(size_t) override {}
  void FileDone() override {
    if (fn_) fn_();
  }

 private:
  const std::function<void()>& fn_;
};

// One run through the engine (AnalyzeJob): its files are read and mapped in parallel, and the
// compare summary of each rank is built on the map worker, beside the rank's RankSummary, while
// the model still exists.
Status LoadRun(const std::vector<std::string>& inputs, const CompareOptions& opt, unsigned threads, Run* run,
               std::vector<std::string>* warnings) {
  RANKSCOPE_ASSIGN_OR_RETURN(CommPatterns patterns, CommPatterns::Compile(opt.comm_patterns));
  SummaryOptions summary_options;
  summary_options.keep_outlier_steps = opt.keep_outlier_steps;
  if (!opt.steps.empty()) {  // positions among each run's profiled steps
    WindowRequest positions;
    RANKSCOPE_RETURN_IF_ERROR(ParseStepRange(opt.steps, &positions));
    summary_options.first_step = positions.first_step;
    summary_options.last_step = positions.last_step;
  }
  std::mutex mu;
  std::map<std::string, CompareSummary> by_path;
  RankHook hook;
  hook.reader.keep_op_shapes = true;
  hook.fn = [&](const TraceModel& model, const RankSummary& summary, RankIntermediates& intermediates) -> Status {
    RANKSCOPE_ASSIGN_OR_RETURN(CompareSummary s,
                               BuildCompareSummary(model, summary, &patterns, summary_options, &intermediates));
    std::lock_guard<std::mutex> lock(mu);
    by_path.emplace(summary.path, std::move(s));
    return OkStatus();
  };
  AnalyzeOptions analysis;
  analysis.comm_patterns = opt.comm_patterns;
  analysis.threads = threads;
  analysis.telemetry = false;
  analysis.function_tables = false;  // compare builds its own operator and kernel tables
  analysis.stream_analyses = false;  // nor does it read idle per stream or launch statistics
  CallbackProgress progress(opt.file_done);
  JobInputs job_inputs;
  job_inputs.paths = inputs;
  auto report = AnalyzeJob(job_inputs, analysis, &progress, &hook);
  if (!report.ok()) return InvalidArgument("{}: {}", run->label, report.status().message());
  if (!report->errors.empty()) return InvalidArgument("{}: {}", run->label, report->errors.front().message);
  for (const std::string& w : report->warnings) warnings->push_back(fmt::format("{}: {}", run->label, w));
  for (const RankSummary& r : report->ranks) {
    CompareSummary& s = by_path.at(r.path);
    s.rank.rank = r.rank.rank;
    run->ranks.push_back(std::move(s));
  }
  run->report = std::move(report).value();
  return OkStatus();
}

// Both runs at once, each on half of the threads (one after the other on one thread).
Status Load(const std::vector<std::string>& base_inputs, const std::vector<std::string>& new_inputs,
            const CompareOptions& opt, Run* base, Run* neu, std::vector<std::string>* warnings) {
  const unsigned threads = opt.threads == 0 ? DefaultThreadCount() : opt.threads;
  if (threads < 2) {  // one thread: one run after the other
    RANKSCOPE_RETURN_IF_ERROR(LoadRun(base_inputs, opt, 1, base, warnings));
    return LoadRun(new_inputs, opt, 1, neu, warnings);
  }
  const unsigned half = std::max(1u, threads / 2);
  std::vector<std::string> base_warnings;
  Status base_status;
  std::thread other([&] { base_status = LoadRun(base_inputs, opt, half, base, &base_warnings); });
  Status new_status = LoadRun(new_inputs, opt, std::max(1u, threads - half), neu, warnings);
  other.join();
  warnings->insert(warnings->begin(), base_warnings.begin(), base_warnings.end());
  RANKSCOPE_RETURN_IF_ERROR(base_status);
  return new_status;
}

std::vector<double> PeerWait(const Run& run) {
  if (!run.report.cluster || run.report.ranks.size() < 2) return {};
  return PeerWaitPerStep(run.report.ranks, *run.report.cluster);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void JobLevel(const Run& base, const Run& neu, JobComparison* job) {
  auto level = [](const Run& run, double* median, double* slowest, int64_t* slowest_rank) {
    std::vector<double> means;
    for (const CompareSummary& s : run.ranks) {
      const double mean = ComputeStepStats(s).mean_ns;
      means.push_back(mean);
      if (mean > *slowest) *slowest = mean, *slowest_rank = s.rank.rank;
    }
    *median = Median(means);
  };
  level(base, &job->base_median_step_ns, &job->base_slowest_step_ns, &job->base_slowest_rank);
  level(neu, &job->new_median_step_ns, &job->new_slowest_step_ns, &job->new_slowest_rank);
}

StatusOr<RankCompareOptions> RankOptionsFor(const CompareOptions& opt) {
  RankCompareOptions r;
  r.align.use_input_shapes = opt.use_input_shapes;
  r.max_kernels = opt.max_kernels;
  r.max_differences = opt.max_differences;
  for (const std::string& m : opt.op_map) {
    RANKSCOPE_ASSIGN_OR_RETURN(auto mapping, ParseOpMapping(m));
    r.align.op_map.push_back(std::move(mapping));
  }
  return r;
}

// (BASE index, NEW index) of the ranks to compare: by rank number; one trace against one trace
// whatever their numbers; --rank narrows it to one.
StatusOr<std::vector<std::pair<size_t, size_t>>> PairRanks(const Run& base, const Run& neu,
                                                           std::optional<int64_t> only, JobComparison* job) {
  std::map<int64_t, size_t> base_index, new_index;
  for (size_t k = 0; k < base.ranks.size(); ++k) {
    base_index[base.ranks[k].rank.rank] = k;
    job->base_ranks.push_back(base.ranks[k].rank.rank);
  }
  for (size_t k = 0; k < neu.ranks.size(); ++k) {
    new_index[neu.ranks[k].rank.rank] = k;
    job->new_ranks.push_back(neu.ranks[k].rank.rank);
  }
  std::vector<std::pair<size_t, size_t>> pairs;
  if (base.ranks.size() == 1 && neu.ranks.size() == 1) {
    pairs.emplace_back(0, 0);
    if (job->base_ranks[0] != job->new_ranks[0]) {
      job->warnings.push_back(fmt::format("one trace on each side: comparing BASE rank {} with NEW rank {}",
                                          job->base_ranks[0], job->new_ranks[0]));
    }
  } else {
    for (const auto& [rank, k] : base_index) {
      if (auto it = new_index.find(rank); it != new_index.end()) pairs.emplace_back(k, it->second);
    }
    if (pairs.empty()) {
      return InvalidArgument(
          "no rank in common: BASE has ranks {} and NEW has ranks {}; compare one trace file with another to compare "
          "two different ranks",
          RankList(job->base_ranks), RankList(job->new_ranks));
    }
    if (base.ranks.size() != neu.ranks.size() || pairs.size() != base.ranks.size()) {
      job->warnings.push_back(fmt::format(
          "BASE has {} rank(s) ({}) and NEW has {} ({}): comparing the {} rank(s) in both; the job figures (median and "
          "slowest rank) use every rank of each run",
          base.ranks.size(), RankList(job->base_ranks), neu.ranks.size(), RankList(job->new_ranks), pairs.size()));
    }
  }
  if (only) {
    const bool in_base = base_index.count(*only) > 0, in_new = new_index.count(*only) > 0;
    if (!in_base || !in_new) {
      return InvalidArgument("--rank {}: {} (BASE has ranks {}, NEW has ranks {})", *only,
                             !in_base && !in_new ? "in neither run" : !in_base ? "only in NEW" : "only in BASE",
                             RankList(job->base_ranks), RankList(job->new_ranks));
    }
    std::erase_if(pairs, [&](const auto& p) { return base.ranks[p.first].rank.rank != *only; });
  }
  return pairs;
}

// The ranks with full tables: --rank, else the rank with the median delta and NEW's slowest.
std::set<int64_t> FocusRanks(const Run& base, const Run& neu, const std::vector<std::pair<size_t, size_t>>& pairs,
                             bool only_one, JobComparison* job) {
  std::vector<std::pair<double, int64_t>> deltas;
  std::set<int64_t> paired;
  for (const auto& [b, n] : pairs) {
    deltas.emplace_back(ComputeStepStats(neu.ranks[n]).mean_ns - ComputeStepStats(base.ranks[b]).mean_ns,
                        neu.ranks[n].rank.rank);
    paired.insert(neu.ranks[n].rank.rank);
  }
  std::sort(deltas.begin(), deltas.end());
  job->median_rank = deltas[(deltas.size() - 1) / 2].second;
  std::set<int64_t> focus = {job->median_rank};
  if (!only_one && paired.count(job->new_slowest_rank)) focus.insert(job->new_slowest_rank);
  job->focus_ranks.assign(focus.begin(), focus.end());
  return focus;
}

// Waiting for peers (when both runs have two or more ranks): a row of each rank's overall
// breakdown, and the median rank's in the job figures.
void AddPeerWait(const Run& base, const Run& neu, const std::vector<std::pair<size_t, size_t>>& pairs,
                 JobComparison* job) {
  const std::vector<double> base_wait = PeerWait(base), new_wait = PeerWait(neu);
  if (base_wait.empty() || new_wait.empty()) return;
  for (size_t i = 0; i < pairs.size(); ++i) {
    OverallRow row{"comm.wait", "waiting for peers at collectives", "communication", base_wait[pairs[i].first],
                   new_wait[pairs[i].second]};
    row.regression = row.delta_ns() > job->ranks[i].noise_ns;
    row.improvement = row.delta_ns() < -job->ranks[i].noise_ns;
    auto& rows = job->ranks[i].overall;
    auto pos = std::find_if(rows.begin(), rows.end(), [](const OverallRow& r) { return r.key == "comm.exposed"; });
    rows.insert(pos == rows.end() ? rows.end() : pos + 1, std::move(row));
  }
  job->base_comm_wait_ns = Median(base_wait);
  job->new_comm_wait_ns = Median(new_wait);
}

}  // namespace

size_t CountTraceFiles(const std::vector<std::string>& inputs) {
  auto files = DiscoverTraceFiles(inputs);
  return files.ok() ? files->size() : 0;
}

StatusOr<JobComparison> CompareJobs(const std::vector<std::string>& base_inputs,
                                    const std::vector<std::string>& new_inputs, const CompareOptions& opt) {
  JobComparison job;
  job.base_inputs = base_inputs;
  job.new_inputs = new_inputs;
  job.options = {opt.steps, opt.rank, opt.use_input_shapes, opt.op_map, opt.max_kernels, opt.keep_outlier_steps};
  RANKSCOPE_ASSIGN_OR_RETURN(RankCompareOptions rank_options, RankOptionsFor(opt));
  Run base, neu;
  base.label = "BASE";
  neu.label = "NEW";
  RANKSCOPE_RETURN_IF_ERROR(Load(base_inputs, new_inputs, opt, &base, &neu, &job.warnings));
  RANKSCOPE_ASSIGN_OR_RETURN(auto pairs, PairRanks(base, neu, opt.rank, &job));
  JobLevel(base, neu, &job);
  const std::set<int64_t> focus = FocusRanks(base, neu, pairs, opt.rank.has_value(), &job);
  job.ranks.resize(pairs.size());
  ParallelFor(pairs.size(), opt.threads == 0 ? DefaultThreadCount() : opt.threads, [&](size_t i) {
    const CompareSummary& b = base.ranks[pairs[i].first];
    const CompareSummary& n = neu.ranks[pairs[i].second];
    job.ranks[i] = CompareRanks(b, n, rank_options, focus.count(n.rank.rank) > 0 || pairs.size() == 1);
  });
  AddPeerWait(base, neu, pairs, &job);
  for (const RankComparison& r : job.ranks) {
    if (r.beyond_noise) job.changed_ranks.push_back(r.new_rank);
  }
  job.findings = CompareFindings(job.ranks);
  return job;
}

}  // namespace rankscope::compare
