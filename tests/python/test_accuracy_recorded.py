"""The diagnosis on a small recorded fault matrix (issue 11: "Diagnosis you can trust").

tests/data/accuracy: one 4-rank DDP job (CPU, gloo, `--model mlp --device-ms 60`, 5 profiled
steps, `--with-stack`) recorded by workloads/ground_truth.py with one fault per scenario (truth.json;
magnitudes are shares of the profiled fault-free step) and two clean runs; hosts.txt puts ranks
0-1 on node-a and 2-3 on node-b. Every assertion is exact: the traces are fixed, so a verdict
never depends on how loaded the machine is. The slow node is two ranks of four — half the job —
which the per-rank rule cannot see (cluster/host_outliers.h).

Recorded with:
  OMP_NUM_THREADS=1 python3 -m torch.distributed.run --standalone --nproc_per_node=4 \
    workloads/ground_truth.py --out tests/data/accuracy --with-stack --steps 5 --device-ms 60 \
    --batch-size 4 --measure-steps 0 --model mlp --scenario clean-a:none:-:0 \
    --scenario forward:slow-forward:1:25% --scenario node:slow-forward:2,3:25% \
    --scenario host-sleep:host-sleep:3:25% --scenario backward:slow-backward:2:15% \
    --scenario optimizer:slow-optimizer:1:15% --scenario clean-b:none:-:0
"""

import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "accuracy"
MS = 1_000_000

# scenario -> (finding kind, ranks, host, the subject: a phase or the last frame of a Python path)
EXPECTED = {
    "forward": ("slow_rank", [1], None, "forward"),
    "node": ("slow_node", [2, 3], "node-b", "ground_truth.py(126): run"),
    "host-sleep": ("slow_rank", [3], None, "forward"),
    "backward": ("slow_rank", [2], None, "backward"),
    "optimizer": ("slow_rank", [1], None, "optimizer"),
}


def analyze(run_rankscope, scenario):
    out = run_rankscope("analyze", str(DATA / scenario), "--hosts", str(DATA / "hosts.txt"), "--json", "-").stdout
    report = json.loads(out)
    assert report["errors"] == [] and len(report["ranks"]) == 4
    return report


def subject_name(finding):
    s = finding["subject"]
    name = s.get("name", "") if isinstance(s, dict) else (s or "")
    return name.rsplit("|", 1)[-1]


def test_the_recording_is_what_the_test_says():
    truth = json.loads((DATA / "truth.json").read_text())
    assert truth["world_size"] == 4 and truth["profiled_steps"] == 5
    by_name = {s["name"]: s for s in truth["scenarios"]}
    assert set(by_name) == set(EXPECTED) | {"clean-a", "clean-b"}
    for name, (_, ranks, _, _) in EXPECTED.items():
        assert by_name[name]["ranks"] == ranks


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_each_fault_is_the_top_finding_with_its_rank_subject_and_a_cost(run_rankscope, scenario):
    kind, ranks, host, subject = EXPECTED[scenario]
    truth = {s["name"]: s for s in json.loads((DATA / "truth.json").read_text())["scenarios"]}[scenario]
    report = analyze(run_rankscope, scenario)
    top = report["findings"][0]
    assert (top["kind"], top["ranks"], subject_name(top)) == (kind, ranks, subject)
    if host:
        assert top["hosts"] == [host]
    # Every fault here costs step time (its peers wait at the all-reduce): a costed finding, its
    # saving within a factor of two of the injected time per step (the 4 ranks share 2 cores).
    cost = top["cost"]
    assert cost["method"] != "added_work" and cost["saving_ns"] > 0
    assert 0.5 * truth["ms"] * MS <= cost["saving_ns"] <= 2 * truth["ms"] * MS, (cost, truth["ms"])


def test_the_backward_hook_leads_its_ranks_finding(run_rankscope):
    """Rank 2's gradient hook runs matmuls inside autograd's AccumulateGrad, which grows by more
    than the hook (18.9 against 14.4 ms/step): the hook, work no peer does, is what the finding
    names first, not the op it runs in. Against its three peers rank 2 is a straggler (before,
    against all four ranks, it was only extra work)."""
    top = analyze(run_rankscope, "backward")["findings"][0]
    functions = [e["subject"] for e in top["evidence"] if e["kind"] == "function"]
    assert functions and functions[0].endswith("ground_truth.py(126): run"), functions
    (local,) = [e for e in top["evidence"] if e["kind"] == "local_time"]
    assert local["values"]["ranks_compared"] == 3 and local["values"]["peers"] == 1


def test_the_slow_node_is_found_against_the_other_host_step_by_step(run_rankscope):
    top = analyze(run_rankscope, "node")["findings"][0]
    (peers,) = [e for e in top["evidence"] if e["kind"] == "host_peers"]
    assert peers["detail"] == "node" and peers["host"] == "node-b"
    assert (peers["values"]["steps_exceeding"], peers["values"]["steps"]) == (4, 5)  # more than half
    (what_if,) = [e for e in top["evidence"] if e["kind"] == "what_if"]
    assert what_if["detail"] == "per_step"


def test_clean_runs(run_rankscope):
    assert analyze(run_rankscope, "clean-b")["findings"] == []
    # Known residual (docs/cluster.md, "Accuracy"): in clean-a rank 3's emulated-device sleep
    # overslept in forward in most steps; it is named as a small function-level finding, never
    # as a slow rank or node, and costs under 3 % of the step. Its 3 ms/step excess is costed step
    # by step (cluster/cost_model.h, CostSlowFunctionsByStep): rank 3 is the last to arrive in few
    # steps, so fixing it saves 1.2 ms/step, under the minimum cost: information, not a warning
    # (the median what-if had said 2.2 ms/step, a warning).
    report = analyze(run_rankscope, "clean-a")
    step = report["cluster"]["step_ns"]
    for f in report["findings"]:
        assert f["kind"] not in ("slow_rank", "slow_node")
        assert f["cost"]["saving_ns"] < 0.02 * step
        assert f["severity"] == "info"
        assert "per_step" in [e.get("detail") for e in f["evidence"] if e["kind"] == "what_if"]
