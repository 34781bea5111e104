#include "rankscope/report/compare_report_json.h"

#include <cmath>

#include "rankscope/report/compare_report_text.h"
#include "rankscope/report/finding_json.h"

namespace rankscope {
namespace {

using nlohmann::json;
using namespace compare;

json Ns(double ns) { return json(std::llround(ns)); }
json Count(double c) { return c < 0 ? json(nullptr) : json(c); }
json Peak(double b) { return b < 0 ? json(nullptr) : json(std::llround(b)); }

json StepsJson(const StepStats& s) {
  return {{"kept", s.kept}, {"dropped", s.dropped}, {"mean_ns", Ns(s.mean_ns)}, {"sd_ns", Ns(s.sd_ns)},
          {"drift_ns", Ns(s.drift_ns)}};
}

json OverallJson(const OverallRow& r) {
  return {{"key", r.key},           {"label", r.label},           {"group", r.group},
          {"base_ns", Ns(r.base_ns)}, {"new_ns", Ns(r.new_ns)},     {"delta_ns", Ns(r.delta_ns())},
          {"base_count", Count(r.base_count)}, {"new_count", Count(r.new_count)},
          {"regression", r.regression}, {"improvement", r.improvement}};
}

json ObservationJson(const Observation& o) {
  return {{"kind", ObservationKindName(o.kind)}, {"text", DescribeObservation(o)}, {"value", o.value},
          {"reference", o.reference},           {"extra", o.extra},                 {"base", o.base_text},
          {"new", o.new_text}};
}

json DifferenceJson(const Difference& d, double step_delta) {
  json parts = json::array();
  for (const DiffPart& p : d.parts) {
    parts.push_back({{"where", p.where}, {"base_ns", Ns(p.base_ns)}, {"new_ns", Ns(p.new_ns)},
                     {"delta_ns", Ns(p.new_ns - p.base_ns)}});
  }
  return {{"cause", CauseName(d.cause)},
          {"subject", d.subject},
          {"subject_kind", d.subject_kind},
          {"text", DescribeDifference(d)},
          {"phase", d.phase},
          {"before", d.before},
          {"after", d.after},
          {"base_ns", Ns(d.base_ns)},
          {"new_ns", Ns(d.new_ns)},
          {"delta_ns", Ns(d.delta_ns())},
          {"share_of_delta", step_delta != 0 ? d.delta_ns() / step_delta : 0.0},
          {"base_host_ns", Ns(d.base_host_ns)},
          {"new_host_ns", Ns(d.new_host_ns)},
          {"base_count", d.base_count},
          {"new_count", d.new_count},
          {"beyond_noise", d.beyond_noise},
          {"cells", d.cells},
          {"parts", parts}};
}

json OperatorJson(const OperatorRow& o) {
  return {{"depth", o.depth},           {"name", o.name},
          {"path", o.path},             {"status", o.status},
          {"expanded", o.expanded},     {"module", o.module},
          {"phase", o.phase},           {"base_count", o.base_count},
          {"new_count", o.new_count},   {"base_host_ns", Ns(o.base_host_ns)},
          {"new_host_ns", Ns(o.new_host_ns)}, {"base_device_ns", Ns(o.base_device_ns)},
          {"new_device_ns", Ns(o.new_device_ns)}, {"base_attributed_ns", Ns(o.base_attributed_ns)},
          {"new_attributed_ns", Ns(o.new_attributed_ns)}, {"delta_ns", Ns(o.new_attributed_ns - o.base_attributed_ns)},
          {"base_shapes", o.base_shapes}, {"new_shapes", o.new_shapes},
          {"base_kernels", o.base_kernels}, {"new_kernels", o.new_kernels}};
}

json OperatorStatJson(const OperatorStatRow& o) {
  return {{"name", o.name},
          {"status", o.status},
          {"base_count", o.base_count},
          {"new_count", o.new_count},
          {"base_host_ns", Ns(o.base_host_ns)},
          {"new_host_ns", Ns(o.new_host_ns)},
          {"base_self_ns", Ns(o.base_self_ns)},
          {"new_self_ns", Ns(o.new_self_ns)},
          {"base_device_ns", Ns(o.base_device_ns)},
          {"new_device_ns", Ns(o.new_device_ns)},
          {"base_attributed_ns", Ns(o.base_attributed_ns)},
          {"new_attributed_ns", Ns(o.new_attributed_ns)}};
}

json ModuleJson(const ModuleRow& m) {
  return {{"depth", m.depth},
          {"path", m.path},
          {"name", m.name},
          {"status", m.status},
          {"source", m.source},
          {"base_count", m.base_count},
          {"new_count", m.new_count},
          {"base_host_ns", Ns(m.base_host_ns)},
          {"new_host_ns", Ns(m.new_host_ns)},
          {"base_host_self_ns", Ns(m.base_host_self_ns)},
          {"new_host_self_ns", Ns(m.new_host_self_ns)},
          {"base_device_ns", Ns(m.base_device_ns)},
          {"new_device_ns", Ns(m.new_device_ns)},
          {"base_device_self_ns", Ns(m.base_device_self_ns)},
          {"new_device_self_ns", Ns(m.new_device_self_ns)},
          {"base_backward_host_ns", Ns(m.base_backward_host_ns)},
          {"new_backward_host_ns", Ns(m.new_backward_host_ns)},
          {"base_backward_device_ns", Ns(m.base_backward_device_ns)},
          {"new_backward_device_ns", Ns(m.new_backward_device_ns)},
          {"base_attributed_ns", Ns(m.base_attributed_ns)},
          {"new_attributed_ns", Ns(m.new_attributed_ns)},
          {"delta_ns", Ns(m.new_attributed_ns - m.base_attributed_ns)},
          {"top_operators", m.top_operators}};
}

json KernelJson(const KernelDiffRow& k) {
  return {{"name", k.name},           {"class", k.kernel_class},   {"status", k.status},
          {"base_count", k.base_count}, {"new_count", k.new_count},  {"base_ns", Ns(k.base_ns)},
          {"new_ns", Ns(k.new_ns)},     {"delta_ns", Ns(k.new_ns - k.base_ns)}};
}

json KernelClassJson(const KernelClassRow& k) {
  return {{"class", k.kernel_class},  {"label", k.label},           {"base_count", k.base_count},
          {"new_count", k.new_count}, {"base_ns", Ns(k.base_ns)},   {"new_ns", Ns(k.new_ns)},
          {"delta_ns", Ns(k.new_ns - k.base_ns)}, {"base_kernels", k.base_names}, {"new_kernels", k.new_names},
          {"base_top", k.base_top},   {"new_top", k.new_top}};
}

json CommJson(const CommDiffRow& c) {
  return {{"op", c.op},
          {"dtype", c.dtype},
          {"size", c.size},
          {"on_gpu", c.on_gpu},
          {"base_algorithm", c.base_algorithm},
          {"new_algorithm", c.new_algorithm},
          {"base_count", c.base_count},
          {"new_count", c.new_count},
          {"base_ns", Ns(c.base_ns)},
          {"new_ns", Ns(c.new_ns)},
          {"base_exposed_ns", Ns(c.base_exposed_ns)},
          {"new_exposed_ns", Ns(c.new_exposed_ns)},
          {"base_bytes", Ns(c.base_bytes)},
          {"new_bytes", Ns(c.new_bytes)},
          {"base_algbw_gbps", c.base_algbw_gbps},
          {"new_algbw_gbps", c.new_algbw_gbps},
          {"base_busbw_gbps", c.base_busbw_gbps},
          {"new_busbw_gbps", c.new_busbw_gbps}};
}

json MemoryJson(const MemoryRow& m) {
  return {{"name", m.name},           {"base_allocs", m.base_allocs}, {"new_allocs", m.new_allocs},
          {"base_bytes", Ns(m.base_bytes)}, {"new_bytes", Ns(m.new_bytes)},
          {"base_peak_bytes", Peak(m.base_peak)}, {"new_peak_bytes", Peak(m.new_peak)}};
}

json MemoryPeakJson(const MemoryPeakRow& m) {
  return {{"device", m.device},
          {"base_peak_bytes", Peak(m.base_peak)},
          {"new_peak_bytes", Peak(m.new_peak)},
          {"base_reserved_bytes", Peak(m.base_reserved)},
          {"new_reserved_bytes", Peak(m.new_reserved)}};
}

template <typename T, typename F>
json Rows(const std::vector<T>& rows, F f) {
  json out = json::array();
  for (const T& r : rows) out.push_back(f(r));
  return out;
}

json RankJson(const RankComparison& r) {
  json differences = json::array();
  for (const Difference& d : r.differences) differences.push_back(DifferenceJson(d, r.delta_ns));
  return {{"base_rank", r.base_rank},
          {"new_rank", r.new_rank},
          {"base_path", r.base_path},
          {"new_path", r.new_path},
          {"base_devices", r.base_devices},
          {"new_devices", r.new_devices},
          {"steps", {{"base", StepsJson(r.base_steps)}, {"new", StepsJson(r.new_steps)}}},
          {"delta_ns", Ns(r.delta_ns)},
          {"noise_ns", Ns(r.noise_ns)},
          {"beyond_noise", r.beyond_noise},
          {"explained_ns", Ns(r.explained_ns)},
          {"unexplained_ns", Ns(r.unexplained_ns)},
          {"variation_ns", Ns(r.variation_ns)},
          {"aligned_share", r.aligned_share},
          {"overall", Rows(r.overall, OverallJson)},
          {"observations", Rows(r.observations, ObservationJson)},
          {"differences", differences},
          {"detailed", r.detailed},
          {"operators", Rows(r.operators, OperatorJson)},
          {"operator_stats", Rows(r.operator_stats, OperatorStatJson)},
          {"modules", Rows(r.modules, ModuleJson)},
          {"kernels", Rows(r.kernels, KernelJson)},
          {"kernel_classes", Rows(r.kernel_classes, KernelClassJson)},
          {"communication", Rows(r.communication, CommJson)},
          {"has_memory", r.has_memory},
          {"memory", Rows(r.memory, MemoryJson)},
          {"memory_peaks", Rows(r.memory_peaks, MemoryPeakJson)},
          {"warnings", r.warnings}};
}

json NullIfNegative(double v) { return v < 0 ? json(nullptr) : Ns(v); }

}  // namespace

json CompareToJson(const JobComparison& job) {
  json options = {{"steps", job.options.steps},
                  {"rank", job.options.rank ? json(*job.options.rank) : json(nullptr)},
                  {"use_input_shapes", job.options.use_input_shapes},
                  {"op_map", job.options.op_map},
                  {"max_kernels", job.options.max_kernels ? json(*job.options.max_kernels) : json(nullptr)},
                  {"keep_outlier_steps", job.options.keep_outlier_steps}};
  json job_json = {{"median_rank", job.median_rank},
                   {"base_median_step_ns", Ns(job.base_median_step_ns)},
                   {"new_median_step_ns", Ns(job.new_median_step_ns)},
                   {"base_slowest_rank", job.base_slowest_rank},
                   {"new_slowest_rank", job.new_slowest_rank},
                   {"base_slowest_step_ns", Ns(job.base_slowest_step_ns)},
                   {"new_slowest_step_ns", Ns(job.new_slowest_step_ns)},
                   {"base_comm_wait_ns", NullIfNegative(job.base_comm_wait_ns)},
                   {"new_comm_wait_ns", NullIfNegative(job.new_comm_wait_ns)},
                   {"changed_ranks", job.changed_ranks},
                   {"focus_ranks", job.focus_ranks}};
  return {{"schema", kCompareSchema},
          {"base", {{"inputs", job.base_inputs}, {"ranks", job.base_ranks}}},
          {"new", {{"inputs", job.new_inputs}, {"ranks", job.new_ranks}}},
          {"baseline", job.baseline_note.empty() ? json(nullptr) : json(job.baseline_note)},
          {"options", options},
          {"job", job_json},
          {"ranks", Rows(job.ranks, RankJson)},
          {"findings", FindingsToJson(job.findings)},
          {"warnings", job.warnings}};
}

void WriteCompareJson(const JobComparison& job, std::ostream& out) { out << CompareToJson(job).dump(1) << "\n"; }

}  // namespace rankscope
