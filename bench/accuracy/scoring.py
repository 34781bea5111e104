"""Scoring one `rankscope analyze --json` report against the fault that was injected.

What counts (docs/cluster.md, "Accuracy"):
  * rank: the top finding names exactly the faulty ranks (a slow node: its ranks, or a slow_node
    finding about its host). One of the node's ranks alone is a miss: it says "this rank", not
    "this machine" (until round 5 it counted);
  * function: the top finding names the injected function at the level it was injected — the
    first function it lists, or its subject — matching one of the kind's patterns below (a
    phase counts where the fault has no function of its own, e.g. a DataLoader sleep);
  * clean runs: any finding is a false finding, except a cpu_contention finding, which says that
    the host starved a rank of CPU (measured by the kernel, not inferred from the trace), and an
    uneven_timing finding, which says that the ranks ran the same operators on the same shapes and
    still took different times (equal work signatures, nothing about the job's code and no
    saving claimed), and a stalled_calls finding, which says that a function was abnormal on a
    rank only through calls during which the thread was off its CPU: those are counted apart, as
    notes about the machine;
  * without Python stacks (truth "with_stack": false) the function is the finest level the trace
    can name: a sleep is untraced time between two recorded slices, the DDP communication hook
    is inside autograd's AccumulateGrad (NO_STACK_PATTERNS);
  * what-if: the top finding's cost (estimated saving per step) against the measured saving,
    the faulty run's step time minus the fault-free run's (both as the reports measure them);
    run_accuracy.py also sets it against the saving measured while the profiler records (the
    run the trace shows), which tells the model's error from the profiler's effect on the job;
  * two faults at once (truth "faults": each kind on its ranks): rank and function are right when
    the first two findings about ranks name each fault's rank alone and its function; the what-if
    is the report's saving for fixing every finding together (`cluster.what_if_findings`) against
    the measured saving of fixing both.
"""

import re

# Substrings (case-insensitive) that identify the injected function, per fault kind. Extra
# compute is matmuls (CPU ops aten::mm/matmul/tanh; GEMM kernels on a GPU) run from the hook's
# Python function; sleeps are time.sleep frames ("<built-in function sleep>").
COMPUTE = ["aten::mm", "aten::matmul", "aten::tanh", "aten::addmm", "gemm", "nvjet", "cutlass", "xmma",
           "ground_truth.py(", "<built-in method mm", "<built-in method matmul", "<built-in method tanh"]
PATTERNS = {
    "slow-forward": COMPUTE + ["forward_hook"],
    "slow-backward": COMPUTE + ["backward_hook"],
    "slow-optimizer": COMPUTE + ["optimizer_hook"],
    "slow-kernel-shapes": COMPUTE,
    "slow-collective": ["sleep", "delayed_allreduce"],
    "host-sleep": ["sleep"],
    "host-stall": ["sleep"],
    "slow-data": ["__getitem__", "sleep", "dataloader", "data_loading"],
    "cpu-hog": ["cpu_hog", "cpuhog"],
}
# Findings about the machine rather than the job (the kernel measured it; or the ranks did the same
# work and their times still differ): not false on a clean run.
ENVIRONMENT = {"cpu_contention", "uneven_timing", "stalled_calls"}
# Without Python stacks (torch.profiler's default) a sleep is untraced time between two recorded
# slices (analysis/untraced_time.h), and a hook — the DDP communication hook, the tensor hook of
# the backward fault — runs inside autograd's evaluate_function of the AccumulateGrad node that
# fires it: the level the trace can name.
NO_STACK_PATTERNS = {
    "slow-collective": ["accumulategrad"],
    "slow-backward": ["accumulategrad"],
}
NO_STACK_UNTRACED = {"slow-collective", "host-sleep", "host-stall", "slow-data"}
# ... and a pure-Python thread is the process's CPU time that no recorded slice explains (the
# kernel's count, cluster/unrecorded_cpu.h).
NO_STACK_KINDS = {"cpu-hog": {"cpu_time"}}
# Faults whose level is a phase when no function names them.
PHASE_OK = {"slow-data": {"data_loading"}}
# A slow kernel spread over launch shapes must be named at the kernel-name level: a row keyed by
# one grid|block explains only a part of it.
NAME_LEVEL = {"slow-kernel-shapes"}


def _function_of(finding):
    """(kind, name, detail) of the function the finding blames, or None. Report schema 2: its
    subject when that is a function, else its first function evidence; schema 1: functions[0]."""
    subject = finding.get("subject")
    if isinstance(subject, dict) and subject.get("kind") not in (None, "", "phase"):
        return subject.get("kind", ""), subject.get("name", ""), subject.get("detail", "") or ""
    for e in finding.get("evidence") or []:
        if isinstance(e, dict) and e.get("kind") == "function":
            return e.get("subject_kind") or "", e.get("subject") or "", e.get("detail") or ""
    fns = finding.get("functions") or []
    if fns:
        f = fns[0]
        return f.get("kind", ""), f.get("name", ""), f.get("detail", "") or ""
    return None


def _phase_of(finding):
    subject = finding.get("subject")
    if isinstance(subject, dict) and subject.get("kind") == "phase":
        return subject.get("name")
    for e in finding.get("evidence") or []:
        if isinstance(e, dict) and e.get("kind") == "phase":
            return e.get("subject")
    p = finding.get("phase")
    if isinstance(p, dict):
        return p.get("phase")
    return p if isinstance(p, str) else None


def finding_summary(finding):
    fn = _function_of(finding)
    return {
        "kind": finding.get("kind"),
        "ranks": sorted(finding.get("ranks") or []),
        "host": finding.get("host") or (finding.get("hosts") or [None])[0],
        "function": fn,
        "phase": _phase_of(finding),
        "cost_ns": (finding.get("cost") or {}).get("saving_ns", finding.get("cost_ns", 0)) or 0,
        "costed": (finding.get("cost") or {}).get("method", "what_if") not in ("added_work", "none"),
    }


def function_matches(kind, fn, phase, patterns=None, with_stack=True):
    patterns = patterns or PATTERNS.get(kind)
    if not patterns:
        return None
    if not with_stack:
        patterns = patterns + NO_STACK_PATTERNS.get(kind, [])
    if fn is not None:
        fkind, name, detail = fn
        if not with_stack and fkind == "untraced" and kind in NO_STACK_UNTRACED:
            return True
        if not with_stack and fkind in NO_STACK_KINDS.get(kind, ()):
            return True
        # A call path names every frame from the thread's root: only its innermost one says
        # which function it is.
        text = (name.rsplit("|", 1)[-1] if fkind == "python_path" else name).lower()
        if kind in NAME_LEVEL and detail and "|" in detail and fkind == "kernel":
            return False  # one launch shape of a slowdown spread over many
        if any(p.lower() in text for p in patterns):
            return True
    return phase in PHASE_OK.get(kind, set())


def in_tables(cluster, ranks, kind, patterns=None, with_stack=True):
    """Whether the anomaly tables (cluster.functions, cluster.phases) name the injected function of
    `kind` on one of `ranks`: a miss of the findings is then the findings layer's, not the evidence's."""
    ranks_by_index = [r.get("rank") for r in cluster.get("ranks") or []]

    def rank_of(row):
        i = row.get("rank")
        return ranks_by_index[i] if isinstance(i, int) and i < len(ranks_by_index) and \
            "rank_index" in row else i
    table = [f for f in cluster.get("functions") or [] if rank_of(f) in ranks and
             function_matches(kind, (f.get("kind", ""), f.get("name", ""), f.get("detail", "")), None, patterns,
                              with_stack)]
    phases = [p for p in cluster.get("phases") or [] if rank_of(p) in ranks and
              p.get("phase") in PHASE_OK.get(kind, set())]
    return bool(table or phases)


def score_two(report, truth, clean_step_ns=None, step_ns_measured=None):
    """A scenario with several faults at once (truth["faults"]: [{"kind", "ranks"}], one rank each)."""
    findings = [f for f in report.get("findings") or [] if f.get("kind") not in ENVIRONMENT]
    cluster = report.get("cluster") or {}
    step_ns = cluster.get("step_ns") or 0
    faults = truth["faults"]
    firsts = [finding_summary(f) for f in findings[:len(faults)]]
    out = {"expected_ranks": sorted(truth["ranks"]), "findings": len(findings), "top": firsts[0] if firsts else None,
           "named": firsts, "step_ns": step_ns}
    by_ranks = {tuple(f["ranks"]): f for f in firsts}
    named = [by_ranks.get(tuple(sorted(fault["ranks"]))) for fault in faults]
    out["rank_ok"] = all(named) and len(by_ranks) == len(faults)
    with_stack = truth.get("with_stack", True)
    out["function_ok"] = out["rank_ok"] and all(function_matches(fault["kind"], f["function"], f["phase"], None,
                                                                 with_stack)
                                                for fault, f in zip(faults, named))
    out["table_ok"] = all(in_tables(cluster, set(fault["ranks"]), fault["kind"], None, with_stack) for fault in faults)
    if clean_step_ns and step_ns:
        combined = cluster.get("what_if_findings") or {}
        out["measured_saving_ns"] = (step_ns_measured or step_ns) - clean_step_ns
        out["estimated_saving_ns"] = combined.get("saving_ns", 0) if out["rank_ok"] else 0
        out["costed"] = bool(out["rank_ok"] and combined)
    return out


def score(report, truth, hosts=None, clean_step_ns=None, step_ns_measured=None):
    """One scenario. `truth`: {"kind", "ranks", "ms"} (and "faults" for several at once); `hosts`:
    rank -> host (for slow nodes). Returns a dict with expected/named and the verdicts."""
    if truth.get("faults"):
        return score_two(report, truth, clean_step_ns, step_ns_measured)
    findings = report.get("findings") or []
    cluster = report.get("cluster") or {}
    step_ns = cluster.get("step_ns") or 0
    top = finding_summary(findings[0]) if findings else None
    clean = truth["kind"] == "none" or not truth["ranks"]
    out = {"expected_ranks": sorted(truth["ranks"]), "findings": len(findings), "top": top, "step_ns": step_ns}
    if clean:
        out["false_findings"] = sum(1 for f in findings if f.get("kind") not in ENVIRONMENT)
        out["contention_notes"] = len(findings) - out["false_findings"]
        return out
    expected = set(truth["ranks"])
    node = len(expected) > 1 and hosts is not None
    host = hosts[min(expected)] if node else None
    out["expected_host"] = host
    rank_ok = bool(top) and (set(top["ranks"]) == expected or
                             bool(node and top["kind"] == "slow_node" and top["host"] == host))
    out["rank_ok"] = rank_ok
    patterns = truth.get("patterns")
    with_stack = truth.get("with_stack", True)
    out["function_ok"] = bool(top) and rank_ok and bool(function_matches(truth["kind"], top["function"], top["phase"],
                                                                         patterns, with_stack))
    out["table_ok"] = in_tables(cluster, expected, truth["kind"], patterns, with_stack)
    if clean_step_ns and step_ns:
        out["measured_saving_ns"] = (step_ns_measured or step_ns) - clean_step_ns
        out["estimated_saving_ns"] = top["cost_ns"] if top and rank_ok else 0
        out["costed"] = bool(top and rank_ok and top["costed"])
    return out


def short(fn):
    if fn is None:
        return "-"
    kind, name, detail = fn
    name = name.rsplit("|", 1)[-1]
    name = re.sub(r"\s+", " ", name)
    if len(name) > 40:
        name = name[:37] + "..."
    return f"{kind}:{name}" + (f" {detail}" if detail and kind == "kernel" else "")
