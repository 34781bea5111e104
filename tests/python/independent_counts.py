"""Counts of a Kineto trace computed the plain way (Python's json module), independently of
rankscope's C++ reader, for comparison with `rankscope info --json`."""

import collections
import gzip
import json
import re
from decimal import ROUND_HALF_UP, Decimal

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync"}
CPU_CATS = {"cpu_op", "Operator", "user_annotation", "python_function"}
COMM_KERNEL = re.compile(r"^(?:void )?(?:ncclDevKernel|ncclKernel|rcclKernel)_([A-Za-z0-9]+)")
COMM_ANNOTATION = re.compile(r"^(?:nccl|gloo|rccl|hccl|mpi|ucc):(.+)$")
RANK_IN_NAME = re.compile(r"rank[-_]?(\d{1,9})(?!\d)", re.IGNORECASE)
CANONICAL = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
             "alltoall": "all_to_all", "sendrecv": "send_recv"}


def canonical(name):
    s = name.lower().lstrip("_")
    for suffix in ("_base", "_coalesced"):
        if s.endswith(suffix):
            s = s[: -len(suffix)]
    return CANONICAL.get(s.replace("_", ""), s)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def to_ns(us):
    return int((Decimal(us) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def counts(path):
    doc = load(path)
    events = doc["traceEvents"]
    base = int(doc.get("baseTimeNanoseconds", 0))
    out = {"elements": len(events)}
    out["by_phase"] = dict(collections.Counter(e["ph"] for e in events))
    out["by_category"] = dict(collections.Counter(e.get("cat", "(none)") for e in events))
    complete = [e for e in events if e["ph"] == "X"]
    if complete:
        out["start_ns"] = base + min(to_ns(e["ts"]) for e in complete)
        out["end_ns"] = base + max(to_ns(e["ts"]) + to_ns(e["dur"]) for e in complete)
    steps = set()
    for e in complete:
        m = re.fullmatch(r"ProfilerStep#(\d+)", e["name"])
        if m and e.get("cat") != "gpu_user_annotation":
            steps.add(int(m.group(1)))
    out["steps"] = len(steps)
    kernels = [e for e in complete if e.get("cat") in ("kernel", "Kernel")]
    out["kernels"] = len(kernels)
    out["distinct_kernels"] = len({e["name"] for e in kernels})
    colls = collections.defaultdict(lambda: {"kernels": 0, "cpu_ops": 0, "annotations": 0})
    for e in kernels:
        m = COMM_KERNEL.match(e["name"])
        if m:
            colls[canonical(m.group(1))]["kernels"] += 1
    for e in complete:
        if e.get("cat") in CPU_CATS:
            m = COMM_ANNOTATION.match(e["name"])
            if m:
                colls[canonical(m.group(1))]["annotations"] += 1
        if e.get("cat") not in GPU_CATS and "Collective name" in e.get("args", {}):
            colls[canonical(e["args"]["Collective name"])]["cpu_ops"] += 1
    out["collectives"] = {k: dict(v) for k, v in colls.items()}
    launches = {e["args"]["correlation"] for e in complete
                if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    gpu = [e for e in complete if e.get("cat") in GPU_CATS]
    out["gpu_activities"] = len(gpu)
    out["linked_to_launch"] = sum(1 for e in gpu if e.get("args", {}).get("correlation") in launches)
    dist = doc.get("distributedInfo", {})
    out["rank"] = dist.get("rank")
    if out["rank"] is None:
        m = RANK_IN_NAME.search(path.rsplit("/", 1)[-1])
        out["rank"] = int(m.group(1)) if m else 0
    out["world_size"] = dist.get("world_size")
    out["backend"] = dist.get("backend", "")
    out["devices"] = len(doc.get("deviceProperties", []))
    return out
