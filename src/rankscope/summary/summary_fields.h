// The fields of a RankSummary, listed once for both directions of the summary format
// (summary_codec.h): `Fields(archive, value)` hands each member to the archive in order, and the
// writer and the reader are archives. The order here IS the wire format: adding, removing or
// reordering a member changes the format, so it must bump kSummaryFormatVersion (docs/scale.md).
//
// Not listed: RankSummary::path, rank and rank_resolved. The path is where the summary is found
// (the reader sets it), and ranks are resolved over the whole set of files after the map, as
// for traces.
#pragma once

#include "rankscope/analysis/rank_summary.h"

namespace rankscope::summary {

template <class A>
void Fields(A& a, StepSummary& s) {
  a(s.number), a(s.start_ns), a(s.end_ns), a(s.cpu_phase_ns), a(s.gpu_phase_ns), a(s.gpu_busy_ns), a(s.compute_ns),
      a(s.communication_ns), a(s.gpu_start_ns), a(s.gpu_end_ns), a(s.host_compute_ns), a(s.comm_exposed_ns),
      a(s.host_gpu_wait_ns), a(s.work_signature), a(s.shaped_ops);
}

template <class A>
void Fields(A& a, FunctionStat& f) {
  a(f.name), a(f.detail), a(f.cls), a(f.count), a(f.total_ns), a(f.median_ns), a(f.p99_ns), a(f.max_ns),
      a(f.in_window_ns), a(f.bottleneck_ns), a(f.bytes), a(f.wait), a(f.stalls), a(f.stall_ns);
}

template <class A>
void Fields(A& a, FunctionTable& t) {
  a(t.rows), a(t.omitted_rows), a(t.omitted_in_window_ns), a(t.omitted_max_in_window_ns), a(t.instances);
}

template <class A>
void Fields(A& a, GpuSummary& g) {
  a(g.busy_ns), a(g.exposed_ns), a(g.busy_ns_all), a(g.idle_ns), a(g.comm_compute_overlap_ns), a(g.devices),
      a(g.activities);
}

template <class A>
void Fields(A& a, StreamIdle& s) {
  a(s.device), a(s.stream), a(s.busy_ns), a(s.host_wait_ns), a(s.kernel_wait_ns), a(s.other_ns), a(s.edge_ns),
      a(s.gaps);
}

template <class A>
void Fields(A& a, LaunchDelayStats& l) {
  a(l.api), a(l.count), a(l.mean_ns), a(l.median_ns), a(l.p99_ns), a(l.max_ns), a(l.launch_call_mean_ns);
}

template <class A>
void Fields(A& a, QueueDepth& q) {
  a(q.device), a(q.stream), a(q.max_depth), a(q.mean_depth), a(q.empty_ns);
}

template <class A>
void Fields(A& a, LaunchSummary& l) {
  a(l.all), a(l.by_api), a(l.histogram), a(l.unlinked_activities), a(l.queues);
}

template <class A>
void Fields(A& a, CollectiveType& c) {
  a(c.op), a(c.algorithm), a(c.protocol), a(c.dtype), a(c.group_size), a(c.on_gpu), a(c.count), a(c.total_ns),
      a(c.median_ns), a(c.p99_ns), a(c.max_ns), a(c.bytes), a(c.algbw_gbps), a(c.busbw_gbps), a(c.exposed_ns),
      a(c.busy_ns), a(c.overlap_ns);
}

template <class A>
void Fields(A& a, CollectiveInstance& c) {
  a(c.start_ns), a(c.end_ns), a(c.launch_ns), a(c.bytes), a(c.seq), a(c.step), a(c.type), a(c.group),
      a(c.index_in_group), a(c.stream), a(c.peer);
}

template <class A>
void Fields(A& a, ProcessGroupRef& p) {
  a(p.name), a(p.desc), a(p.ranks), a(p.size);
}

template <class A>
void Fields(A& a, MemoryPeak& m) {
  a(m.device_type), a(m.device_id), a(m.peak_allocated), a(m.peak_reserved), a(m.trace_peak_allocated), a(m.events);
}

template <class A>
void Fields(A& a, OpAllocation& o) {
  a(o.op), a(o.count), a(o.bytes);
}

template <class A>
void Fields(A& a, MemorySummary& m) {
  a(m.devices), a(m.top_allocators);
}

template <class A>
void Fields(A& a, CpuSchedWindow& c) {
  a(c.run_ns), a(c.wait_ns), a(c.threads);
}

template <class A>
void Fields(A& a, RankSummary& r) {
  a(r.distributed_rank), a(r.world_size), a(r.backend), a(r.host_name), a(r.device_names), a(r.time_origin_ns),
      a(r.cpu_sched);
  a(r.window_mode), a(r.window_start_ns), a(r.window_end_ns), a(r.steps), a(r.steps_in_trace), a(r.step_source),
      a(r.step_marker);
  a(r.has_gpu), a(r.gpu), a(r.kernels), a(r.kernel_names), a(r.kernels_by_op), a(r.memory_ops), a(r.runtime_calls),
      a(r.cpu_ops), a(r.python_paths), a(r.collector_threads), a(r.untraced);
  a(r.collective_types), a(r.process_groups), a(r.pg_config), a(r.collectives), a(r.omitted_collectives), a(r.host_compute_ns),
      a(r.comm_host_overlap_ns), a(r.comm_busy_ns);
  a(r.idle_by_stream), a(r.kernel_wait_threshold_ns), a(r.launch), a(r.memory);
  a(r.warnings), a(r.skipped_events), a(r.trace_events), a(r.ingest_ns), a(r.analysis_ns);
}

}  // namespace rankscope::summary
