// The replayed what-if (cluster/step_replay.h) at scale: a semi-synthetic GPipe job of
// --stages x --data ranks, --microbatches per step, --steps profiled steps
// (tests/cpp/synthetic_pipeline.h), one rank slower than its stage peers. Prints the time and
// peak memory of each stage: matching the collectives, building the graph, the fidelity replay
// and the standard what-ifs (Summarize). Numbers, never a verdict: see bench/README.md.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "rankscope/cluster/clock_offsets.h"
#include "rankscope/cluster/collective_matching.h"
#include "rankscope/cluster/layout.h"
#include "rankscope/cluster/step_replay.h"
#include "synthetic_pipeline.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double PeakMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rankscope;
  CLI::App app{"replay bench"};
  testing::PipelineJob job;
  job.stages = 4;
  job.data = 256;
  job.microbatches = 32;
  job.steps = 50;
  app.add_option("--stages", job.stages);
  app.add_option("--data", job.data);
  app.add_option("--microbatches", job.microbatches);
  app.add_option("--steps", job.steps);
  CLI11_PARSE(app, argc, argv);
  job.rank_extra_ms.assign(static_cast<size_t>(job.stages * job.data), 0);
  job.rank_extra_ms[1] = 0.5;

  auto t = std::chrono::steady_clock::now();
  const std::vector<RankSummary> ranks = testing::SimulatePipeline(job);
  size_t instances = 0;
  for (const RankSummary& r : ranks) instances += r.collectives.size();
  std::printf("job: %d stages x %d data ranks = %zu ranks, %d micro-batches, %d steps, %zu collective "
              "participations (simulated in %.2f s)\n",
              job.stages, job.data, ranks.size(), job.microbatches, job.steps, instances, Seconds(t));
  t = std::chrono::steady_clock::now();
  const CollectiveMatching matching = MatchCollectives(ranks);
  std::printf("match collectives: %.2f s (%zu instances)\n", Seconds(t), matching.instances.size());
  t = std::chrono::steady_clock::now();
  std::vector<RankHost> hosts;
  for (const RankSummary& r : ranks) hosts.push_back({r.host_name, HostSource::kTrace});
  const ClockEstimate clock = EstimateClockOffsets(ranks, hosts, matching);
  const JobLayout layout = InferLayout(ranks, nullptr);
  std::printf("clock offsets + layout: %.2f s\n", Seconds(t));
  t = std::chrono::steady_clock::now();
  const StepGraph graph(ranks, matching, clock, layout);
  std::printf("build the graph + one replay: %.2f s%s\n", Seconds(t), graph.built() ? "" : " (not built)");
  t = std::chrono::steady_clock::now();
  const StepReplay r = graph.Summarize();
  const size_t replays = 3 + r.communication.size() + r.by_rank.size() + r.stage_workers.size() + r.stage_balance.size();
  std::printf("summarize (%zu replays): %.2f s; fidelity %.4f %%; rank %lld like its peers saves %.2f ms/step\n",
              replays, Seconds(t), 100 * r.max_step_error, r.by_rank.empty() ? -1LL : static_cast<long long>(r.by_rank[0].rank),
              r.by_rank.empty() ? 0.0 : r.by_rank[0].saving_ns / 1e6);
  std::printf("peak RSS: %.0f MiB\n", PeakMiB());
  return 0;
}
