#include "synthetic_pipeline.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace rankscope::testing {
namespace {

constexpr double kMs = 1e6;
constexpr int64_t kOrigin = 1'700'000'000'000'000'000;  // absolute ns, like a real trace's
constexpr double kPostedEarlyNs = 10'000;                // a receive whose data is there: 10 us

std::string RankList(const std::vector<int64_t>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

class Simulator {
 public:
  explicit Simulator(const PipelineJob& job) : job_(job), n_(job.stages * job.data) {
    ranks_.resize(static_cast<size_t>(n_));
    now_.assign(static_cast<size_t>(n_), 0);
    for (int r = 0; r < n_; ++r) Describe(r);
  }

  std::vector<RankSummary> Run() {
    // One step of warm-up first, unrecorded (the profiler's schedule waits and warms up too):
    // every rank starts the job at time 0, so the first step of each stage is shorter.
    for (int k = -1; k < job_.steps; ++k) Step(k);
    return std::move(ranks_);
  }

 private:
  int RankOf(int stage, int d) const { return d + job_.data * stage; }

  // Groups: 0 world, 1 this rank's pipeline column, 2 its stage's data-parallel group.
  void Describe(int r) {
    RankSummary& s = ranks_[static_cast<size_t>(r)];
    const int stage = r / job_.data, d = r % job_.data;
    s.path = "rank" + std::to_string(r) + ".pt.trace.json";
    s.rank.rank = r;
    s.rank_resolved = true;
    s.distributed_rank = r;
    s.world_size = n_;
    s.backend = "gloo";
    s.host_name = "node" + std::to_string(r / 8);
    std::vector<int64_t> world, column, data;
    for (int i = 0; i < n_; ++i) world.push_back(i);
    for (int i = 0; i < job_.stages; ++i) column.push_back(RankOf(i, d));
    for (int i = 0; i < job_.data; ++i) data.push_back(RankOf(stage, i));
    s.process_groups = {{"0", "default_pg", RankList(world), n_},
                        {"pp" + std::to_string(d), "pipeline", RankList(column), job_.stages},
                        {"dp" + std::to_string(stage), "data_parallel", RankList(data), job_.data}};
    s.pg_config = s.process_groups;
    for (const char* op : {"send", "recv", "all_reduce"}) {
      CollectiveType t;
      t.op = op;
      t.on_gpu = false;
      t.dtype = "Float";
      s.collective_types.push_back(t);
    }
  }

  // A stage with more layers does proportionally more forward, backward and optimizer work.
  double Scale(int r) const {
    const size_t stage = static_cast<size_t>(r / job_.data);
    return stage < job_.stage_scale.size() ? job_.stage_scale[stage] : 1.0;
  }

  double ForwardNs(int r, int k) const {
    double ms = job_.forward_ms * Scale(r);
    if (static_cast<size_t>(r) < job_.rank_extra_ms.size()) ms += job_.rank_extra_ms[static_cast<size_t>(r)];
    if (static_cast<size_t>(k) < job_.step_rank_extra_ms.size() &&
        static_cast<size_t>(r) < job_.step_rank_extra_ms[static_cast<size_t>(k)].size()) {
      ms += job_.step_rank_extra_ms[static_cast<size_t>(k)][static_cast<size_t>(r)];
    }
    return ms * kMs;
  }

  void Record(int r, uint32_t type, uint32_t group, int64_t seq, int k, double start, double end) {
    exposed_[static_cast<size_t>(r)] += end - start;
    if (k < 0) return;
    RankSummary& s = ranks_[static_cast<size_t>(r)];
    CollectiveInstance c;
    c.start_ns = kOrigin + std::llround(start);
    c.end_ns = kOrigin + std::llround(end);
    c.type = type;
    c.group = group;
    c.seq = seq;
    c.step = k;
    c.bytes = type == 2 ? 64 << 20 : 1 << 20;
    c.index_in_group = static_cast<uint32_t>(s.collectives.size());
    s.collectives.push_back(c);
  }

  // A send from `from` to `to` in pipeline column d: asynchronous for the sender; the receiver
  // (posted at its own now) gets the data at max(posted + 10 us, sender's arrival + transfer).
  double Send(int from, int d, int k) {
    const double arrive = now_[static_cast<size_t>(from)];
    const double end = arrive + job_.p2p_ms * kMs;
    const int64_t seq = seq_[static_cast<size_t>(d)]++;
    Record(from, 0, 1, seq, k, arrive, end);
    now_[static_cast<size_t>(from)] = end;
    pending_seq_ = seq;
    return arrive;
  }

  void Receive(int to, int k, double sender_arrival, int64_t seq) {
    const double posted = now_[static_cast<size_t>(to)];
    const double end = std::max(posted + kPostedEarlyNs, sender_arrival + job_.p2p_ms * kMs);
    Record(to, 1, 1, seq, k, posted, end);
    now_[static_cast<size_t>(to)] = end;
  }

  void Step(int k) {
    const size_t n = static_cast<size_t>(n_);
    std::vector<double> start = now_;
    exposed_.assign(n, 0);
    const int m = job_.microbatches;
    // Sends waiting for their receiver: [column][micro-batch] -> (sender's arrival, seq).
    std::vector<std::vector<std::pair<double, int64_t>>> sent(static_cast<size_t>(job_.data),
                                                              std::vector<std::pair<double, int64_t>>(static_cast<size_t>(m)));
    seq_.resize(static_cast<size_t>(job_.data), 0);
    for (int stage = 0; stage < job_.stages; ++stage) {  // forward
      for (int d = 0; d < job_.data; ++d) {
        const int r = RankOf(stage, d);
        for (int i = 0; i < m; ++i) {
          if (stage > 0) Receive(r, k, sent[d][i].first, sent[d][i].second);
          now_[static_cast<size_t>(r)] += ForwardNs(r, k);
          if (stage + 1 < job_.stages) sent[d][i] = {Send(r, d, k), pending_seq_};
        }
      }
    }
    for (int stage = job_.stages - 1; stage >= 0; --stage) {  // backward
      for (int d = 0; d < job_.data; ++d) {
        const int r = RankOf(stage, d);
        for (int i = 0; i < m; ++i) {
          if (stage + 1 < job_.stages) Receive(r, k, sent[d][i].first, sent[d][i].second);
          now_[static_cast<size_t>(r)] += job_.backward_ms * Scale(r) * kMs;
          if (stage > 0) sent[d][i] = {Send(r, d, k), pending_seq_};
        }
      }
    }
    for (int stage = 0; stage < job_.stages; ++stage) {  // data-parallel all-reduce, optimizer
      double last = 0;
      for (int d = 0; d < job_.data; ++d) last = std::max(last, now_[static_cast<size_t>(RankOf(stage, d))]);
      for (int d = 0; d < job_.data; ++d) {
        const int r = RankOf(stage, d);
        if (job_.data > 1) {
          const double end = last + job_.allreduce_ms * kMs;
          Record(r, 2, 2, allreduce_seq_, k, now_[static_cast<size_t>(r)], end);
          now_[static_cast<size_t>(r)] = end;
        }
        now_[static_cast<size_t>(r)] += job_.optimizer_ms * Scale(r) * kMs;
      }
    }
    ++allreduce_seq_;
    if (k < 0) return;
    for (size_t r = 0; r < n; ++r) {
      StepSummary st;
      st.number = k;
      st.start_ns = kOrigin + std::llround(start[r]);
      st.end_ns = kOrigin + std::llround(now_[r]);
      st.comm_exposed_ns = std::llround(exposed_[r]);
      st.host_compute_ns = st.duration_ns() - st.comm_exposed_ns;
      st.cpu_phase_ns[static_cast<int>(StepPhase::kForward)] = st.duration_ns();
      RankSummary& s = ranks_[r];
      if (s.steps.empty()) s.window_start_ns = st.start_ns;
      s.window_end_ns = st.end_ns;
      s.steps.push_back(st);
      s.steps_in_trace = s.steps.size();
    }
  }

  const PipelineJob& job_;
  const int n_;
  std::vector<RankSummary> ranks_;
  std::vector<double> now_;      // per rank, relative to kOrigin
  std::vector<double> exposed_;  // per rank, this step's time inside collectives
  std::vector<int64_t> seq_;     // per pipeline column
  int64_t allreduce_seq_ = 0;
  int64_t pending_seq_ = 0;
};

}  // namespace

std::vector<RankSummary> SimulatePipeline(const PipelineJob& job) { return Simulator(job).Run(); }

double MeanStepNs(const std::vector<RankSummary>& ranks) {
  double sum = 0;
  size_t n = 0;
  for (const RankSummary& r : ranks) {
    for (const StepSummary& s : r.steps) {
      sum += static_cast<double>(s.duration_ns());
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : 0;
}

}  // namespace rankscope::testing
