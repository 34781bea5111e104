"""The auto-trigger (python/rankscope/_trigger.py) on real step times, exactly.

tests/data/trigger/*.txt are step times (seconds, one per line, '#' comments say where they come
from) recorded by workloads/train_loop.py with an idle Tracker: healthy CPU jobs on the loaded
2-core test machine and healthy H100 jobs of 1 and 4 ranks (bench/gpu/capture.sh). Replaying a
series through AutoTrigger is exactly what the Tracker does live, so these tests are exact:
  * a healthy run never fires (the trigger of the issue fired twice on a healthy H100 run);
  * the same run with every step from its middle on made 20 % slower fires, once, after the
    slowdown began;
  * a real run whose steps became 20 % slower (a sleep added to every step) fires after it began.
bench/trigger_bench.py prints the same as a table, with the detection delays.
"""

import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from rankscope._trigger import AutoTrigger  # noqa: E402

DATA = REPO / "tests" / "data" / "trigger"


def series(path):
    return [float(x) for x in path.read_text().split("\n") if x.strip() and not x.startswith("#")]


def header(path):
    return {k.strip(): v.strip() for line in path.read_text().splitlines() if line.startswith("#") and ":" in line
            for k, v in [line[1:].split(":", 1)]}


def fires(times):
    t = AutoTrigger(clock=lambda: 0.0)
    return [i for i, dt in enumerate(times) if t.observe(dt) is not None]


HEALTHY = sorted(p for p in DATA.glob("*.txt") if header(p).get("fault", "none") == "none")
SLOWED = sorted(p for p in DATA.glob("*.txt") if header(p).get("fault", "none") != "none")


def test_the_recordings_are_there():
    assert len(HEALTHY) >= 4 and any("cuda" in p.name for p in HEALTHY) and any("cpu" in p.name for p in HEALTHY)
    assert SLOWED


@pytest.mark.parametrize("path", HEALTHY, ids=lambda p: p.stem)
def test_a_healthy_run_never_fires(path):
    times = series(path)
    assert len(times) >= 250
    assert fires(times) == []


@pytest.mark.parametrize("path", HEALTHY, ids=lambda p: p.stem)
def test_a_sustained_20_percent_slowdown_fires_once_after_it_began(path):
    times = series(path)
    onset = len(times) // 2
    slowed = times[:onset] + [1.2 * dt for dt in times[onset:]]
    (fired,) = fires(slowed)
    assert onset < fired <= onset + 100


@pytest.mark.parametrize("path", SLOWED, ids=lambda p: p.stem)
def test_a_real_slowdown_fires_after_it_began(path):
    onset = int(header(path)["fault_from"])
    fired = fires(series(path))
    assert fired and onset < fired[0] <= onset + 100


def test_warm_up_bursts_and_noise_do_not_fire_a_shift_does():
    steady = [0.100, 0.104, 0.097, 0.101, 0.099, 0.103] * 30
    # The first steps are slow (compilation, autotuning): ignored.
    assert fires([1.0] * 30 + steady) == []
    # A burst of slow steps shorter than half the recent window (30): never, however slow.
    assert fires(steady[:120] + [0.5] * 14 + steady) == []
    # The same burst, long enough to be a median shift, fires.
    assert fires(steady[:120] + [0.5] * 16 + steady) != []
    # 10 % slower: within the factor (1.15), not a slowdown.
    assert fires(steady[:120] + [1.10 * x for x in steady]) == []


def test_on_a_noisy_job_a_shift_must_stand_out_from_the_noise():
    import random
    rng = random.Random(7)
    noisy = [0.1 * rng.lognormvariate(0, 0.5) for _ in range(400)]
    quiet = [0.1 * rng.lognormvariate(0, 0.01) for _ in range(400)]
    shift = 1.2
    # sigma 50 %: a 20 % median shift is within 3 standard errors of a median of 30 steps.
    assert fires(noisy[:200] + [shift * x for x in noisy[200:]]) == []
    assert fires(quiet[:200] + [shift * x for x in quiet[200:]]) != []


def test_a_gap_fires_and_the_cooldown_holds():
    now = {"t": 1000.0}
    t = AutoTrigger(gap_s=60, cooldown_s=600, clock=lambda: now["t"])
    assert t.observe(0.1) is None
    assert "gap of 1.5 min" in t.observe(90.0)
    assert t.observe(120.0) is None  # within the cooldown
    now["t"] += 601
    assert "gap of 2.0 min" in t.observe(120.0)
    assert t.fired == 2
