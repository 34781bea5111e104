"""The auto-trigger: decides, step by step, when the job has degraded enough to be worth a
trace. Pure Python without torch, so that it is cheap and tested on its own.

A healthy job's step time is noisy: the first steps compile, autotune and fill caches; later
ones jitter with the GPU clock, the garbage collector, other processes on the machine, and
bursts of a few slow steps (a checkpoint, a log flush, an evaluation batch). On the 2-core
machine the tests run on, a healthy CPU job's steps spread by 20 % around their median. A trace
costs the job seconds, so the trigger fires only on what a person would call a slowdown: the
typical step became slower, and stayed so.

  * Warm-up is ignored: the first `warmup` steps are not looked at.
  * The last `consecutive` steps are the recent window; the `window` steps before them are the
    baseline. Nothing fires until the baseline holds `min_samples` steps.
  * The baseline is robust: its median, and its spread (1.4826 x the median absolute
    deviation: the standard deviation of a normal distribution, which no outlier inflates).
  * The trigger fires when the median of the recent window exceeds the baseline median by
    more than all of: (`factor` - 1) x the baseline, `min_excess_s` (sub-millisecond jitter of
    tiny steps never counts), and `k` standard errors of a median of that many steps
    (k x 1.2533 x spread / sqrt(consecutive)): on a noisy job a shift must stand out from the
    noise. A median needs more than half of the window slow: a burst of slow steps shorter
    than half the window never fires, however slow, and one slow step never moves a median.
  * A single gap between two steps longer than `gap_s` (28 minutes by default: the job
    stalled) fires at once.
After firing the trigger stays quiet for `cooldown_s` and relearns from scratch, warm-up
included (the trace itself slows the steps it records).

Measured (bench/trigger_bench.py; tests/python/test_trigger.py replays the recorded runs):
zero fires on every recorded healthy run (CPU gloo jobs on the loaded 2-core machine, H100 jobs
of 1 and 4 ranks), and it fires on each of them once their steps are made 20 % slower.

Cost per step: a few comparisons; the exact median of the recent window is computed only when
more than half of it is above the cut, and the baseline every 16 steps (bench/step_overhead.py).
"""

import math
import time

__all__ = ["AutoTrigger"]

MAD_TO_SIGMA = 1.4826
MEDIAN_SE = 1.2533  # standard error of a median = 1.2533 sigma / sqrt(n) (normal data)


class AutoTrigger:
    __slots__ = ("factor", "consecutive", "window", "warmup", "min_samples", "k", "gap_s", "cooldown_s",
                 "min_excess_s", "_clock", "_seen", "_recent", "_recent_pos", "_recent_len", "_above",
                 "_ring", "_ring_pos", "_since_stats", "_baseline", "_spread", "_cut", "_quiet_until", "fired")

    def __init__(self, factor=1.15, consecutive=30, window=100, warmup=30, min_samples=30, k=3.0,
                 gap_s=28 * 60.0, cooldown_s=600.0, min_excess_s=0.001, clock=time.monotonic):
        if factor <= 1.0 or consecutive < 1 or window < 4 or min_samples < 4 or min_samples > window or k < 0:
            raise ValueError("factor must be > 1, consecutive >= 1, 4 <= min_samples <= window, k >= 0")
        self.factor = factor
        self.consecutive = consecutive
        self.window = window
        self.warmup = warmup
        self.min_samples = min_samples
        self.k = k
        self.gap_s = gap_s
        self.cooldown_s = cooldown_s
        self.min_excess_s = min_excess_s
        self._clock = clock
        self.fired = 0
        self._quiet_until = 0.0
        self._reset()

    def _reset(self):
        self._seen = 0
        self._recent = [0.0] * self.consecutive  # ring of the last `consecutive` steps
        self._recent_pos = 0
        self._recent_len = 0
        self._above = 0  # recent steps above the cut
        self._ring = []  # the baseline: steps that left the recent window
        self._ring_pos = 0
        self._since_stats = 0
        self._baseline = 0.0
        self._spread = 0.0
        self._cut = math.inf  # a recent step above this counts towards a shifted median

    @property
    def baseline(self):
        """Seconds per step the trigger considers normal (0 while it is still learning)."""
        return self._baseline if len(self._ring) >= self.min_samples else 0.0

    @property
    def threshold(self):
        """A recent median above this (seconds) fires (inf while the trigger is still learning)."""
        if len(self._ring) < self.min_samples:
            return math.inf
        return self._baseline + max((self.factor - 1.0) * self._baseline, self.min_excess_s,
                                    self.k * MEDIAN_SE * self._spread / math.sqrt(self.consecutive))

    def observe(self, dt):
        """Feeds one step time (seconds). Returns a reason string when the trigger fires."""
        self._seen += 1
        if dt > self.gap_s:
            return self._fire(f"a gap of {dt / 60:.1f} min between two steps (threshold {self.gap_s / 60:.0f} min)")
        if self._seen <= self.warmup:
            return None
        self._push(dt)
        if 2 * self._above <= self._recent_len or self._recent_len < self.consecutive:
            return None
        recent = sorted(self._recent)
        median = recent[len(recent) // 2]
        if median <= self.threshold:
            return None
        base = self._baseline
        return self._fire(f"the median step time of the last {self.consecutive} steps, {median * 1e3:.1f} ms, is "
                          f"{median / base:.2f}x its baseline of {base * 1e3:.1f} ms")

    def _push(self, dt):
        pos = self._recent_pos
        if self._recent_len == self.consecutive:
            old = self._recent[pos]
            if old > self._cut:
                self._above -= 1
            self._add_baseline(old)
        else:
            self._recent_len += 1
        self._recent[pos] = dt
        self._recent_pos = (pos + 1) % self.consecutive
        if dt > self._cut:
            self._above += 1

    def _add_baseline(self, dt):
        ring = self._ring
        if len(ring) < self.window:
            ring.append(dt)
        else:
            ring[self._ring_pos] = dt
            self._ring_pos = (self._ring_pos + 1) % self.window
        self._since_stats += 1
        # Median and MAD are recomputed every 16 steps (and while the ring fills): sorting 100
        # floats costs several microseconds, too much for every step.
        if self._since_stats >= 16 or len(ring) <= self.min_samples:
            self._since_stats = 0
            if len(ring) >= self.min_samples:
                s = sorted(ring)
                median = s[len(s) // 2]
                dev = sorted(abs(x - median) for x in s)
                self._baseline = median
                self._spread = MAD_TO_SIGMA * dev[len(dev) // 2]
                self._cut = self.threshold
                self._above = sum(1 for x in self._recent[:self._recent_len] if x > self._cut)

    def _fire(self, reason):
        now = self._clock()
        self._reset()
        if now < self._quiet_until:
            return None
        self._quiet_until = now + self.cooldown_s
        self.fired += 1
        return reason
