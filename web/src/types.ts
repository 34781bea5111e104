// The JSON documents the page reads. The report fields are those of `rankscope analyze --json`
// (docs/report-schema.md); the view documents are `rankscope.views/1` (same file, "Web UI
// documents"). Only the fields the views use are typed; every number is the engine's.

export type Phases = Record<string, number>;

export interface StepRow {
  number: number;
  start_ns: number;
  end_ns: number;
  duration_ns: number;
  cpu_phases_ns: Phases;
  gpu_phases_ns?: Phases;
  comm_exposed_ns: number;
}

export interface RankRow {
  rank: number;
  host_name?: string;
  path?: string;
  window?: { mode: string; duration_ns: number; steps: number };
  steps: StepRow[];
  gpu?: { utilization: number } | null;
  warnings?: string[];
}

export interface ClusterRank {
  rank: number;
  host: string;
  clock_offset_ns: number;
  steps: number;
  step_ns: number;
  comm_wait_ns: number;
  local_ns: number;
  local_excess_ns: number;
  compute_ns: number;
  cpu_phases_ns: Phases | null;
  gpu_phases_ns: Phases | null;
  gpu_utilization: number | null;
  collectives: number;
  last_arriver_votes: number;
  lateness_ns: number;
  late_sum_ns: number;
  arrival_steps: number;
  late_steps: number;
  imposed_wait_ns: number;
  outlier: boolean;
  slow: boolean;
}

export interface PhaseOutlier {
  phase: string;
  side: 'cpu' | 'gpu';
  rank: number;
  value_ns: number;
  median_ns: number;
  excess_ns: number;
}

export interface FunctionOutlierRow {
  kind: string;
  name: string;
  detail: string;
  rank: number;
  value_ns: number;
  median_ns: number;
  excess_ns: number;
  ratio: number | null;
}

export interface Cluster {
  unit: string;
  step_ns: number;
  local_time: { median_ns: number; mad_ns: number; threshold_ns: number };
  ranks: ClusterRank[];
  hosts: { host: string; ranks: number[]; slow_ranks: number[] }[];
  collectives: { matched: number; complete: number; median_skew_ns: number; max_skew_ns: number };
  phases: PhaseOutlier[];
  functions: FunctionOutlierRow[];
  gpu_utilization: { abnormal: { rank: number; value: number; low: boolean }[] } | null;
  what_if: { ranks: number[]; step_ns: number; estimated_step_ns: number; saving_ns: number };
  // Every finding about ranks fixed at once; null below two such findings.
  what_if_findings?: { findings: number; ranks: number[]; step_ns: number; estimated_step_ns: number; saving_ns: number } | null;
}

// Evidence and next steps are sentences in report/1; objects with a text in later versions.
export type Sentence = string | { text?: string; sentence?: string; [k: string]: unknown };

export interface FindingCost {
  method: string;  // what_if_like_median, what_if_faster, added_work, window_share, delta, none
  unit: string;
  saving_ns: number;
  share: number;
  step_ns: number;
  estimated_step_ns: number;
  added_ns: number;
  window_share: number;
}

// report/2 (the engine's one Finding type); report/1's cost fields are kept for its JSON files.
export interface FindingRow {
  kind: string;
  title?: string;
  sentence?: string;  // hang findings (rankscope.hang/1) say it in one sentence
  cost?: FindingCost;
  cost_text?: string;
  subject?: { name: string; kind: string; detail: string } | null;
  ranks?: number[];
  host?: string | null;
  hosts?: string[];
  cost_ns?: number;
  cost_share?: number;
  step_ns?: number;
  estimated_step_ns?: number;
  evidence?: Sentence[];
  next?: Sentence | Sentence[] | null;
  functions?: FunctionOutlierRow[];
  phase?: PhaseOutlier | null;
  severity?: string;
}

export interface TelemetryFindingRow {
  kind: string;
  host: string;
  summary: string;
  evidence?: Sentence[] | Sentence;
  next?: Sentence;
  severity?: number | string;
}

export interface Overview {
  schema: string;
  job: { files: number; ranks_analysed: number; world_size: number | null; backend: string };
  ranks: RankRow[];
  cluster: Cluster | null;
  findings: FindingRow[];
  telemetry: { nodes: { host: string }[]; findings?: TelemetryFindingRow[] } | null;
  warnings: string[];
  errors: { path: string; error: string }[];
  analysis_s?: number;
  hang?: HangReport;  // a stack snapshot: its hang analysis
  comparison?: ComparisonMarker | null;  // the job has a run comparison (its Compare tab)
}

// `source`: "comparison" (a comparison JSON: the job is the comparison) or "baseline" (a capture
// the daemon compared with its job's baseline: baseline-comparison beside the traces).
export interface ComparisonMarker {
  source: 'comparison' | 'baseline';
  base?: string[];
  new?: string[];
  baseline?: string | null;
}

// `rankscope compare --json` (schema rankscope.compare/1, docs/compare-schema.md): the compare
// engine's own document, drawn as it is. Times are ns per step.
export interface CompareSteps {
  kept: number;
  dropped: number[];
  mean_ns: number;
  sd_ns: number;
  drift_ns: number;
}

export interface CompareOverallRow {
  key: string;
  label: string;
  group: string;
  base_ns: number;
  new_ns: number;
  delta_ns: number;
  base_count: number | null;
  new_count: number | null;
  regression: boolean;
  improvement: boolean;
}

export interface CompareDifference {
  cause: string;
  subject: string;
  subject_kind: string;
  text: string;
  phase: string;
  before: string;
  after: string;
  base_ns: number;
  new_ns: number;
  delta_ns: number;
  share_of_delta: number;
  base_count: number;
  new_count: number;
  beyond_noise: boolean;
  parts: { where: string; base_ns: number; new_ns: number; delta_ns: number }[];
}

export interface CompareOperatorRow {
  depth: number;
  name: string;
  status: string;
  module: string;
  phase: string;
  base_count: number;
  new_count: number;
  base_attributed_ns: number;
  new_attributed_ns: number;
  base_device_ns: number;
  new_device_ns: number;
  delta_ns: number;
}

export interface CompareKernelClass {
  class: string;
  label: string;
  base_count: number;
  new_count: number;
  base_ns: number;
  new_ns: number;
  delta_ns: number;
  base_top: string;
  new_top: string;
}

export interface CompareCommRow {
  op: string;
  dtype: string;
  size: string;
  base_count: number;
  new_count: number;
  base_ns: number;
  new_ns: number;
  base_exposed_ns: number;
  new_exposed_ns: number;
}

export interface CompareModuleRow {
  depth: number;
  path: string;
  name: string;
  status: string;
  source: string;
  base_attributed_ns: number;
  new_attributed_ns: number;
  delta_ns: number;
}

export interface CompareRankPair {
  base_rank: number;
  new_rank: number;
  base_devices: string[];
  new_devices: string[];
  steps: { base: CompareSteps; new: CompareSteps };
  delta_ns: number;
  noise_ns: number;
  beyond_noise: boolean;
  explained_ns: number;
  unexplained_ns: number;
  variation_ns: number;
  aligned_share: number;
  overall: CompareOverallRow[];
  observations: { kind: string; text: string }[];
  differences: CompareDifference[];
  detailed: boolean;
  operators: CompareOperatorRow[];
  modules: CompareModuleRow[];
  kernel_classes: CompareKernelClass[];
  communication: CompareCommRow[];
  warnings: string[];
}

export interface Comparison {
  schema: string;
  base: { inputs: string[]; ranks: number[] };
  new: { inputs: string[]; ranks: number[] };
  baseline: string | null;
  job: {
    median_rank: number | null;
    base_median_step_ns: number;
    new_median_step_ns: number;
    base_slowest_rank: number | null;
    new_slowest_rank: number | null;
    changed_ranks: number[];
    focus_ranks: number[];
  };
  ranks: CompareRankPair[];
  findings: FindingRow[];
  warnings: string[];
}

// `rankscope hang --json` (schema rankscope.hang/1, docs/hang.md).
export interface HangFrame {
  file: string;
  line: number;
  function: string;
  code: string;
  native: boolean;
}

export interface HangCall {
  op: string;
  sizes: number[][];
  dtypes: string[];
}

export interface HangReport {
  schema: string;
  job: string;
  capture: string;
  world_size: number | null;
  stalled: boolean;
  stalled_for_s: number | null;
  ranks: { rank: number; host: string; pid: number; how: string; stack_taken_by: string; steps_completed: number | null; seconds_since_last_step: number | null; stalled: boolean; has_stacks: boolean; has_flight_recorder: boolean }[];
  thread_roles: {
    role: string;
    ranks: number[];
    has_majority: boolean;
    groups: { ranks: number[]; rank_ranges: string; majority: boolean; threads: number; frames: HangFrame[] }[];
    odd_ones_out?: { ranks?: number[]; rank_ranges?: string; shared_frames?: number; [k: string]: unknown }[];
  }[];
  process_groups: {
    name: string;
    desc: string;
    members: number[];
    first_open: { seq: number; call: HangCall; entered: number[]; completed: number[]; missing: number[]; unknown: number[]; pending_s: number | null } | null;
    members_state: { rank: number; has_dump: boolean; last_completed: number | null; last_entered: number | null; pending_seq?: number | null; pending_s?: number | null; pending_call?: HangCall | null }[];
    mismatches: { seq: number; field: string; [k: string]: unknown }[];
  }[];
  warnings: string[];
  problems: { path: string; message: string }[];
}

export interface TimelineCollective {
  op: string;
  group: number;
  seq: number | null;
  participants: number;
  complete: boolean;
  first_arrival_ns?: number;
  median_arrival_ns?: number;
  last_arrival_ns?: number;
  skew_ns?: number;
  first_rank?: number;
  last_rank: number | null;
  last_gap_ns?: number;
}

export interface TimelineLane {
  rank: number;
  host: string;
  start_ns: number;
  end_ns: number;
  gpu_start_ns: number | null;
  gpu_end_ns: number | null;
  cpu_phases_ns: Phases;
  comm_exposed_ns: number;
  last_votes: number;
  spans: [number, number, number, number | null][];
}

export interface Timeline {
  step: number | null;
  steps: number[];
  error?: string;
  origin_unix_ns?: number;
  reference_host?: string | null;
  ops: string[];
  ranks: TimelineLane[];
  collectives: TimelineCollective[];
  omitted_spans: number;
}

export interface MatrixTotals {
  count: number;
  bytes: number;
  time_ns: number;
  bandwidth_gbps: number | null;
}

export interface Matrix {
  level: 'rank' | 'host' | 'block';
  labels: string[];
  hosts: string[];
  count: number[][];
  bytes: number[][];
  time_ns: number[][];
  bandwidth_gbps: (number | null)[][];
  intra_host: MatrixTotals;
  inter_host: MatrixTotals;
  collectives: MatrixTotals;
  point_to_point: MatrixTotals;
  instances: number;
  unknown_bytes: number;
}

export interface SpreadFunction {
  name: string;
  detail: string;
  compared: number;
  min_ns: number;
  q1_ns: number;
  median_ns: number;
  q3_ns: number;
  max_ns: number;
  values_ns: (number | null)[];
  outliers: { rank: number; value_ns: number; excess_ns: number; threshold_ns: number }[];
}

export interface FunctionSpread {
  unit: string;
  ranks: number[];
  kinds: { kind: string; functions: SpreadFunction[]; omitted: number }[];
}

export interface TelemetrySeries {
  chart: string;
  unit: string;
  metric: string;
  name: string;
  points: [number, number][];
}

export interface TelemetryNode {
  host: string;
  source: string;
  duration_ms: number;
  gpu: string;
  ranks: number[];
  steps_of_rank: number | null;
  steps: { number: number; start_ms: number; end_ms: number }[];
  series: TelemetrySeries[];
  warnings: string[];
}

export interface TelemetryDoc {
  nodes: TelemetryNode[];
  warnings: string[];
}

// What an HTML report carries inline (ViewBundleJson).
export interface Bundle {
  schema: string;
  overview: Overview;
  timeline_steps?: number[];
  default_step?: number | null;
  timelines?: Record<string, Timeline>;
  matrix?: Matrix;
  functions?: FunctionSpread;
  telemetry?: TelemetryDoc;
  comparison?: Comparison;  // `rankscope compare --html`
}
