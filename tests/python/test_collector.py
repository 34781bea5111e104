"""The Python collector on its own: the Tracker's safety (never raises, no I/O while idle, refuses
paths outside the daemon's directory), and a local automatic trace with real torch.profiler in
one process. The auto-trigger's rules are tested in test_trigger.py."""

import gzip
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def test_importing_rankscope_does_not_import_torch():
    code = "import sys, rankscope; rankscope.Tracker; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO / "python")), check=True)
    assert out.stdout.strip() == "False"


def test_tracker_without_daemon_is_inert_and_safe(tmp_path):
    from rankscope.tracker import Tracker

    t = Tracker(out_dir=tmp_path / "out", daemon="@rankscope-test-nobody", auto_trigger=False)
    for _ in range(1000):
        t.step()
    assert t.steps == 1000 and not t.connected
    assert not (tmp_path / "out").exists()  # idle: nothing written
    # Requests are only accepted inside the directory the daemon announced.
    t._channel.daemon_out_dir = str(tmp_path / "daemon")
    ok = {"op": "trace", "id": "x1", "dir": str(tmp_path / "daemon" / "j" / "x1"), "file": "rank0.pt.trace.json.gz"}
    assert t._valid_request(ok)
    for bad in ({"dir": "/etc"}, {"dir": str(tmp_path / "daemon" / ".." / "x")}, {"file": "../x.pt.trace.json.gz"},
                {"file": "rank0.json"}, {"id": "../x"}):
        assert not t._valid_request(dict(ok, **bad)), bad
    # A broken internal state disables the collector instead of raising into the loop.
    t._trigger = "not a trigger"
    t._steps = 5
    t.step()
    t.step()
    t.close()


def test_local_auto_trace_with_real_profiler(tmp_path):
    # One process, no daemon: the slowdown triggers a trace of this process into out_dir.
    code = f"""
import time, torch
from rankscope import Tracker
m = torch.nn.Linear(32, 32); opt = torch.optim.SGD(m.parameters(), lr=0.1)
t = Tracker(out_dir={str(tmp_path / 'out')!r}, daemon='@rankscope-test-nobody', slow_steps=3, slow_seconds=0.5, auto_steps=2)
for i in range(150):
    m(torch.randn(8, 32)).sum().backward(); opt.step(); opt.zero_grad()
    time.sleep(0.002 if i < 80 else 0.02)
    t.step()
t.wait_for_writes(); print(t.last_trace_dir)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO / "python"), OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr
    trace_dir = pathlib.Path(out.stdout.strip().splitlines()[-1])
    assert trace_dir.parent.parent == tmp_path / "out" and trace_dir.name.startswith("auto-step")
    (trace,) = trace_dir.glob("pid*.pt.trace.json.gz")
    doc = json.loads(gzip.open(trace).read())
    steps = sorted(e["name"] for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
    start = int(trace_dir.name[len("auto-step"):])
    assert steps == [f"ProfilerStep#{start}", f"ProfilerStep#{start + 1}"]
    assert "auto-trigger" in out.stderr
    assert not [p for p in trace_dir.iterdir() if p.name.startswith(".")]  # no partial files left
